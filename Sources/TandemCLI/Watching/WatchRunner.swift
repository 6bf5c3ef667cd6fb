#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Tandem
import TandemMedia
import TandemParty
import TandemPlayback
import TandemIdentity
import TandemClock
import TandemMediaTypes
import TandemNet

/// The terminal front of a watch party (`WatchParty`, the library's): it prints the party's
/// events, and takes keys at a terminal or commands a line at a time from standard input
/// (`play`, `pause`, `seek SECONDS`, `rate R`, `next`, `prev`, `queue add PATH`, `say TEXT`,
/// `offset MS`, `stall SECONDS [nowait]`, `throttle FACTOR SECONDS`, `wait SECONDS`, `leave`,
/// `end`), with a status line at a terminal (the built-in player; mpv shows its own window).
///
/// Seeks are clamped to the item (0 to its duration, as the group's validation knows it), by the
/// arrow keys and by `seek` alike; any other bad value (`rate 1e15`, `rate nan`, a negative or
/// out-of-range rate, seconds that are not a finite number) is refused with one line on
/// standard error (an `error` event with `--json`), and the process carries on.
///
/// `stall` is the built-in player's, for benchmarks: the player freezes where it is and this
/// participant begins a `.stallRecovery` suspension (one the group waits for, or with `nowait`
/// one it does not), ended SECONDS later; events `stall` (`seconds`, `waits`) and `stall-ended`.
struct WatchRunner {
    let session: GroupSession<WatchTogether>
    var options: WatchOptions
    let isHost: Bool
    /// Every file of the command line, the first played first; empty for a joiner that streams.
    var media: [String]

    func run() async throws -> Int32 {
        // SIGINT, SIGTERM and SIGHUP leave as `q` does (`ExitSignals`).
        let exitSignals = ExitSignals { [session] _ in session.leave() }
        defer { exitSignals.cancel() }
        // Which player was chosen for the person at this terminal, and how to have the other.
        if let line = options.choiceLine { printError(line) }
        let renderer = options.terminalVideo ? TerminalPicture() : nil
        defer { StatusArea.shared.releaseLines() }
        // The host's session is new: it has no history to catch up on.
        let printer = EventPrinter(style: options.eventStyle, catchesUp: !isHost)
        // With the picture in the terminal, said again under it once the front begins.
        let opening = OpeningLines(first: renderer == nil ? [] : openingLines)
        if renderer == nil { opening.release() }
        let party = WatchParty(session: session, configuration: configuration(renderer: renderer, printer: printer, opening: opening))
        // mpv's window shows the sentences too: its person sees no terminal.
        if options.player == .mpv { printer.showOnScreen { party.showOnScreen($0) } }
        let status = StatusRefresh()
        // The party's events, printed until the party ends them.
        async let printed: Void = presentEvents(of: party, printer: printer, status: status)
        // Once joined, where the group is in one line, rather than its history line by line;
        // cancelled (and awaited) as this returns.
        async let _: Void = printer.catchUp { Self.groupPosition(party) }
        let ending: WatchParty.Ending
        do {
            ending = try await party.run { [self] in await front(party, renderer: renderer, printer: printer, status: status, opening: opening) }
        } catch let error as WatchPartyError {
            await printed
            renderer?.stop()
            throw CLIError(message: error.message, exitCode: error.isUsage ? 64 : 1)
        } catch {
            await printed
            renderer?.stop()
            throw error
        }
        await printed
        renderer?.stop()
        return WatchRunner.exitStatus(for: ending.reason, endedHere: ending.endedHere)
    }

    /// What the screen said before the picture took it, said again under the picture: the
    /// player chosen and, for the host, the invite.
    private var openingLines: [String] {
        [options.choiceLine, isHost ? session.invitation.url.absoluteString : nil].compactMap { $0 }
    }

