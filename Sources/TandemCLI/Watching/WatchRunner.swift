#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Tandem
import TandemParty
import TandemClock
import TandemMedia
import TandemPlayback
import TandemIdentity

/// Watches a joined session with the built-in player (or mpv: `WatchRunner+Mpv.swift`): follows
/// the shared timeline, reports what happens, and takes keys at a terminal or commands a line at
/// a time from standard input (`play`, `pause`, `seek SECONDS`, `rate R`, `stall SECONDS [nowait]`,
/// `wait SECONDS`, `leave`, `end`).
///
/// Seeks are clamped to the item (0 to its duration, as the group's validation knows it), by the
/// arrow keys and by `seek` alike; any other bad value (`rate 1e15`, `rate nan`, a negative or
/// out-of-range rate, seconds that are not a finite number) is refused with one line on
/// standard error (an `error` event with `--events json`), and the process carries on.
///
/// `stall` is the built-in player's, for benchmarks: the player freezes where it is and this
/// participant begins a `.stallRecovery` suspension (one the group waits for, or with `nowait`
/// one it does not), ended SECONDS later; events `stall` (`seconds`, `waits`) and `stall-ended`.
struct WatchRunner {
    let session: GroupSession<WatchTogether>
    /// The first file of the command line ("" for a joiner that gave none and streams); for mpv,
    /// the URL it opens when the item is a URL or streamed (`WatchRunner+Streaming.swift`).
    var file: String
    var options: WatchOptions
    let isHost: Bool
    /// Every file of the command line, the first `file` (`WatchRunner+Queue.swift`); empty: `file` alone.
    var media: [String] = []
    /// Whether this participant ended the session itself (its own `end` is no error).
    let endedHere = SharedFlag()

    func run() async throws -> Int32 {
        // Issue 15 (party): SIGINT, SIGTERM and SIGHUP leave as `q` does (`ExitSignals`).
        let exitSignals = ExitSignals { [session] _ in session.leave() }
        defer { exitSignals.cancel() }
        // Issue 15 item 4: this participant's files served to those without them; the group's
        // item streamed when this participant's media does not hold it.
        let streaming = startStreaming()
        defer { streaming.close() }
        let events = EventPrinter(json: options.jsonEvents)
        if options.player == .mpv {
            return try await runMpv(streaming: streaming, events: events)
        }
        let opened: OpenedItem
        do {
            opened = try await openedItem(streaming: streaming, events: events)
        } catch {
            session.leave()
            await session.departureDelivered()
            throw error
        }
        var sinks: [any VideoSink] = []
        let log = try options.presentationLog.map { path throws(MediaError) in try PresentationLog(path: path) }
        if let log { sinks.append(log) }
        let renderer = options.terminalVideo ? TerminalRenderer() : nil
        if let renderer { sinks.append(renderer) }
        var playerOptions = HeadlessPlayer.Options()
        playerOptions.itemIdentifier = session.activity.item
        playerOptions.following = options.follow
        playerOptions.decodeThrottle = options.decodeThrottle
        playerOptions.latencyOffset = Int64(options.latencyOffset) * 1_000_000
        let player = try HeadlessPlayer(item: opened.item, options: playerOptions, videoSinks: sinks)
        let latency = LatencyControl(milliseconds: options.latencyOffset) { player.latencyOffset = Int64($0) * 1_000_000 }
        let coordinator = player.playbackCoordinator
        reportStalls(of: player, events: events)
        if opened.streamed == nil { emitJoined(events) }
        followStreaming(streaming, coordinator: coordinator, events: events)
        let eventTask = Task { for await event in coordinator.events { events.report(event, session: session) } }
        let participantTask = Task { await events.followParticipants(session) }
        let chatTask = followChat(events: events)
        defer { chatTask.cancel() }
        coordinator.coordinateWithSession(session)
        // This player opened it: it announces the duration it read.
        let identity = opened.identity.map { ContentIdentity.announcing(duration: player.info.duration, $0) }
        // A queue of files: the host appends them all (the first becomes the group's item) before
        // it reports, so that the report finds the queue chosen. One file: the first report
        // chooses the group's item (a session's queue starts empty), so nobody transitions.
        if isHost && watchedMedia.count > 1 { appendMedia(to: coordinator, events: events) }
        try? coordinator.reportItem(session.activity.item, identity: reportsIdentityLate ? nil : identity, ready: true)
        let queueTask = followQueue(player: player, coordinator: coordinator, events: events,
                                    streamed: options.refusesStreaming ? nil : StreamedEntries(streaming: streaming))
        defer { queueTask.cancel() }
        let keys = TerminalKeys()
        if keys != nil { StatusArea.shared.activate() }
        let script = Task {
            if let keys {
                await runKeys(keys, coordinator: coordinator, events: events,
                              duration: player.info.duration.map { MediaTime.nanoseconds(seconds: $0) }, latency: latency)
            } else {
                try await runScript(coordinator: coordinator, events: events, latency: latency, player: player)
            }
        }
        let status = Task {
            await showStatus(player: player, coordinator: coordinator, renderer: renderer, interactive: keys != nil, latency: latency)
        }
        let ending = await untilOver(events: events)
        script.cancel()
        status.cancel()
        StatusArea.shared.deactivate()
        keys?.restore()
        eventTask.cancel()
        participantTask.cancel()
        let statistics = player.statistics
        // A decoder waiting for streamed bytes (no holder left) is let go before the player closes.
        streaming.close()
        player.close()
        renderer?.stop()
        log?.close()
        events.emit(.statistics(.init(presented: statistics.presentedFrames, dropped: statistics.droppedLateFrames, stills: statistics.stillFrames)))
        // Leaving or ending is heard from the relay, not from this process going away.
        await session.departureDelivered()
        return WatchRunner.exitStatus(for: ending, endedHere: endedHere.isSet)
    }

