import TandemClock
import TandemPlayback

/// What mpv reports: the ledger tells Tandem's own changes from a person's, and a person's change
/// is proposed to the group, once.
extension MpvPlayer {
    /// The rates a person may propose (the built-in player's range).
    static let proposableRates: ClosedRange<Double> = 0.25...4

    func handle(_ event: MpvEvent) async {
        let observation: MpvRequestLedger.Observation
        switch (event.name, event.propertyName) {
        case ("property-change", "pause"?):
            guard let paused = event.propertyValue.bool else { return }
            observation = .pause(paused)
        case ("property-change", "speed"?):
            guard let speed = event.propertyValue.double else { return }
            observation = .speed(speed)
        case ("property-change", "eof-reached"?):
            observation = .endReached(event.propertyValue.bool ?? false)
        case ("property-change", "paused-for-cache"?):
            await cacheChanged(waiting: event.propertyValue.bool ?? false)
            return
        case ("client-message", _):
            // A key bound in mpv (`bindGroupKeys`): the group moves, as at the terminal.
            guard case .array(let words)? = event.message["args"], words.first?.string == Self.groupKeyTarget,
                  let key = words.dropFirst().first?.string.flatMap(GroupKey.init(rawValue:)) else { return }
            await take(key)
            return
        case ("playback-restart", _):
            // Where the seek landed: read now, taken back to when playback restarted.
            state.withLock { $0.restarts += 1 }
            guard let reply = try? await connection.command(["get_property", "time-pos"]), let seconds = reply.value.seconds else { return }
            let (paused, speed) = state.withLock { ($0.ledger.paused, $0.ledger.speed) }
            let since = paused ? 0 : Double(max(0, reply.midpoint - event.receivedAt)) * speed
            observation = .seekLanded(at: Int64(saturating: seconds * 1e9 - since))
        default:
            return
        }
        let (action, requestedSpeed, groupRate) = state.withLock { state in
            let action = state.ledger.observe(observation, at: event.receivedAt)
            // Not a change of ours: a person's, or mpv stopping at the end of the file.
            if case .pause(let paused) = observation, action != nil || (paused && state.ledger.endReached) {
                state.paused = paused
            }
            return (action, state.requestedSpeed, state.groupRate)
        }
        guard let action else { return }
        // Alone, a person's speed is the rate: pitch correction follows it, as mpv's own would.
        if case .setSpeed(let speed) = action, !playbackCoordinator.isCoordinating, readingsCoordinator == nil {
            await correctPitch(forRate: speed)
        }
        await propose(action, requestedSpeed: requestedSpeed, groupRate: groupRate)
    }

    /// What a key bound in mpv's window does for the group (the word its `script-message` carries).
    enum GroupKey: String, CaseIterable {
        /// The queue's next item.
        case next
        /// The queue's previous item.
        case previous
        /// The rate 0.1 lower.
        case slower
        /// The rate 0.1 higher.
        case faster
        /// The rate back to 1.
        case resetRate = "reset-rate"
        /// Play or pause.
        case togglePause = "toggle-pause"
        /// 5 s back.
        case seekBack = "seek-back"
        /// 5 s on.
        case seekForward = "seek-forward"
        /// 30 s back.
        case seekBackFar = "seek-back-far"
        /// 30 s on.
        case seekForwardFar = "seek-forward-far"

        /// The key as the machine's decisions know it.
        var machineKey: MpvMachine.Key {
            switch self {
            case .next: .next
            case .previous: .previous
            case .slower: .slower
            case .faster: .faster
            case .resetRate: .resetRate
            case .togglePause: .togglePause
            case .seekBack: .seek(by: .seconds(-5))
            case .seekForward: .seek(by: .seconds(5))
            case .seekBackFar: .seek(by: .seconds(-30))
            case .seekForwardFar: .seek(by: .seconds(30))
            }
        }
    }

    /// The first word of the `script-message` that the keys bound in mpv send.
    static let groupKeyTarget = "tandem-key"