    /// The party's configuration from the command line's options.
    private func configuration(renderer: TerminalPicture?, printer: EventPrinter, opening: OpeningLines) -> WatchParty.Configuration {
        var configuration = WatchParty.Configuration(media: media, isHost: isHost)
        configuration.player = options.player
        configuration.follower = options.follower
        configuration.latencyOffset = options.latencyOffset
        configuration.maximumHold = options.maximumHold
        configuration.refusesStreaming = options.refusesStreaming
        configuration.allowsURLs = options.allowsURLs
        configuration.confirmURL = { url in try WatchRunner.confirmURL(url) }
        configuration.presentationLog = options.presentationLog
        configuration.videoSinks = renderer.map { [$0] } ?? []
        // The picture stops with the player, not after the departure is delivered.
        if let renderer { configuration.playerClosed = { renderer.stop() } }
        configuration.decodeThrottle = options.decodeThrottle
        configuration.wakeGuard = options.wakeGuard
        configuration.audioOutput = options.audio.output
        configuration.audioDevice = options.audio.device
        configuration.volume = options.audio.volume
        configuration.audioLog = options.audio.log
        configuration.mpvIPC = options.mpvIPC
        configuration.mpvArguments = options.mpvArguments
        configuration.mpvExecutable = options.mpvExecutable
        // Under the picture in the terminal, where it stays in sight.
        configuration.playerNotice = { opening.say($0) }
        // Every five seconds a `sync` event, for the benchmarks that read JSON.
        configuration.reportsSync = options.jsonEvents
        configuration.coordinationBegan = { printer.coordinationBegan() }
        return configuration
    }

    /// Prints each of the party's events as it comes, until the party ends them.
    private func presentEvents(of party: WatchParty, printer: EventPrinter, status: StatusRefresh) async {
        for await event in party.events { present(event, printer: printer, status: status) }
    }

    /// Prints one of the party's events (`EventPrinter`, which also keeps who did what last for
    /// the status line): refusals (the party's and the front's own, `refuse(_:party:)`) on
    /// standard error without `--json`; a participant's coming or going is shown on the status
    /// line at once.
    private func present(_ event: WatchPartyEvent, printer: EventPrinter, status: StatusRefresh) {
        switch event {
        case .error(let error) where !options.jsonEvents:
            printRefusal(error.message)
        case .participantJoined, .participantLeft, .away, .back:
            printer.emit(event)
            // The status line names who is there: not a moment longer than the event says.
            status.refresh()
        default:
            printer.emit(event)
        }
    }

    /// The invite to pass on now (`invite`, key `i`), an operator's to see: the newest key's,
    /// once someone was removed or the party rekeyed. Printed as the health table is; anyone
    /// else is told why not.
    func showInvite(_ party: WatchParty) {
        do {
            let invite = try party.currentInvite()
            if StatusArea.shared.isActive { StatusArea.shared.printAbove(invite) } else { printOutput(invite) }
        } catch {
            refuse("\(error)", party: party)
        }
    }

    /// The group's health (`GroupHealth`), one line per participant, above the status line at a
    /// terminal, on standard output otherwise.
    func showHealth(_ party: WatchParty) {
        let lines = party.health()?.lines ?? ["not watching yet"]
        for line in lines {
            let shown = TerminalText.sanitized(line)
            if StatusArea.shared.isActive { StatusArea.shared.printAbove(shown) } else { printOutput(shown) }
        }
    }

    /// The group's media time now (s), once the watch has begun: the timeline runs on past the
    /// end of the item, the position said stops there (as on the status line).
    static func groupPosition(_ party: WatchParty) -> Double? {
        guard let coordinator = party.coordinator else { return nil }
        let local = coordinator.localClock.map { LocalInstant(nanoseconds: $0.instant().nanoseconds) }
        guard let position = coordinator.expectedItemTime(atLocalTime: local).map({ Double($0.nanoseconds) / 1e9 }) else { return nil }
        return party.player?.info.duration.map { min(position, $0) } ?? position
    }

