import TandemClock
import TandemPlayback

/// Carrying out the coordinator's commands, and the requests to mpv that every part shares. Each
/// request is entered in the ledger before it is sent, so that mpv's report of it is known as ours.
extension MpvPlayer {
    func carryOut(_ command: PlaybackCommand, serial: Int, rejoin: Bool, prerolls: Bool = false) async {
        // A command for another item is stale: completed, not applied.
        if let expected = command.expectedCurrentItemIdentifier, expected != itemIdentifier { return }
        let now = MonotonicClock.now()
        let stale = state.withLock { state -> Bool in
            guard let hold = state.hold else { return false }
            if command.version > hold.version || now > hold.until {
                state.hold = nil
                return false
            }
            return true
        }
        // The group has not answered the person's change yet: this command predates it.
        guard !stale else { return }
        switch command {
        case .play(let command): await play(command)
        case .pause(let command): await pause(command)
        case .seek(let seek) where prerolls: await preroll(to: seek.itemTime.nanoseconds)
        // Ahead of a play, answering a change this mpv's person made: mpv plays on from where
        // the person put it and seeks as it starts (`start`).
        case .seek(let seek) where seek.shouldBufferInAnticipationOfPlayback: return
        case .seek(let seek): await seekWhilePaused(to: seek.itemTime.nanoseconds)
        case .buffer(let buffer): await seekWhilePaused(to: buffer.itemTime.nanoseconds)
        }
    }

    /// Play: be at `itemTime` at `hostTime`, at `rate`.
    ///
    /// mpv already playing at the group's rate close to the timeline is the correction loop's:
    /// within the policy's seek threshold when the command re-issues the timeline mpv follows
    /// (the coordinator does so every second), within `trimLimit` when the timeline is new (a
    /// person's seek in mpv, come back from the group). Otherwise (mpv paused, the group seeked
    /// or changed its rate) mpv starts afresh on the timeline. A change of rate is a start too:
    /// a speed change while playing moves mpv's audio clock by the sound already in its output
    /// times the change (170 to 370 ms × the change with `--ao=null`), tens of ms for a change
    /// a person makes; after a seek the output is empty, and the new speed starts exactly.
    ///
    /// The command's rate is in media seconds per host second (the session clock's drift in it,
    /// which changes by parts per million as the estimate improves): a rate within
    /// `sameRateTolerance` of the one mpv follows is the same rate.
    private func play(_ command: PlayCommand) async {
        // Earlier by the latency offset: mpv's output then plays it at the command's instant.
        let host = command.hostTime.nanoseconds.saturatingSubtracting(latencyOffset)
        let itemTime = command.itemTime.nanoseconds
        let (paused, groupRate, speed, followed) = state.withLock { ($0.paused, $0.groupRate, $0.requestedSpeed, $0.followedVersion) }
        if !paused, groupRate > 0, abs(command.rate - groupRate) <= Self.sameRateTolerance * groupRate,
           let measured = await preciseReading() {
            // Where mpv will be at the command's instant, going on as it goes.
            let predicted = measured.position.saturatingAdding(host.saturatingSubtracting(measured.at).saturatingScaled(by: speed))
            let limit = command.version == followed ? correctionPolicy.seekThreshold : Self.trimLimit
            if predicted.saturatingDistance(to: itemTime) <= limit {
                state.withLock {
                    $0.followedVersion = command.version
                    $0.groupRate = command.rate
                }
                return
            }
        }
        state.withLock { $0.groupRate = command.rate }
        await start(itemTime: itemTime, at: host, rate: command.rate, version: command.version)
    }

    /// How far apart (relative) two rates may be and still be one rate: 0.1 ‰, well above a
    /// clock's drift and well below any rate a person asks for.
    static let sameRateTolerance = 1e-4