    /// The keys bound in mpv's window, with the terminal's meanings (the one key table): space
    /// and `p` play or pause, ← and → seek 5 s (with shift 30 s), `>` and Enter the next item, `<`
    /// the previous one, `[` and `]` the rate 0.1 slower and faster (mpv's own multiply it by 0.91
    /// and 1.1), Backspace the rate back to 1. Each is proposed to the group and takes effect in
    /// this mpv at the group's instant, as in every other participant, rather than in this mpv at
    /// once and in the others a lead later. mpv keeps its other keys (↑ and ↓ seek a minute);
    /// what they change, as what another tool changes over mpv's IPC, moves this mpv at once and
    /// is proposed to the group as a person's change.
    static let groupKeys: [(key: String, action: GroupKey)] = [(">", .next), ("ENTER", .next), ("<", .previous),
                                                               ("[", .slower), ("]", .faster), ("BS", .resetRate),
                                                               ("SPACE", .togglePause), ("p", .togglePause),
                                                               ("LEFT", .seekBack), ("RIGHT", .seekForward),
                                                               ("Shift+LEFT", .seekBackFar), ("Shift+RIGHT", .seekForwardFar)]

    /// Binds `groupKeys` in mpv (`keybind`, mpv 0.35's IPC command), each to a `script-message`
    /// that `handle(_:)` takes up; a refusal leaves mpv's own binding.
    static func bindQueueKeys(_ ipc: MpvConnection) async {
        for (key, action) in groupKeys {
            _ = try? await ipc.command(["keybind", .string(key), .string("script-message \(groupKeyTarget) \(action.rawValue)")])
        }
    }

    /// Does what `key`, pressed in mpv's window, asks of the group (`MpvMachine.proposal(for:…)`
    /// decides what); a change the group refuses (the first item has no previous one) changes
    /// nothing. Not coordinated, the transport keys do to mpv what mpv's own would.
    private func take(_ key: GroupKey) async {
        let coordinator = groupCoordinator
        guard coordinator.isCoordinating else {
            switch key.machineKey {
            case .togglePause: _ = try? await connection.command(["cycle", "pause"])
            case .seek(let by): _ = try? await connection.command(["seek", .number(by.seconds), "relative"])
            default: break
            }
            return
        }
        let now = HostInstant(nanoseconds: MonotonicClock.now())
        let core = coordinator.core
        let position = coordinator.expectedItemTime(atHostTime: now) ?? core.timeline.anchorMediaTime
        let range = core.mediaTimeRange(ofItem: core.timeline.item)
        let proposal: @Sendable () throws -> Void
        switch MpvMachine.proposal(for: key.machineKey, rate: core.timeline.rate, intendedRate: core.intendedRate, position: position,
                                   duration: range.upperBound - .zero) {
        case .rate(let rate): proposal = { _ = try coordinator.proposeRateChange(to: rate) }
        case .seek(let target): proposal = { _ = try coordinator.proposeSeek(to: target) }
        case .next: proposal = { _ = try coordinator.advanceToNextItem() }
        case .previous: proposal = { _ = try coordinator.returnToPreviousItem() }
        }
        if let gate = options.proposalGate { try? gate(proposal) } else { try? proposal() }
    }

    /// mpv's `paused-for-cache` changed: while the group plays, mpv buffering is a stall, and
    /// the player suspends its participant for `.stallRecovery` (the group waits for it, as for
    /// the built-in player's stalls) until mpv has its cache again; the coordinator then hands
    /// mpv the group's timeline a pre-roll ahead (`MpvMachine.stallChange(waiting:stalled:groupPlays:)`
    /// decides).
    func cacheChanged(waiting: Bool) async {
        let coordinator = playbackCoordinator
        let groupPlays = coordinator.isCoordinating && coordinator.timeline.rate > 0
        let change = state.withLock { state -> Bool? in
            let change = MpvMachine.stallChange(waiting: waiting, stalled: state.stallSuspension != nil, groupPlays: groupPlays)
            if change == true { state.statistics.stalls += 1 }
            return change
        }
        switch change {
        case true?:
            let suspension = coordinator.beginSuspension(for: .stallRecovery)
            state.withLock { $0.stallSuspension = suspension }
            refreshTimeControl()
            await showOnScreen([MpvMachine.bufferingText])
            return
        case false?:
            let suspension = state.withLock { state in
                defer { state.stallSuspension = nil }
                return state.stallSuspension
            }
            suspension?.end()
        case nil:
            break
        }
        refreshTimeControl()
    }

