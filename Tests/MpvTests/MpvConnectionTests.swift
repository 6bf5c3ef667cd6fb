import Foundation
import Synchronization
import Testing
import TandemTestKit
import TandemMpv

/// mpv's JSON IPC, on a real headless mpv: commands, replies, observed properties, errors.
@Suite(.serialized, .timeLimit(.minutes(1))) struct MpvConnectionProcessTests {
    /// Runs `body` with a paused headless mpv on `file` and a connection to it; always stops mpv.
    func withMpv(_ file: String, _ body: (MpvProcess, MpvConnection) async throws -> Void) async throws {
        let process = try MpvProcess(file: file, ipcPath: MpvFixture.socketPath(), extraArguments: ["--vo=null", "--ao=null"])
        do {
            let connection = try await MpvConnection.connect(path: process.ipcPath, timeout: .seconds(10)) { process.isRunning }
            defer { connection.close() }
            try await body(process, connection)
        } catch {
            await process.terminate()
            throw error
        }
        await process.terminate()
        #expect(!process.isRunning)
    }

    @Test func observesPropertiesAndCarriesOutPauseSpeedAndSeek() async throws {
        try await withMpv(try MpvFixture.longClip()) { _, mpv in
            let seen = EventLog(mpv.events)
            defer { seen.stop() }
            try await mpv.observe("pause")
            try await mpv.observe("speed")
            try await mpv.observe("seeking")
            #expect(await mpv.awaitProperty("time-pos") { $0.double != nil })
            let paused = try await mpv.get("pause")
            #expect(paused == .bool(true))

            try await mpv.set("speed", 1.5)
            try await mpv.set("pause", false)
            #expect(await seen.awaitLog { $0.properties.contains("pause=false") })
            let speed = try await mpv.get("speed")
            #expect(speed.double == 1.5)
            let reply = try await mpv.command(["seek", 10, "absolute", "exact"])
            #expect(reply.sentAt <= reply.receivedAt)
            // Settled once it is past the target and no longer seeking: `seeking` alone reads false
            // in the moment before mpv begins the seek (one fresh-clone run read 0.07 s here).
            #expect(await mpv.awaitProperty("time-pos") { ($0.double ?? 0) >= 10 })
            #expect(await mpv.awaitProperty("seeking") { $0.bool == false })
            try await mpv.set("pause", true)
            let position = try #require(try await mpv.get("time-pos").double)
            #expect(position >= 10 && position < 10.5, "landed at \(position)")

            // Every change was announced, in order: resumed, faster, paused again.
            #expect(await seen.awaitLog(within: 5) { log in
                let properties = log.properties
                guard let resumed = properties.firstIndex(of: "pause=false"), properties.contains("speed=1.5") else { return false }
                return properties[resumed...].contains("pause=true")
            }, "\(seen.properties)")
            #expect(seen.names.contains("seek") && seen.names.contains("playback-restart"))
        }
    }

    @Test func refusedCommandsSayWhyAndLeaveTheConnectionWorking() async throws {
        try await withMpv(SampleClip.h264BFrames.path) { _, mpv in
            await #expect { try await mpv.command(["no-such-command"]) } throws: { error in
                (error as? MpvError)?.isRefusal == true && "\(error)".contains("no-such-command")
            }
            await #expect { try await mpv.get("no-such-property") } throws: { error in
                "\(error)".contains("property not found")
            }
            await #expect { try await mpv.set("speed", "fast") } throws: { ($0 as? MpvError)?.isRefusal == true }
            let paused = try await mpv.get("pause")
            #expect(paused == .bool(true))
        }
    }

    @Test func twoConnectionsSeeTheSameMpv() async throws {
        try await withMpv(SampleClip.h264BFrames.path) { process, first in
            let second = try MpvConnection(path: process.ipcPath)
            defer { second.close() }
            let seen = EventLog(first.events)
            defer { seen.stop() }
            try await first.observe("pause")
            try await second.set("pause", false)
            #expect(await seen.awaitLog(within: 5) { $0.properties.contains("pause=false") }, "\(seen.properties)")
        }
    }

    @Test func connectingWhereNobodyListensFailsClearly() async throws {
        #expect { try MpvConnection(path: MpvFixture.socketPath()) } throws: { error in
            "\(error)".contains("cannot reach mpv's IPC socket")
        }
    }

    @Test func aClosedConnectionFailsCommandsAndEndsEvents() async throws {
        try await withMpv(SampleClip.h264BFrames.path) { process, _ in
            let mpv = try MpvConnection(path: process.ipcPath)
            let events = mpv.events
            mpv.close()
            #expect(mpv.isClosed)
            await #expect { try await mpv.get("pause") } throws: { ($0 as? MpvError)?.isDisconnection == true }
            let ended = EventLog(events)
            #expect(await ended.awaitLog(within: 5) { $0.finished })
        }
    }

    @Test func mpvThatCannotOpenTheFileFailsToLaunchWithItsOwnWords() async throws {
        var options = MpvFixture.headless()
        options.startTimeout = .seconds(5)
        await #expect { try await MpvPlayer.launch(file: "/nonexistent/film.mp4", options: options) } throws: { error in
            "\(error)".contains("cannot run mpv")
        }
    }
}