    /// The `joined` event; `streamedAt`, for a streamed item, the raw monotonic instant its stream begins opening.
    func emitJoined(_ events: EventPrinter, streamedAt: Int64? = nil) {
        events.emit(.joined(.init(session: session.id.uuidString, participant: session.localParticipant.displayName,
                                  item: session.activity.item, streamed: streamedAt.map { _ in true }, monotonicNanoseconds: streamedAt)))
    }

    /// Waits until the session is over for this participant, reports that it left and why, and
    /// returns the reason.
    func untilOver(events: EventPrinter) async -> GroupSessionError? {
        for await state in session.$state.values {
            if case .invalidated(let reason) = state {
                events.emit(.left(.init(reason: reason.detail)))
                return reason
            }
        }
        return nil
    }

    /// 0 when this participant left or ended the session itself; otherwise one clear line on
    /// standard error and a non-zero status: 3 when someone else ended it, 1 when it was lost.
    static func exitStatus(for ending: GroupSessionError?, endedHere: Bool) -> Int32 {
        guard let ending else { return 0 }
        switch ending.code {
        case .left: return 0
        case .ended where endedHere: return 0
        case .ended:
            printError("tandem: \(ending.detail)")
            return 3
        default:
            printError("tandem: \(ending.detail)")
            return 1
        }
    }

