import TandemClock
import TandemPlayback

/// What mpv reports, a person's changes in mpv and its window's keys, buffering, and the item.
extension MpvMachine {
    /// The rates a person may propose (the built-in player's range).
    static let proposableRates: ClosedRange<Double> = 0.25...4

    /// mpv reported `report`, which arrived at `now`.
    public mutating func onReport(_ report: Report, now: HostInstant) -> [Directive] {
        let observation: MpvRequestLedger.Observation
        switch report {
        case .pause(let value): observation = .pause(value)
        case .speed(let value): observation = .speed(value)
        case .endReached(let reached): observation = .endReached(reached)
        case .playbackRestart:
            // Where the seek landed: read now, taken back to when playback restarted.
            restarts += 1
            var directives = [read(.framePosition, .restart(at: now))]
            // A paused seek landed: its command completes now (the group's play waits for a
            // pre-roll's), and the frame it landed on is known once the reading is back.
            if case .seekingPaused(let target, _, let before, let completion, let prerolls) = operation, before != restarts {
                settleUntil = now + .milliseconds(200)
                replace(with: .none)
                if prerolls { prerolled = (target, restarts, false) }
                directives += completion.map { [.complete(command: $0)] } ?? []
            }
            return finish(directives, now)
        case .pausedForCache(let waiting):
            return finish(cache(waiting, now: now), now)
        case .key(let key):
            return finish(pressed(key, now: now), now)
        }
        let action = ledger.observe(observation, at: now)
        // Not a change of ours: a person's, or mpv stopping at the end of the file.
        if case .pause(let value) = observation, action != nil || (value && ledger.endReached) { paused = value }
        guard let action else { return finish([], now) }
        return finish(personChanged(action, now: now), now)
    }

    /// A person changed mpv (the ledger found no request of Tandem's behind it): proposed to the
    /// group, and the player held until the group answers.
    ///
    /// A seek or change of speed while the group plays pauses mpv at once (where the seek
    /// landed), as a person's unpause does: the group's answer starts every participant, this one
    /// too, on the new timeline at the same instant. Unanswered after `answerWait`, mpv plays on
    /// from where the person put it, and an answer whose instant is far off lets it play on until
    /// its start must begin.
    mutating func personChanged(_ action: MpvRequestLedger.UserAction, now: HostInstant) -> [Directive] {
        if forwardsPersonChanges {
            if case .setSpeed(let speed) = action { requestedSpeed = speed }
            return [.forward(action)]
        }
        // Alone (no group's command yet), a person's speed is the rate: pitch correction
        // follows it, as mpv's own would.
        if timeline == nil, case .setSpeed(let speed) = action {
            return correctPitch(forRate: speed) + personChangedInGroup(action, now: now)
        }
        return personChangedInGroup(action, now: now)
    }

    mutating func personChangedInGroup(_ action: MpvRequestLedger.UserAction, now: HostInstant) -> [Directive] {
        let timelineRate = timeline?.rate ?? 0
        let groupPlays = timelineRate > 0 && hold == nil
        switch action {
        case .setPaused(true):
            guard timelineRate > 0 || hold != nil else { return [] }
            return propose(.rate(0), pausing: false, rejoins: false, now: now)
        case .setPaused(false) where Self.unpauseIsPause(groupPlays: groupPlays, liningUp: isLiningUp):
            return abandonOperation() + pause(now: now) + propose(.rate(0), pausing: false, rejoins: false, now: now)
        case .setPaused(false):
            // The group plays and mpv had stopped (at the end, say): rejoin the timeline.
            guard !groupPlays else { return rejoin(now: now) }
            // Start together: mpv waits, paused, for the group's play command.
            return pause(now: now) + propose(.rate(Self.proposable(ledger.speed)), pausing: false, rejoins: false, now: now)
        case .setSpeed(let speed):
            // Only while playing: a rate while paused would start everyone.
            guard timelineRate > 0 else { return [] }
            // The corrections' nudge taken out: the person changed the speed they saw.
            let rate = groupRate > 0 && requestedSpeed > 0 ? speed * groupRate / requestedSpeed : speed
            requestedSpeed = speed
            let pausing = groupPlays ? pause(now: now) : []
            return pausing + propose(.rate(Self.proposable(rate)), pausing: groupPlays, rejoins: groupPlays, now: now)
        case .seek(let position):
            let pausing = groupPlays ? pause(now: now) : []
            return pausing + propose(.seek(clamped(position)), pausing: groupPlays, rejoins: groupPlays, now: now)
        }
    }