    /// Pause at `hostTime`, showing `itemTime`.
    private func pause(_ command: PauseCommand) async {
        guard await wait(until: command.hostTime.nanoseconds.saturatingSubtracting(latencyOffset), version: command.version) else { return }
        state.withLock {
            $0.groupRate = 0
            $0.pausedForProposal = nil
            $0.liningUp = false
        }
        await setPaused(true)
        await seekWhilePaused(to: command.itemTime.nanoseconds)
    }

    /// Moves a paused mpv to `target`, unless it is within `tolerance` of it already; true when
    /// mpv is there (it was, or the seek landed).
    @discardableResult
    func seekWhilePaused(to target: Int64, within tolerance: Int64 = 2_000_000) async -> Bool {
        // The group is paused: mpv stays so (a person's proposal it paused for is answered).
        state.withLock { $0.pausedForProposal = nil }
        if state.withLock({ !$0.paused }) { await setPaused(true) }
        let position = await measurePosition()?.position
        guard position.map({ $0.saturatingDistance(to: target) > tolerance }) ?? true else { return true }
        return await seek(to: target, learning: false)
    }

    /// A seek in anticipation of playback, while the group waits to play: mpv pauses and seeks
    /// to `target` now, and the command completes once it has landed (or after the landing's
    /// 2 s), so that the group's play waits for the seek rather than starting 30 ms after it
    /// was heard, before mpv could be there. The play that follows unpauses on the frame landed
    /// on without seeking again (`start`). What mpv showed of the old timeline stops at the
    /// pause, up to the change's instant earlier than the others, as the built-in player's
    /// pre-roll does: the change's instant is the end of what the group watched there, the
    /// group waits for the slowest anyway.
    ///
    /// Not for the group's answer to a change this mpv's person made (the player's `hold` set
    /// when the command came: `playbackCoordinator(_:didIssue:completion:)`): mpv is there
    /// already, playing on from where the person put it until its start must begin (the
    /// group's answer may take effect a second later: `start`), where a pre-roll would stand
    /// it still all that time.
    ///
    /// Why not seek as the play starts: a seek takes mpv tens of milliseconds to land, longer
    /// on a busy machine, so a start aimed past the slowest landing would come in late whenever
    /// a landing was slower still.
    func preroll(to target: Int64) async {
        // mpv stands lined up from now until the start that follows unpauses it.
        state.withLock { $0.liningUp = true }
        guard await seekWhilePaused(to: target, within: Self.landingTolerance) else { return }
        state.withLock { $0.prerolledAtRestart = $0.restarts }
    }

    /// Sleeps until the raw monotonic instant `instant`; false when a command of another
    /// timeline version than `version` arrived or a person's change is waiting for the group
    /// meanwhile (the waiting command is then superseded). A sleep wakes up to a millisecond or
    /// more late on a busy machine, so the last `spinLead` is spent yielding, looking at the
    /// clock: the wake-up is then within a few µs of `instant`.
    func wait(until instant: Int64, version: UInt64) async -> Bool {
        // Bounded: at most the distance to the instant, in steps of 5 ms (a newer command waits
        // no longer than that for this one to give way).
        let steps = max(0, instant.saturatingSubtracting(MonotonicClock.now()) / 5_000_000 + 2)
        for _ in 0..<steps {
            if !isCurrent(version) { return false }
            let remaining = instant.saturatingSubtracting(MonotonicClock.now()).saturatingSubtracting(Self.spinLead)
            guard remaining > 0 else { break }
            try? await Task.sleep(for: .nanoseconds(min(remaining, 5_000_000)))
        }
        // Bounded: the spin lasts at most `spinLead` (a yield takes at least a µs).
        for _ in 0..<Int(Self.spinLead / 1_000) where MonotonicClock.now() < instant {
            await Task.yield()
        }
        return isCurrent(version)
    }

    /// How long before an instant `wait(until:version:)` stops sleeping and starts yielding (ns).
    static let spinLead: Int64 = 2_000_000

    /// Whether a command of `version` is still the one to carry out: no newer command, no
    /// person's proposal held for (`hold`), the player open.
    func isCurrent(_ version: UInt64) -> Bool {
        state.withLock { $0.latestVersion == version && $0.hold == nil && !$0.closed }
    }