/// Collects a connection's events on a task of its own, so that tests wait for them with a
/// deadline instead of awaiting a stream that might stay silent.
final class EventLog: @unchecked Sendable {
    /// What the log holds at one moment.
    struct Snapshot: Sendable {
        /// Every event so far, in order.
        var events: [MpvEvent] = []
        /// Whether the stream has finished.
        var finished = false

        /// Property changes so far, as `name=value`.
        var properties: [String] {
            events.compactMap { event in
                guard let name = event.propertyName else { return nil }
                let value = event.propertyValue
                return "\(name)=\(value.bool.map { "\($0)" } ?? value.double.map { "\($0)" } ?? "null")"
            }
        }
    }

    private let state = Mutex<(snapshot: Snapshot, watchers: [Int: AsyncStream<Snapshot>.Continuation], nextWatcher: Int)>((Snapshot(), [:], 0))
    private var task: Task<Void, Never>?

    init(_ events: AsyncStream<MpvEvent>) {
        task = Task { [self] in
            for await event in events { update { $0.events.append(event) } }
            update { $0.finished = true }
        }
    }

    /// Changes the snapshot and hands the new one to every watcher, after the lock.
    private func update(_ change: (inout Snapshot) -> Void) {
        let (snapshot, watchers) = state.withLock { state in
            change(&state.snapshot)
            return (state.snapshot, Array(state.watchers.values))
        }
        for watcher in watchers { watcher.yield(snapshot) }
    }

    /// Waits until the log satisfies `predicate` (as it is now included), for at most `seconds`,
    /// following each event as it is logged; true when it did.
    func awaitLog(within seconds: Double = 10, _ predicate: @escaping @Sendable (Snapshot) -> Bool) async -> Bool {
        let (stream, continuation) = AsyncStream.makeStream(of: Snapshot.self, bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state in
            defer { state.nextWatcher += 1 }
            state.watchers[state.nextWatcher] = continuation
            continuation.yield(state.snapshot)
            return state.nextWatcher
        }
        defer { _ = state.withLock { $0.watchers.removeValue(forKey: id) } }
        return await awaitValue(stream, within: seconds, predicate)
    }

    /// Property changes so far, as `name=value`.
    var properties: [String] { state.withLock { $0.snapshot }.properties }

    /// Every event's name so far.
    var names: [String] { state.withLock { $0.snapshot.events.map(\.name) } }

    /// Whether the stream has finished.
    var finished: Bool { state.withLock { $0.snapshot.finished } }

    /// Stops collecting.
    func stop() { task?.cancel() }
}