    /// Whether a person's unpause of mpv is a pause: a toggle of mpv's pause (a click on its
    /// on-screen controller, `cycle pause` over its IPC) while a start holds mpv still for the
    /// group's change, in a group that plays: the person saw mpv play, and paused it.
    public static func unpauseIsPause(groupPlays: Bool, liningUp: Bool) -> Bool { groupPlays && liningUp }

    /// Whether the machine holds mpv paused while it lines it up for the group's change: a
    /// start's seek, its landing, the unpause to come, or a pre-roll and the play it waits for.
    var isLiningUp: Bool {
        switch operation {
        case .landing, .awaitingPreroll, .checkingClock, .awaitingUnpause: true
        case .checkingPosition(_, _, _, let prerolls), .seekingPaused(_, _, _, _, let prerolls): prerolls
        default: prerolled?.restarts == restarts
        }
    }

    /// `position` (ns) within the item.
    func clamped(_ position: Int64) -> ItemTime {
        let end = item.duration.map { ItemTime.zero + $0 } ?? .distantFuture
        return ItemTime(nanoseconds: position).clamped(to: .zero...max(.zero, end))
    }

    /// Holds the player for the group's answer to `proposal` and proposes it. The hold is in
    /// place before the proposal leaves: the answer, of a newer version, ends it. Whatever the
    /// machine was doing for the old timeline stops (its start would put mpv back there).
    mutating func propose(_ proposal: Proposal, pausing: Bool, rejoins: Bool, now: HostInstant) -> [Directive] {
        proposals += 1
        hold = Hold(version: latestVersion, until: now + configuration.holdLimit, number: proposals, rejoinsOnRefusal: rejoins)
        if pausing { pausedForProposal = now + configuration.answerWait }
        statistics.userProposals += 1
        return abandonOperation() + [.propose(proposal, number: proposals)]
    }

    /// Stops the operation under way; a pre-roll's command is completed (mpv is not there).
    mutating func abandonOperation() -> [Directive] {
        var directives: [Directive] = []
        switch operation {
        case .checkingPosition(_, _, let completion?, _), .seekingPaused(_, _, _, let completion?, _):
            directives.append(.complete(command: completion))
        case .loading:
            return []
        default:
            break
        }
        replace(with: .none)
        return directives
    }

    /// The group refused the proposal `number` (a proposal of the machine's, `Directive.propose`).
    public mutating func onProposalRefused(_ number: Int, now: HostInstant) -> [Directive] {
        statistics.userProposals -= 1
        guard let refused = hold, refused.number == number else { return finish([], now) }
        hold = nil
        pausedForProposal = nil
        // Back on the group's timeline, which has not changed.
        return finish(refused.rejoinsOnRefusal ? rejoin(now: now) : [], now)
    }

    /// Takes up the group's timeline again (a person played on at the end, or a proposal was
    /// refused after mpv paused for it).
    mutating func rejoin(now: HostInstant) -> [Directive] {
        guard let play = lastPlay, (timeline?.rate ?? 0) > 0 else {
            guard let position = groupPosition(at: now) else { return [] }
            return seekWhilePaused(to: position, tolerance: configuration.pauseTolerance, completion: nil, prerolls: false, now: now)
        }
        groupRate = play.rate
        return beginStart(Start(itemTime: play.itemTime, host: play.hostTime - latencyOffset, rate: play.rate, version: play.version,
                                again: true), now: now)
    }

    // MARK: Keys