    /// Runs the commands on standard input, a line at a time; `player` is the built-in player
    /// (nil for mpv), which `stall` needs.
    func runScript(coordinator: PlaybackCoordinator, events: EventPrinter, latency: LatencyControl,
                   player: HeadlessPlayer? = nil) async throws {
        let lines = StandardInputLines()
        while let raw = await lines.next() {
            // `say` takes the rest of the line as it was typed; the other commands, its words.
            if let text = Self.sayText(raw) {
                say(text, events: events)
                continue
            }
            let line = raw.trimmingCharacters(in: .whitespaces)
            let words = line.split(separator: " ").map(String.init)
            guard let verb = words.first else { continue }
            do {
                switch verb {
                case "play": try coordinator.coordinateRateChange(to: coordinator.core.intendedRate > 0 ? coordinator.core.intendedRate : 1)
                case "pause": try coordinator.coordinateRateChange(to: 0)
                case "seek": try coordinator.coordinateSeek(to: seekTarget(seconds: try number(words), coordinator: coordinator))
                // The coordinator refuses what every participant would skip, saying why.
                case "rate": try coordinator.coordinateRateChange(to: try number(words))
                case "stall":
                    let (seconds, waits) = try stallArguments(words)
                    guard let player else {
                        refuse("stall is the built-in player's (--player builtin)", events: events)
                        continue
                    }
                    stall(player: player, coordinator: coordinator, seconds: seconds, waits: waits, events: events)
                case "throttle": try throttle(player: player, words: words, events: events)
                case "next", "prev", "queue": _ = try runQueueCommand(words, coordinator: coordinator)
                case "offset": reportOffset(latency.set(try offsetArgument(words)), events: events)
                case "wait": try await Task.sleep(for: .seconds(try seconds(words)))
                case "leave": session.leave()
                case "end":
                    endedHere.set()
                    session.end()
                default: refuse("unknown command '\(verb)' (play, pause, seek S, rate R, next, prev, queue add PATH, say TEXT, offset MS, stall S [nowait], wait S, leave, end)", events: events)
                }
            } catch {
                refuse("\(line): \(error)", events: events)
            }
        }
    }

    /// Freezes the player where it is and suspends this participant for `.stallRecovery`, as a
    /// player that ran out of data would; the suspension ends `seconds` later, without holding
    /// up the commands after this one. With `waits` false the suspension does not make the group
    /// wait: the others play on, and this player catches up when it ends.
    private func stall(player: HeadlessPlayer, coordinator: PlaybackCoordinator, seconds: Double, waits: Bool,
                       events: EventPrinter) {
        let suspension: PlaybackSuspension
        if waits {
            suspension = coordinator.beginSuspension(for: .stallRecovery)
        } else {
            let reasons = coordinator.suspensionReasonsThatTriggerWaiting
            coordinator.suspensionReasonsThatTriggerWaiting.remove(.stallRecovery)
            suspension = coordinator.beginSuspension(for: .stallRecovery)
            coordinator.suspensionReasonsThatTriggerWaiting = reasons
        }
        // Suspended first, so that no command of the group's unfreezes the player.
        let now = MonotonicClock.now()
        try? player.setTimeline(.paused(at: player.mediaTime(atLocalTime: now), from: now))
        events.emit(.stall(.init(seconds: seconds, waits: waits)))
        Task {
            try? await Task.sleep(for: .seconds(seconds))
            // Reported before the suspension ends, so that `stall-ended` always comes before the
            // `resumed` it leads to (the relay may order the end and bring it back before this
            // task runs again); nothing is reported after the session is over for this participant.
            var over = false
            if case .invalidated = session.state { over = true }
            if !over { events.emit(.stallEnded(.init(seconds: seconds, waits: waits))) }
            suspension.end()
        }
    }

    /// `stall SECONDS [nowait]`: the seconds, and whether the group waits.
    private func stallArguments(_ words: [String]) throws -> (seconds: Double, waits: Bool) {
        guard words.count == 2 || (words.count == 3 && words[2] == "nowait"),
              let seconds = Double(words[1]), (0...Self.longestWait).contains(seconds) else {
            throw CLIError.usage("'\(words.joined(separator: " "))' wants a number of seconds, then optionally nowait")
        }
        return (seconds, words.count == 2)
    }

