import TandemPlayback

/// The correction loop: while the group plays, measure where mpv is against where the timeline
/// says it should be, and let `CorrectionPolicy` decide between leaving it, nudging its speed and
/// seeking.
extension MpvPlayer {
    func correct() async {
        takeTick()
        let now = MonotonicClock.now()
        let (rate, ready) = state.withLock { state in
            (state.groupRate, !state.ledger.paused && state.hold == nil && now >= state.settleUntil && !state.closed)
        }
        guard rate > 0, ready, playbackCoordinator.timeline.rate > 0,
              let clock = playbackCoordinator.localClock,
              let measured = await measurePosition(),
              let expected = playbackCoordinator.expectedItemTime(atLocalTime: clock.localTime(atMonotonic: measured.at))
        else { return }
        // Past the end, mpv holds the last frame: nothing to correct.
        if let duration, expected >= duration - 200_000_000 { return }
        let action = state.withLock { state -> CorrectionPolicy.Action? in
            // Something changed while measuring (a command, a person, a seek): measure again next time.
            guard state.groupRate == rate, state.hold == nil, !state.ledger.paused, MonotonicClock.now() >= state.settleUntil else {
                return nil
            }
            state.statistics.measurements += 1
            state.statistics.lastError = measured.position - expected
            return state.policy.decide(playerTime: measured.position, expectedTime: expected, rate: rate)
        }
        switch action {
        case nil:
            return
        case .none?:
            await setSpeed(rate)
        case .nudge(let nudged)?:
            let changed = state.withLock { abs($0.requestedSpeed - nudged) > 0.000_5 }
            if changed {
                state.withLock { $0.statistics.nudges += 1 }
                await setSpeed(nudged)
            }
        case .seek?:
            state.withLock { $0.statistics.correctiveSeeks += 1 }
            await setSpeed(rate)
            let lead = state.withLock { $0.seekLead }
            let landing = clock.localTime(atMonotonic: MonotonicClock.now() + lead)
            guard let target = playbackCoordinator.expectedItemTime(atLocalTime: landing) else { return }
            await seek(to: target, settling: true)
        }
    }
}