    /// A key bound in mpv's window was pressed: proposed to the group with the terminal's
    /// meaning, mpv left alone, so that it moves at the group's instant as the others do. A pause
    /// pressed while the machine starts mpv on a change is a pause, whatever mpv's own `pause`
    /// reads meanwhile.
    mutating func pressed(_ key: Key, now: HostInstant) -> [Directive] {
        let proposal = Self.proposal(for: key, rate: timeline?.rate ?? 0, intendedRate: lastPlay?.rate ?? 1,
                                     position: groupPosition(at: now) ?? .zero, duration: item.duration)
        proposals += 1
        statistics.userProposals += 1
        return [.propose(proposal, number: proposals)]
    }

    /// What `key` proposes to a group whose timeline plays at `rate` (0: paused), whose intended
    /// rate (the one a play resumes at) is `intendedRate`, and which is at `position` of an item
    /// of `duration`: the terminal's meanings (space or `p` play or pause, ← → seek 5 s, with
    /// shift 30 s, `[` `]` the rate by a tenth, Backspace back to 1, `<` `>` the items).
    public static func proposal(for key: Key, rate: Double, intendedRate: Double, position: ItemTime, duration: TimeSpan?) -> Proposal {
        let intended = rate > 0 ? rate : intendedRate > 0 ? intendedRate : 1
        switch key {
        case .togglePause: return .rate(rate > 0 ? 0 : intended)
        case .seek(let by):
            let end = duration.map { ItemTime.zero + $0 } ?? .distantFuture
            return .seek((position + by).clamped(to: .zero...max(.zero, end)))
        case .next: return .next
        case .previous: return .previous
        case .slower: return .rate(MpvPlayer.steppedRate(from: intended, by: -0.1))
        case .faster: return .rate(MpvPlayer.steppedRate(from: intended, by: 0.1))
        case .resetRate: return .rate(1)
        }
    }

    static func proposable(_ rate: Double) -> Double {
        (min(max(rate, proposableRates.lowerBound), proposableRates.upperBound) * 1000).rounded() / 1000
    }

    // MARK: The program's own requests

    /// A request of the program's own while no group drives the player (its transport,
    /// uncoordinated): entered in the ledger, so that mpv's report of it is not taken for a
    /// person's, and sent unless mpv was last asked for it. A seek is clamped to the item, past
    /// its end to its last frame (`seek(to:now:)`): an exact seek to the end itself finds no
    /// frame to land on, and mpv stops short of it.
    public mutating func onOwnRequest(_ request: Request, now: HostInstant) -> [Directive] {
        switch request {
        case .pause(true):
            guard !paused || !ledger.paused else { return [] }
            paused = true
            ledger.requestPause(true, at: now)
            return [.send(.pause(true))]
        case .pause(false):
            guard paused || ledger.paused else { return [] }
            paused = false
            pausedForProposal = nil
            ledger.requestPause(false, at: now)
            return [.send(.pause(false))]
        case .speed(let speed):
            return correctPitch(forRate: speed) + setSpeed(speed, now: now)
        case .seek(let target):
            return [seek(to: target, now: now).0]
        case .pitchCorrection, .read, .load:
            return [.send(request)]
        }
    }

    /// A seek of the program's own (`onOwnRequest(_:now:)`'s), ended under `id`
    /// (`Directive.seekEnded`) once mpv has landed: at the first `playback-restart` after it
    /// whose reading finds mpv on the frame the seek lands on (the first at or after its target),
    /// or at `landingTimeout` (landed if mpv restarted elsewhere meanwhile). mpv answers a seek
    /// command as it queues it, and until the seek runs it reads as not seeking, where it was: a
    /// restart of an earlier seek's, come late, is not this seek's landing.
    public mutating func onOwnSeek(to target: ItemTime, id: UInt64, now: HostInstant) -> [Directive] {
        let (sending, target) = seek(to: target, now: now)
        ownSeeks.append(OwnSeek(id: id, target: target, sentAt: now, restarts: restarts, restarted: false))
        return finish([sending], now)
    }