    /// At a terminal: space plays or pauses, left and right seek 5 s (shift: 30 s), `[` and `]`
    /// change the rate by 0.1, `0` resets it, `-` and `=` the latency offset by 10 ms, `n` and `p`
    /// move through the queue, Enter opens the chat prompt, `q` leaves, `e` ends the session for
    /// everyone.
    private func runKeys(_ keys: TerminalKeys, coordinator: PlaybackCoordinator, events: EventPrinter, duration: Int64?,
                         latency: LatencyControl) async {
        for await key in keys.keys {
            let timeline = coordinator.core.timeline
            let now = coordinator.localClock.map { LocalInstant(nanoseconds: $0.now()) }
            let position = (coordinator.expectedItemTime(atLocalTime: now) ?? timeline.anchorMediaTime).nanoseconds
            let rate = coordinator.core.intendedRate
            func by(_ step: Int64) -> ItemTime { ItemTime(nanoseconds: clamped(position.saturatingAdding(step), duration, coordinator: coordinator)) }
            do {
                switch key {
                case .space: try coordinator.coordinateRateChange(to: rate > 0 ? 0 : 1)
                case .left: try coordinator.coordinateSeek(to: by(-5_000_000_000))
                case .right: try coordinator.coordinateSeek(to: by(5_000_000_000))
                case .shiftLeft: try coordinator.coordinateSeek(to: by(-30_000_000_000))
                case .shiftRight: try coordinator.coordinateSeek(to: by(30_000_000_000))
                case .slower: try coordinator.coordinateRateChange(to: (max(0.25, (rate > 0 ? rate : 1) - 0.1) * 10).rounded() / 10)
                case .faster: try coordinator.coordinateRateChange(to: (min(4, (rate > 0 ? rate : 1) + 0.1) * 10).rounded() / 10)
                case .resetRate: try coordinator.coordinateRateChange(to: 1)
                case .next: try coordinator.advanceToNextItem()
                case .previous: try coordinator.returnToPreviousItem()
                case .quit: session.leave()
                case .end:
                    endedHere.set()
                    session.end()
                case .openPrompt: StatusArea.shared.setPrompt("")
                case .prompt(let text): StatusArea.shared.setPrompt(text)
                case .cancelPrompt: StatusArea.shared.setPrompt(nil)
                case .say(let text):
                    StatusArea.shared.setPrompt(nil)
                    say(text, events: events)
                case .offsetDown: reportOffset(latency.move(by: -LatencyControl.step), events: events)
                case .offsetUp: reportOffset(latency.move(by: LatencyControl.step), events: events)
                }
            } catch {
                refuse("\(error)", events: events)
            }
        }
    }

    /// Keeps the status line current: under the picture, or on the last line of the terminal.
    private func showStatus(player: HeadlessPlayer, coordinator: PlaybackCoordinator, renderer: TerminalRenderer?,
                            interactive: Bool, latency: LatencyControl) async {
        let lastChange = Mutex("")
        let changes = Task {
            for await event in coordinator.events {
                if case .timelineChanged(_, let originator, let proposal) = event {
                    // The signer, named as the status line names everyone (a fingerprint when
                    // two share a name), even after it left; its name is the peer's choice.
                    let active = session.activeParticipants
                    let name = (active.first { $0.id == originator } ?? session.participant(identifiedBy: originator))
                        .map { TerminalText.sanitized($0.name(among: active)) } ?? "someone"
                    lastChange.withLock { $0 = "\(name): \(WatchPartyEvent.describe(proposal))" }
                }
            }
        }
        defer { changes.cancel() }
        var ticks = 0
        while !Task.isCancelled {
            ticks += 1
            if options.jsonEvents && ticks % 20 == 0 { reportSync(player: player, coordinator: coordinator) }
            let line = [StatusLine.text(player: player, coordinator: coordinator, session: session, lastChange: lastChange.withLock { $0 }),
                        Self.queuePosition(coordinator.core), latency.statusText].compactMap { $0 }.joined(separator: "  ")
            if let renderer {
                // Under the picture: the prompt, while one is open, in the status line's place.
                renderer.statusLine = StatusArea.shared.prompt.map { "say: " + TerminalText.sanitized($0) + "▏" } ?? line
            } else if interactive {
                StatusArea.shared.setStatus(line)
            }
            try? await Task.sleep(for: .milliseconds(250))
        }
    }