    /// What a person does while the party watches: keys and the status line at a terminal,
    /// commands on standard input otherwise; cancelled when the session is over.
    private func front(_ party: WatchParty, renderer: TerminalPicture?, printer: EventPrinter, status: StatusRefresh,
                       opening: OpeningLines) async {
        opening.release()
        guard options.player == .builtin else {
            // mpv takes a person's keys in its own window.
            await runScript(party)
            return
        }
        let keys = TerminalKeys()
        if keys != nil { StatusArea.shared.activate() }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                if let keys { await runKeys(keys, party: party) } else { await runScript(party) }
            }
            group.addTask { await showStatus(party, renderer: renderer, interactive: keys != nil, printer: printer, status: status) }
        }
        status.stop()
        StatusArea.shared.deactivate()
        keys?.restore()
    }

    /// 0 when this participant left or ended the session itself; otherwise one clear line on
    /// standard error and a non-zero status: 3 when someone else ended it or removed this
    /// participant, 1 when it was lost.
    static func exitStatus(for ending: GroupSessionError?, endedHere: Bool) -> Int32 {
        guard let ending else { return 0 }
        switch ending.code {
        case .left: return 0
        case .ended where endedHere: return 0
        case .ended, .removed:
            printError("tandem: \(ending.detail)")
            return 3
        default:
            printError("tandem: \(endingLine(ending))")
            return 1
        }
    }

    /// Why the session was lost, in one line: a relay that answers "no such session" as this
    /// participant reconnects was restarted (or is another), and the party, which lives in its
    /// relay's memory, is gone.
    static func endingLine(_ ending: GroupSessionError) -> String {
        guard ending.relayError?.code == .sessionNotFound else { return ending.detail }
        return "the relay no longer holds this party: it was restarted, and a party lives in its relay's memory. "
            + "Ask the host to start a new one"
    }

    /// A joiner opens a URL item only with `--allow-urls`, or after saying yes at the terminal.
    static func confirmURL(_ url: URL) throws {
        let shown = TerminalText.sanitized(url.absoluteString)
        guard isatty(0) != 0 else {
            throw CLIError.failure("the group's item is the URL \(shown): this participant would open it itself; "
                + "give --allow-urls to do so")
        }
        printError("tandem: the group's item is the URL \(shown), which this participant would open itself. Open it? [y/N] ")
        let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        guard answer == "y" || answer == "yes" else { throw CLIError.failure("not opening \(shown)") }
    }

    /// Runs the commands on standard input, a line at a time, until they end or the watch does.
    func runScript(_ party: WatchParty) async {
        for await raw in StandardInputLines.stream() {
            // `say` takes the rest of the line as it was typed; the other commands, its words.
            if let text = Self.sayText(raw) {
                say(text, party: party)
                continue
            }
            let line = raw.trimmingCharacters(in: .whitespaces)
            let words = line.split(separator: " ").map(String.init)
            guard let verb = words.first else { continue }
            do {
                switch verb {
                case "play": try party.play()
                case "pause": try party.pause()
                case "seek": try party.seek(toSeconds: try number(words))
                // The coordinator refuses what every participant would skip, saying why.
                case "rate": try party.setRate(try number(words))
                case "stall":
                    let (seconds, waits) = try stallArguments(words)
                    guard options.player == .builtin else {
                        refuse("stall is the built-in player's (--player builtin)", party: party)
                        continue
                    }
                    try party.stall(seconds: seconds, waits: waits)
                case "throttle": try throttle(party, words: words)
                case "next", "prev", "queue": try runQueueCommand(words, party: party)
                case "offset": try party.setLatencyOffset(try offsetArgument(words))
                case "volume": try party.setVolume(try volumeArgument(words))
                case "mute": try party.toggleMute()
                case "wait": try await Task.sleep(for: .seconds(try seconds(words)))
                case "health": showHealth(party)
                case "leave": party.leave()
                case "end":
                    if let refusal = party.endRefusal { refuse("end: \(refusal)", party: party) } else { party.end() }
                case "op", "deop", "control", "kick", "rekey": try runRoleCommand(words, party: party)
                case "invite": showInvite(party)
                default: refuse("unknown command '\(verb)' (play, pause, seek SECONDS, rate R, next, prev, queue add PATH, say TEXT, offset MS, volume N, mute, health, stall SECONDS [nowait], wait SECONDS, op NAME, deop NAME, control operators|everyone, kick NAME, rekey, invite, leave, end)", party: party)
                }
            } catch {
                // The watch is over (a `wait` cut short): nothing more to say.
                if Task.isCancelled { return }
                refuse("\(line): \(error)", party: party)
            }
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

    /// `throttle FACTOR SECONDS` (bench only): the built-in player decodes FACTOR times slower for
    /// SECONDS, then at the `--decode-throttle` factor again; events `throttle` and `throttle-ended`.
    private func throttle(_ party: WatchParty, words: [String]) throws {
        guard options.player == .builtin else {
            refuse("throttle is the built-in player's (--player builtin)", party: party)
            return
        }
        guard words.count == 3, let factor = Double(words[1]), let seconds = Double(words[2]),
              seconds.isFinite, seconds > 0, seconds <= 86_400 else {
            refuse("throttle wants FACTOR SECONDS (a factor of 1 or more, 0 < SECONDS ≤ 86400)", party: party)
            return
        }
        try party.throttle(factor: factor, seconds: seconds)
    }

    /// The role commands: `op NAME`, `deop NAME`, `control operators|everyone`, `kick NAME`,
    /// `rekey`.
    private func runRoleCommand(_ words: [String], party: WatchParty) throws {
        let rest = words.dropFirst().joined(separator: " ")
        switch words.first {
        case "op": try party.makeOperator(named: rest)
        case "deop": try party.revokeOperator(named: rest)
        case "kick": try party.remove(named: rest)
        case "rekey":
            guard rest.isEmpty else { throw CLIError.usage("rekey takes nothing after it") }
            try party.rekey()
        default:
            guard let control = SessionPolicy.Control(rawValue: rest) else { throw CLIError.usage("control operators|everyone") }
            try party.setControl(control)
        }
    }

    /// The queue's line commands: `next`, `prev`, `queue add PATH`.
    private func runQueueCommand(_ words: [String], party: WatchParty) throws {
        switch words.first {
        case "next": try party.next()
        case "prev": try party.previous()
        default:
            guard words.count >= 3, words[1] == "add" else { throw CLIError.usage("'\(words.joined(separator: " "))': queue add PATH") }
            try party.addToQueue(words.dropFirst(2).joined(separator: " "))
        }
    }

    /// At a terminal, the keys of `KeyTable` (mpv's meanings where mpv has the key): space and
    /// `p` play or pause, left and right seek 5 s (shift: 30 s), `[` and `]` change the rate by
    /// 0.1, Backspace resets it, `<` and `>` move through the queue, `9` and `0` the volume by
    /// 10 %, `m` mutes or unmutes, `-` and `=` the latency offset by 10 ms, Enter opens the chat
    /// prompt, `?` shows the keys, `h` the group's health, `i` the invite (operators), `q` leaves, `e` pressed twice within
    /// 3 s ends the session for everyone.
    private func runKeys(_ keys: TerminalKeys, party: WatchParty) async {
        StatusArea.shared.printAbove(KeyTable.hint)
        var ending = EndConfirmation()
        for await key in keys.keys {
            do {
                switch key {
                case .space: try party.togglePlayPause()
                case .left: try party.seek(by: -5_000_000_000)
                case .right: try party.seek(by: 5_000_000_000)
                case .shiftLeft: try party.seek(by: -30_000_000_000)
                case .shiftRight: try party.seek(by: 30_000_000_000)
                case .slower: try party.changeRate(by: -0.1)
                case .faster: try party.changeRate(by: 0.1)
                case .resetRate: try party.setRate(1)
                case .next: try party.next()
                case .previous: try party.previous()
                case .quit: party.leave()
                case .end:
                    if let refusal = party.endRefusal {
                        refuse("end: \(refusal)", party: party)
                    } else if ending.press(at: LocalInstant(nanoseconds: SystemClock().instant().nanoseconds)) {
                        party.end()
                    } else {
                        StatusArea.shared.printAbove(EndConfirmation.question)
                    }
                case .help: for line in KeyTable.lines { StatusArea.shared.printAbove(line) }
                case .health: showHealth(party)
                case .invite: showInvite(party)
                case .openPrompt: StatusArea.shared.setPrompt("")
                case .prompt(let text): StatusArea.shared.setPrompt(text)
                case .cancelPrompt: StatusArea.shared.setPrompt(nil)
                case .say(let text):
                    StatusArea.shared.setPrompt(nil)
                    say(text, party: party)
                case .offsetDown: try party.moveLatencyOffset(by: -Self.latencyStep)
                case .offsetUp: try party.moveLatencyOffset(by: Self.latencyStep)
                case .volumeDown: try party.moveVolume(by: -10)
                case .volumeUp: try party.moveVolume(by: 10)
                case .mute: try party.toggleMute()
                }
            } catch {
                refuse("\(error)", party: party)
            }
        }
    }

    /// Keeps the status line current: under the picture, or on the last line of the terminal,
    /// every 250 ms and whenever `status` is refreshed.
    private func showStatus(_ party: WatchParty, renderer: TerminalPicture?, interactive: Bool, printer: EventPrinter,
                            status: StatusRefresh) async {
        status.start { [self] in drawStatus(party, renderer: renderer, interactive: interactive, lastAction: printer.lastAction) }
        while !Task.isCancelled {
            status.draw()
            try? await Task.sleep(for: .milliseconds(250))
        }
    }

    /// Draws the status line once.
    private func drawStatus(_ party: WatchParty, renderer: TerminalPicture?, interactive: Bool, lastAction: String) {
        if let player = party.player, let coordinator = party.coordinator {
            let core = StatusLine.groupCore(coordinator, atLocalTime: coordinator.localClock.map { LocalInstant(nanoseconds: $0.instant().nanoseconds) })
            var fields = StatusLine.fields(player: player, coordinator: coordinator, session: session, lastChange: lastAction)
            fields.insert(contentsOf: [Self.queuePosition(core).map { ($0, StatusLine.Priority.queue) },
                                       Self.latencyText(party.latencyOffset).map { ($0, StatusLine.Priority.latency) },
                                       StatusLine.offText(party.health()?.offMembers ?? []).map { ($0, StatusLine.Priority.off) }]
                                .compactMap { $0 },
                          at: min(fields.count, 4))
            let line = TerminalText.fitting(fields, width: StatusArea.columns)
            if let renderer {
                // Under the picture: the prompt, while one is open, in the status line's place.
                renderer.statusLine = StatusArea.shared.prompt.map { "say: " + TerminalText.sanitized($0) + "▏" } ?? line
            } else if interactive {
                StatusArea.shared.setStatus(line)
            }
        }
    }

    /// "item i of n" for the status line, or nil with fewer than two entries.
    static func queuePosition(_ core: CoordinationCore) -> String? {
        guard core.queue.entries.count > 1, let index = core.currentEntryIndex else { return nil }
        return "item \(index + 1) of \(core.queue.entries.count)"
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

    /// Refuses a command: through the party's events (`WatchParty.reportRefusal(_:)`), so that
    /// it is printed in order with the events reported before it; directly once the party is over.
    func refuse(_ message: String, party: WatchParty) {
        if !party.reportRefusal(message) { printRefusal(message) }
    }

    /// Prints a refusal: one line, an `error` event with `--json`, otherwise on standard
    /// error (over the status line at a terminal). The process carries on.
    func printRefusal(_ message: String) {
        if options.jsonEvents {
            EventPrinter(style: .json).emit(.error(.init(message: message)))
        } else {
            StatusArea.shared.printAbove((isatty(2) != 0 && !StatusArea.shared.isActive ? "\r\u{1B}[K" : "") + "tandem: " + message,
                                         descriptor: 2)
        }
    }
}

/// Standard input, a line at a time as typed (without its newline), read on a thread of its own.
enum StandardInputLines {
    /// The lines, read on a thread started now; the stream finishes at the end of the input.
    static func stream() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        Thread.detachNewThread {
            while let line = readLine() { continuation.yield(line) }
            continuation.finish()
        }
        return stream
    }
}