    /// A landing's reading (`reading`, of a restart at `restartedAt`): the program's own seeks
    /// sent before that restart end if mpv is on the frame each lands on, or wait for the next
    /// restart.
    mutating func ownSeeksLanded(_ reading: Reading, restartedAt: HostInstant) -> [Directive] {
        var ended: [Directive] = []
        // How far mpv may have played on since the restart, while it plays.
        let since = ledger.paused ? TimeSpan.zero : max(.zero, reading.at - restartedAt) * ledger.speed
        ownSeeks = ownSeeks.compactMap { seek in
            guard seek.restarts != restarts else { return seek }
            let landing = (seek.target - configuration.landingTolerance)...(seek.target + item.frameDuration + configuration.landingTolerance + since)
            guard let position = reading.position, landing.contains(position) else {
                var waiting = seek
                waiting.restarts = restarts
                waiting.restarted = waiting.restarted || reading.position != nil
                return waiting
            }
            ended.append(.seekEnded(seek.id, landed: true))
            return nil
        }
        return ended
    }

    // MARK: Buffering

    /// mpv's `paused-for-cache` changed. While the group plays, mpv waiting for its cache (a
    /// stream arriving too slowly) is a stall, as the built-in player's running out of decoded
    /// frames is: a `.stallRecovery` suspension, which the group waits for (as its
    /// `suspensionReasonsThatTriggerWaiting` say), ended once mpv has its cache again; the
    /// coordinator then hands mpv the group's timeline a pre-roll ahead, and mpv starts on it.
    mutating func cache(_ waiting: Bool, now: HostInstant) -> [Directive] {
        pausedForCache = waiting
        switch Self.stallChange(waiting: waiting, stalled: isStalled, groupPlays: (timeline?.rate ?? 0) > 0) {
        case true?:
            isStalled = true
            statistics.stalls += 1
            return abandonOperation() + [.beginStall, .show([Self.bufferingText])]
        case false?:
            isStalled = false
            return [.endStall]
        case nil:
            return []
        }
    }

    /// Whether mpv's `paused-for-cache` becoming `waiting` begins a stall (true), ends one
    /// (false) or changes nothing (nil), for a participant `stalled` already or not, in a group
    /// that plays or not: a stall begins only while the group plays, once, and ends when mpv has
    /// its cache again.
    public static func stallChange(waiting: Bool, stalled: Bool, groupPlays: Bool) -> Bool? {
        if waiting, !stalled, groupPlays { return true }
        if !waiting, stalled { return false }
        return nil
    }

    /// What mpv's screen shows while the group waits for its buffering.
    public static let bufferingText = "Buffering: the group waits"


    // MARK: The item

    /// mpv has loaded `loaded` (a group's command for it, or a replacement the shell made): the
    /// decisions follow it, and a command that waited for it is carried out.
    public mutating func onItemLoaded(_ loaded: Item, now: HostInstant) -> [Directive] {
        if let sent = loadSentAt { lastLoadTook = now - sent }
        loadSentAt = nil
        item = loaded
        policy = itemPolicy
        followedVersion = nil
        prerolled = nil
        availableItems.insert(loaded.identifier)
        failedItems.remove(loaded.identifier)
        guard case .loading(let identifier, let command, let id) = operation, identifier == loaded.identifier else { return finish([], now) }
        replace(with: .none)
        return finish(carryOut(command, id: id, now: now), now)
    }

    /// mpv could not load `identifier` for the group: its command is stale, and the item is not
    /// tried again until given again.
    public mutating func onItemFailed(_ identifier: String, now: HostInstant) -> [Directive] {
        failedItems.insert(identifier)
        loadSentAt = nil
        guard case .loading(identifier, _, let id) = operation else { return finish([], now) }
        replace(with: .none)
        return finish([.complete(command: id)], now)
    }

    /// The shell begins loading an item (`loadfile`): its first `playback-restart` is a seek of
    /// Tandem's, to the start.
    public mutating func onLoadBegan(now: HostInstant) -> [Directive] {
        ledger.requestSeek(to: .zero, at: now)
        settleUntil = now + .seconds(2)
        followedVersion = nil
        return finish([], now)
    }
}