    // MARK: Requests

    /// Sets mpv's `pause`, unless it is already so; mpv's reply to the change, if one was sent.
    @discardableResult
    func setPaused(_ paused: Bool) async -> MpvConnection.Reply? {
        let send = state.withLock { state in
            guard state.paused != paused else { return false }
            state.ledger.requestPause(paused, at: MonotonicClock.now())
            // Still from now on; moving only once mpv says so (see `DriverState.paused`).
            if paused { state.paused = true } else { state.pausedForProposal = nil }
            return true
        }
        guard send else { return nil }
        let reply = try? await connection.set("pause", .bool(paused))
        if !paused, reply != nil { state.withLock { $0.paused = false } }
        return reply
    }

    /// Sets mpv's `speed` (to four decimals), unless it was last asked for that; mpv's reply to
    /// the change, if one was sent.
    @discardableResult
    func setSpeed(_ speed: Double) async -> MpvConnection.Reply? {
        let speed = (speed * 10_000).rounded() / 10_000
        let send = state.withLock { state in
            guard abs(state.requestedSpeed - speed) > 0.000_05 || abs(state.ledger.speed - speed) > 0.000_05 else { return false }
            state.requestedSpeed = speed
            state.ledger.requestSpeed(speed, at: MonotonicClock.now())
            return true
        }
        guard send else { return nil }
        return try? await connection.set("speed", .number(speed))
    }

    /// Seeks mpv to `target` (ns) exactly and waits (up to 2 s) for it to land; true if it did.
    /// `learning`, the landing teaches the player how long seeks take (see
    /// `DriverState.seekLead`).
    @discardableResult
    func seek(to target: Int64, learning: Bool) async -> Bool {
        guard let sent = await sendSeek(to: target) else { return false }
        return await waitForLanding(sent, learning: learning)
    }

    /// A seek that mpv took: when it was sent, and how many restarts there had been before it.
    struct SentSeek {
        let sentAt: Int64
        let restarts: Int
    }

    /// Asks mpv to seek to `target` (ns) exactly, without waiting for it to land; nil if mpv
    /// refused.
    func sendSeek(to target: Int64) async -> SentSeek? {
        // Not past the last frame: mpv would land on it, and the ledger would take the landing,
        // so far from the target, for a person's seek (and propose it: a start on a timeline
        // that runs past the end of the file, as the group's does until it moves on, would
        // then be proposed back and forth between participants).
        let target = max(0, min(target, (duration ?? .max).saturatingSubtracting(frameDuration)))
        let sent = state.withLock { state in
            let now = MonotonicClock.now()
            state.ledger.requestSeek(to: target, at: now)
            state.settleUntil = now + 2_000_000_000
            return SentSeek(sentAt: now, restarts: state.restarts)
        }
        guard (try? await connection.command(["seek", .number(Double(target) / 1e9), "absolute", "exact"])) != nil else { return nil }
        return sent
    }

    /// Waits (up to 2 s) for the seek `sent` to land (mpv's `playback-restart`, looked for every
    /// 2 ms: a start waits on it); true if it did.
    @discardableResult
    func waitForLanding(_ sent: SentSeek, learning: Bool) async -> Bool {
        let (sentAt, restarts) = (sent.sentAt, sent.restarts)
        var landed = false
        // Bounded: 1000 steps of 2 ms.
        for _ in 0..<1000 {
            let (restarted, closed) = state.withLock { ($0.restarts != restarts, $0.closed) }
            if restarted { landed = true }
            if restarted || closed { break }
            try? await Task.sleep(for: .milliseconds(2))
        }
        let now = MonotonicClock.now()
        state.withLock { state in
            state.settleUntil = now + 200_000_000
            guard learning, landed else { return }
            state.seekLead = MpvMachine.learnedSeekLead(TimeSpan(nanoseconds: state.seekLead), took: TimeSpan(nanoseconds: now - sentAt)).nanoseconds
        }
        return landed
    }
}
