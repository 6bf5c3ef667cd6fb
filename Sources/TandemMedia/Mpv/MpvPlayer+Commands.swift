import TandemClock
import TandemPlayback

/// Carrying out the coordinator's commands, and the requests to mpv that every part shares. Each
/// request is entered in the ledger before it is sent, so that mpv's report of it is known as ours.
extension MpvPlayer {
    func carryOut(_ command: PlaybackCommand, serial: Int, rejoin: Bool) async {
        // A command for another item is stale: completed, not applied.
        if let expected = command.expectedCurrentItemIdentifier, expected != itemIdentifier { return }
        guard let clock = playbackCoordinator.localClock else { return }
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
        if options.following == .onReceipt {
            await carryOutOnReceipt(command, rejoin: rejoin)
            return
        }
        switch command {
        case .play(let command): await play(command, clock: clock, serial: serial)
        case .pause(let command): await pause(command, clock: clock, serial: serial)
        case .seek(let seek): await seekWhilePaused(to: seek.itemTime)
        case .buffer(let buffer): await seekWhilePaused(to: buffer.itemTime)
        }
    }

    /// Play: be at `itemTime` at `hostTime`, at `rate`.
    private func play(_ command: PlayCommand, clock: any MonotonicDerivedClock, serial: Int) async {
        let host = clock.monotonicTime(atLocal: command.hostTime)
        let (paused, seekLead) = state.withLock { state in
            state.groupRate = command.rate
            state.policy = options.correctionPolicy
            return (state.ledger.paused, state.seekLead)
        }
        await setSpeed(command.rate)
        func target(at instant: Int64) -> Int64 {
            command.itemTime + Int64((Double(instant - host) * command.rate).rounded())
        }
        if !paused {
            // Already playing (the group re-mapped its timeline, changed the rate or seeked):
            // small errors are the correction loop's; a large one is a seek now.
            guard let measured = await measurePosition() else { return }
            let error = measured.position - target(at: measured.at)
            guard abs(error) > 2 * options.correctionPolicy.correctionThreshold else { return }
            let landing = MonotonicClock.now() + seekLead
            await seek(to: target(at: landing), settling: true)
            return
        }
        // Paused: line up at the start position, then unpause at the command's instant.
        let start = max(host, MonotonicClock.now() + seekLead)
        let position = await measurePosition()?.position
        if position.map({ abs($0 - target(at: start)) > 2_000_000 }) ?? true {
            await seek(to: target(at: start), settling: false)
        }
        guard await wait(until: start, serial: serial) else { return }
        state.withLock { $0.settleUntil = start + 200_000_000 }
        await setPaused(false)
    }

    /// Pause at `hostTime`, showing `itemTime`.
    private func pause(_ command: PauseCommand, clock: any MonotonicDerivedClock, serial: Int) async {
        guard await wait(until: clock.monotonicTime(atLocal: command.hostTime), serial: serial) else { return }
        state.withLock { $0.groupRate = 0 }
        await setPaused(true)
        await seekWhilePaused(to: command.itemTime)
    }

    /// Moves a paused mpv to `target`, unless it is there already.
    func seekWhilePaused(to target: Int64) async {
        if state.withLock({ !$0.ledger.paused }) { await setPaused(true) }
        let position = await measurePosition()?.position
        if position.map({ abs($0 - target) > 2_000_000 }) ?? true {
            await seek(to: target, settling: false)
        }
    }

    /// Sleeps until the raw monotonic instant `instant`; false when a newer command arrived or a
    /// person's change is waiting for the group meanwhile (this command is then superseded).
    private func wait(until instant: Int64, serial: Int) async -> Bool {
        // Bounded: at most the distance to the instant, in steps of 20 ms.
        let steps = max(0, (instant - MonotonicClock.now()) / 20_000_000 + 1)
        for _ in 0..<steps {
            if !isCurrent(serial) { return false }
            let remaining = instant - MonotonicClock.now()
            guard remaining > 0 else { break }
            try? await Task.sleep(for: .nanoseconds(min(remaining, 20_000_000)))
        }
        return isCurrent(serial)
    }

    private func isCurrent(_ serial: Int) -> Bool {
        state.withLock { $0.latestCommand == serial && $0.hold == nil && !$0.closed }
    }

    // MARK: Requests

    /// Sets mpv's `pause`, unless it is already so.
    func setPaused(_ paused: Bool) async {
        let send = state.withLock { state in
            guard state.ledger.paused != paused else { return false }
            state.ledger.requestPause(paused, at: MonotonicClock.now())
            return true
        }
        if send { _ = try? await connection.set("pause", .bool(paused)) }
    }

    /// Sets mpv's `speed` (to four decimals), unless it was last asked for that.
    func setSpeed(_ speed: Double) async {
        let speed = (speed * 10_000).rounded() / 10_000
        let send = state.withLock { state in
            guard abs(state.requestedSpeed - speed) > 0.000_05 || abs(state.ledger.speed - speed) > 0.000_05 else { return false }
            state.requestedSpeed = speed
            state.ledger.requestSpeed(speed, at: MonotonicClock.now())
            return true
        }
        if send { _ = try? await connection.set("speed", .number(speed)) }
    }

    /// Seeks mpv to `target` (ns) exactly and waits (up to 2 s) for it to land. A seek while
    /// playing (`settling`) teaches the player how long seeks take, so that the next aims ahead.
    func seek(to target: Int64, settling: Bool) async {
        guard let sent = await sendSeek(to: target) else { return }
        await waitForLanding(sent, settling: settling)
    }

    /// A seek that mpv took: when it was sent, and how many restarts there had been before it.
    struct SentSeek {
        let sentAt: Int64
        let restarts: Int
    }

    /// Asks mpv to seek to `target` (ns) exactly, without waiting for it to land; nil if mpv
    /// refused.
    func sendSeek(to target: Int64) async -> SentSeek? {
        let target = max(0, target)
        let sent = state.withLock { state in
            let now = MonotonicClock.now()
            state.ledger.requestSeek(to: target, at: now)
            state.settleUntil = now + 2_000_000_000
            return SentSeek(sentAt: now, restarts: state.restarts)
        }
        guard (try? await connection.command(["seek", .number(Double(target) / 1e9), "absolute", "exact"])) != nil else { return nil }
        return sent
    }

    /// Waits (up to 2 s) for the seek `sent` to land.
    func waitForLanding(_ sent: SentSeek, settling: Bool) async {
        let (sentAt, restarts) = (sent.sentAt, sent.restarts)
        // Bounded: 100 steps of 20 ms.
        for _ in 0..<100 {
            if state.withLock({ $0.restarts != restarts || $0.closed }) { break }
            try? await Task.sleep(for: .milliseconds(20))
        }
        let landed = MonotonicClock.now()
        state.withLock { state in
            state.settleUntil = landed + 200_000_000
            if settling, state.restarts != restarts {
                state.seekLead = (state.seekLead * 3 + min(landed - sentAt, 1_000_000_000)) / 4
            }
        }
    }
}