    /// Every five seconds, a `sync` event: the clock's offset and error bound, and how far the
    /// player's own timeline is from the shared one.
    private func reportSync(player: HeadlessPlayer, coordinator: PlaybackCoordinator) {
        guard let clock = coordinator.localClock else { return }
        let local = LocalInstant(nanoseconds: clock.now())
        guard let status = coordinator.clockStatus(atLocalTime: local) else { return }
        let error = coordinator.expectedItemTime(atLocalTime: local).map { expected in
            player.mediaTime(atLocalTime: clock.monotonicTime(atLocal: local.nanoseconds)).saturatingSubtracting(expected.nanoseconds)
        }
        let statistics = player.statistics
        EventPrinter(json: options.jsonEvents).emit(.sync(.init(clockOffsetNanoseconds: status.offset.nanoseconds,
                                                                clockErrorBoundNanoseconds: status.errorBound.nanoseconds,
                                                                version: Int(clamping: coordinator.core.timeline.version), syncErrorNanoseconds: error,
                                                                presented: statistics.presentedFrames, dropped: statistics.droppedLateFrames)))
    }

    /// A seek target within the item: not before its start, nor past its end (the player's
    /// duration, when it knows one, and the range the group's validation allows).
    private func clamped(_ time: Int64, _ duration: Int64?, coordinator: PlaybackCoordinator) -> Int64 {
        let core = coordinator.core
        let allowed = core.mediaTimeRange(ofItem: core.timeline.item ?? session.activity.item)
        return time.clamped(to: 0...min(duration ?? .max, allowed.upperBound.nanoseconds))
    }

    /// `seek SECONDS`'s target: SECONDS within the item, in nanoseconds (converted only once
    /// clamped, so that no number typed can overflow).
    private func seekTarget(seconds: Double, coordinator: PlaybackCoordinator) -> ItemTime {
        let core = coordinator.core
        let end = core.mediaTimeRange(ofItem: core.timeline.item ?? session.activity.item).upperBound.nanoseconds
        return ItemTime(nanoseconds: MediaTime.nanoseconds(seconds: min(max(0, seconds), Double(end) / 1e9)).clamped(to: 0...end))
    }

    /// The one argument of a command, a finite number (of any sign: what it may be is the
    /// command's to say).
    private func number(_ words: [String]) throws -> Double {
        guard words.count == 2, let value = Double(words[1]), value.isFinite else {
            throw CLIError.usage("'\(words.joined(separator: " "))' wants one finite number")
        }
        return value
    }

    /// The longest `wait` or `stall` (s): a day. Longer is a typing error, and would overflow a
    /// sleep's duration long before it ended.
    static let longestWait: Double = 86_400

    /// `wait SECONDS`: between 0 and a day.
    private func seconds(_ words: [String]) throws -> Double {
        guard words.count == 2, let value = Double(words[1]), (0...Self.longestWait).contains(value) else {
            throw CLIError.usage("'\(words.joined(separator: " "))' wants a number of seconds from 0 to \(Int(Self.longestWait))")
        }
        return value
    }

    /// Refuses a command: one line, an `error` event with `--events json`, otherwise on
    /// standard error (over the status line at a terminal). The process carries on.
    func refuse(_ message: String, events: EventPrinter) {
        if options.jsonEvents {
            events.emit(.error(.init(message: message)))
        } else {
            StatusArea.shared.printAbove((isatty(2) != 0 && !StatusArea.shared.isActive ? "\r\u{1B}[K" : "") + "tandem: " + message,
                                         descriptor: 2)
        }
    }
}

/// Standard input, a line at a time as typed (without its newline), read on a thread of its own.
final class StandardInputLines: @unchecked Sendable {
    private let stream: AsyncStream<String>
    private var iterator: AsyncStream<String>.Iterator

    init() {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        self.stream = stream
        iterator = stream.makeAsyncIterator()
        Thread.detachNewThread {
            while let line = readLine() { continuation.yield(line) }
            continuation.finish()
        }
    }

    func next() async -> String? { await iterator.next() }
}

/// A flag that tasks share.
final class SharedFlag: Sendable {
    private let value = Atomic(false)

    /// Raises the flag.
    func set() { value.store(true, ordering: .relaxed) }

    /// Whether the flag was raised.
    var isSet: Bool { value.load(ordering: .relaxed) }
}