    /// The rate a rate key sets: `rate` changed by `step`, kept within the proposable rates and
    /// rounded to a tenth (so that 0.3 is the lowest a key reaches, 4 the highest); mpv's
    /// window's keys and the terminal's alike.
    public static func steppedRate(from rate: Double, by step: Double) -> Double {
        ((step < 0 ? max(proposableRates.lowerBound, rate + step) : min(proposableRates.upperBound, rate + step)) * 10).rounded() / 10
    }

    /// Proposes a person's change to the group, and holds the player (no correction, no stale
    /// commands) until the group answers.
    ///
    /// A person's seek or change of speed while the group plays pauses mpv at once (where the
    /// seek landed), as a person's unpause does: the group's answer starts every participant,
    /// this one too, on the new timeline at the same instant (`MpvPlayer+Start.swift`). Played
    /// on instead, this mpv would show the new position before the others by the group's
    /// lead (tens of ms, measured by the frame-flip probe), and at a new speed it would drift
    /// and its audio clock step by the output's lag times the change (37 ms for ×1.1) until
    /// the group's command started it afresh. But only for as long as the answer is quick: on a
    /// busy machine the group's answer can take a second to come back, and mpv would stand
    /// still all that time, the person's seek looking lost. So unanswered after `answerWait`, mpv plays on from where
    /// the person put it (`playOn(awaiting:)`), and an answer whose instant is far off lets it
    /// play on until its start must begin (`start(itemTime:at:rate:version:again:)`).
    private func propose(_ action: MpvRequestLedger.UserAction, requestedSpeed: Double, groupRate: Double) async {
        if let driver = readingsCoordinator {
            forward(action, to: driver)
            return
        }
        let coordinator = playbackCoordinator
        let timeline = coordinator.timeline
        let waiting = state.withLock { $0.hold != nil }
        let groupPlays = timeline.rate > 0 && !waiting
        var proposed = false
        switch action {
        case .setPaused(true):
            guard timeline.rate > 0 || waiting else { return }
            proposed = hold(proposing: { try coordinator.proposeRateChange(to: 0) })
        case .setPaused(false) where MpvMachine.unpauseIsPause(groupPlays: groupPlays, liningUp: state.withLock { $0.liningUp }):
            await setPaused(true)
            proposed = hold(proposing: { try coordinator.proposeRateChange(to: 0) })
        case .setPaused(false):
            guard !groupPlays else {
                // The group plays and mpv had stopped (at the end, say): rejoin the timeline.
                if let command = coordinator.lastCommand { rejoin(command) }
                return
            }
            // Start together: mpv waits, paused, for the group's play command.
            await setPaused(true)
            let speed = state.withLock { $0.ledger.speed }
            proposed = hold(proposing: { try coordinator.proposeRateChange(to: Self.proposable(speed)) })
        case .setSpeed(let speed):
            // Only while playing: a rate while paused would start everyone.
            guard timeline.rate > 0 else { return }
            // Take the correction loop's nudge out: the person changed the speed they saw.
            let rate = groupRate > 0 && requestedSpeed > 0 ? speed * groupRate / requestedSpeed : speed
            state.withLock { $0.requestedSpeed = speed }
            // Start together, at the new rate, at the group's instant (see `startsTogether`).
            if groupPlays { await setPaused(true) }
            proposed = hold(pausing: groupPlays, proposing: { try coordinator.proposeRateChange(to: Self.proposable(rate)) })
        case .seek(let position):
            let target = Self.seekTarget(position, on: coordinator)
            if groupPlays { await setPaused(true) }
            proposed = hold(pausing: groupPlays, proposing: { try coordinator.proposeSeek(to: target) })
        }
        guard proposed else {
            // Refused: back on the group's timeline, which has not changed.
            switch action {
            case .setSpeed, .seek: if groupPlays { rejoinIfPlaying(coordinator) }
            case .setPaused: break
            }
            return
        }
        state.withLock { $0.statistics.userProposals += 1 }
    }

