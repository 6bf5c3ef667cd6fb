#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Tandem
import TandemMedia
import TandemPlayback

/// Watches a joined session with the built-in player (or mpv, `WatchRunner+Mpv.swift`): follows the shared timeline, reports what
/// happens, and takes commands a line at a time from standard input (`play`, `pause`,
/// `seek SECONDS`, `rate R`, `wait SECONDS`, `leave`, `end`).
struct WatchRunner {
    let session: GroupSession<WatchTogether>
    let file: String
    let options: WatchOptions
    let isHost: Bool

    func run() async throws -> Int32 {
        if options.player == .mpv { return try await runWithMpv() }
        var sinks: [any VideoSink] = []
        let log = try options.presentationLog.map { path throws(MediaError) in try PresentationLog(path: path) }
        if let log { sinks.append(log) }
        let renderer = options.terminalVideo ? TerminalRenderer() : nil
        if let renderer { sinks.append(renderer) }
        var playerOptions = HeadlessPlayer.Options()
        playerOptions.itemIdentifier = session.activity.item
        let player = try HeadlessPlayer(url: file, options: playerOptions, videoSinks: sinks)
        let coordinator = player.playbackCoordinator
        let events = EventPrinter(json: options.jsonEvents)
        events.emit("joined", ["session": session.id.uuidString, "participant": session.localParticipant.displayName,
                               "item": session.activity.item])
        let eventTask = Task { for await event in coordinator.events { events.report(event, session: session) } }
        let participantTask = Task { await events.followParticipants(session) }
        coordinator.coordinateWithSession(session)
        let identity = try? MediaIdentity.of(file: file)
        try? coordinator.reportItem(session.activity.item, identity: identity, ready: true)
        if isHost {
            try? coordinator.transitionToItem(identifier: session.activity.item)
        }
        let script = Task { try await runScript(coordinator: coordinator, events: events) }
        // Until the session is over for this participant.
        for await state in session.$state.values {
            if case .invalidated(let reason) = state {
                events.emit("left", ["reason": reason.detail])
                break
            }
        }
        script.cancel()
        eventTask.cancel()
        participantTask.cancel()
        let statistics = player.statistics
        player.close()
        renderer?.stop()
        log?.close()
        events.emit("statistics", ["presented": statistics.presentedFrames, "dropped": statistics.droppedLateFrames,
                                   "stills": statistics.stillFrames])
        return 0
    }

    func runScript(coordinator: PlaybackCoordinator, events: EventPrinter) async throws {
        let lines = StandardInputLines()
        while let line = await lines.next() {
            let words = line.split(separator: " ").map(String.init)
            guard let verb = words.first else { continue }
            do {
                switch verb {
                case "play": try coordinator.coordinateRateChange(to: coordinator.core.intendedRate > 0 ? coordinator.core.intendedRate : 1)
                case "pause": try coordinator.coordinateRateChange(to: 0)
                case "seek": try coordinator.coordinateSeek(to: nanoseconds(try argument(words)))
                case "rate": try coordinator.coordinateRateChange(to: try argument(words))
                case "wait": try await Task.sleep(for: .seconds(try argument(words)))
                case "leave": session.leave()
                case "end": session.end()
                default: events.emit("error", ["message": "unknown command '\(verb)' (play, pause, seek S, rate R, wait S, leave, end)"])
                }
            } catch {
                events.emit("error", ["message": "\(line): \(error)"])
            }
        }
    }

    private func argument(_ words: [String]) throws -> Double {
        guard words.count == 2, let value = Double(words[1]), value.isFinite, value >= 0 else {
            throw CLIError.usage("'\(words.joined(separator: " "))' wants one number")
        }
        return value
    }

    private func nanoseconds(_ seconds: Double) -> Int64 { Int64((seconds * 1e9).rounded()) }
}

/// Standard input, a line at a time, read on a thread of its own.
final class StandardInputLines: @unchecked Sendable {
    private let stream: AsyncStream<String>
    private var iterator: AsyncStream<String>.Iterator

    init() {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        self.stream = stream
        iterator = stream.makeAsyncIterator()
        Thread.detachNewThread {
            while let line = readLine() { continuation.yield(line.trimmingCharacters(in: .whitespaces)) }
            continuation.finish()
        }
    }

    func next() async -> String? { await iterator.next() }
}