    /// A person's change when a program drives the player's transport from a coordinator of
    /// its own (`readingsCoordinator`: the benchmark's apply-on-receipt baseline, where the
    /// player's own coordinator is not coordinating): proposed to that coordinator as it is,
    /// with no hold, since that program applies every change, this participant's own included,
    /// as it arrives. mpv has already done what the person asked.
    private func forward(_ action: MpvRequestLedger.UserAction, to driver: PlaybackCoordinator) {
        do {
            switch action {
            case .setPaused(true):
                guard driver.timeline.rate > 0 else { return }
                try driver.proposeRateChange(to: 0)
            case .setPaused(false):
                guard driver.timeline.rate == 0 else { return }
                try driver.proposeRateChange(to: Self.proposable(state.withLock { $0.ledger.speed }))
            case .setSpeed(let speed):
                // Only while playing: a rate while paused would start everyone.
                guard driver.timeline.rate > 0 else { return }
                state.withLock { $0.requestedSpeed = speed }
                try driver.proposeRateChange(to: Self.proposable(speed))
            case .seek(let position):
                try driver.proposeSeek(to: Self.seekTarget(position, on: driver))
            }
        } catch {
            return
        }
        state.withLock { $0.statistics.userProposals += 1 }
    }

    /// Where a person's seek to `position` (ns) is proposed: within the item as `coordinator`'s
    /// group knows it (its announced duration is rounded to the ms).
    private static func seekTarget(_ position: Int64, on coordinator: PlaybackCoordinator) -> ItemTime {
        let core = coordinator.core
        return ItemTime(nanoseconds: position).clamped(to: core.mediaTimeRange(ofItem: core.timeline.item))
    }

    /// How long mpv, paused for a person's seek or change of speed, waits for the group's
    /// answer before it plays on (ns): the answer takes the relay's lead (30 to 50 ms) and a
    /// round trip on an idle machine.
    static let answerWait: Int64 = 150_000_000

    /// Holds the player for the group's answer to the proposal `propose` makes, and makes it;
    /// false if it was refused (the hold is then as it was). The hold is in place before the
    /// proposal leaves: the answer, of a newer timeline version, can be carried out before this
    /// thread runs again, and a hold set after it would take the answer's start for a stale one
    /// and leave mpv still. `pausing`: mpv was paused for it, and plays on if the group has not
    /// answered within `answerWait`.
    private func hold(pausing: Bool = false, proposing propose: @escaping @Sendable () throws -> Void) -> Bool {
        let version = playbackCoordinator.timeline.version
        let (previous, number) = state.withLock { state in
            defer {
                state.proposals += 1
                state.hold = (version, MonotonicClock.now() + 3_000_000_000)
                if pausing { state.pausedForProposal = state.proposals }
            }
            return (state.hold, state.proposals + 1)
        }
        do {
            if let gate = options.proposalGate { try gate(propose) } else { try propose() }
        } catch {
            state.withLock { state in
                guard state.proposals == number else { return }
                state.hold = previous
                if state.pausedForProposal == number { state.pausedForProposal = nil }
            }
            return false
        }
        if pausing {
            Task { [weak self] in
                try? await Task.sleep(for: .nanoseconds(Self.answerWait))
                self?.enqueue(.release(proposal: number))
            }
        }
        return true
    }

    /// mpv was paused for the person's proposal `proposal` and the group has not answered it
    /// yet: plays on from where the person put it (the hold stays: no correction, no stale
    /// command), until the answer starts it on the group's timeline.
    func playOn(awaiting proposal: Int) async {
        let unanswered = state.withLock { state in
            state.pausedForProposal == proposal && state.hold != nil && state.paused && !state.closed
        }
        guard unanswered else { return }
        await setPaused(false)
    }

    /// Re-issues the group's last command, for mpv to take it up again (a proposal of a
    /// person's was refused after mpv paused for it).
    private func rejoinIfPlaying(_ coordinator: PlaybackCoordinator) {
        if let command = coordinator.lastCommand { rejoin(command) }
    }

    private static func proposable(_ rate: Double) -> Double {
        (min(max(rate, proposableRates.lowerBound), proposableRates.upperBound) * 1000).rounded() / 1000
    }
}
