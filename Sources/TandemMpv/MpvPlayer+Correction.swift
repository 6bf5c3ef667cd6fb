import TandemClock
import TandemPlayback

/// The correction loop: while the group plays, measure where mpv is against where the timeline
/// says it should be, and let `CorrectionPolicy` decide between leaving it, nudging its speed and
/// starting it afresh on the timeline (`MpvPlayer+Start.swift`), which lands exactly.
///
/// A nudge moves mpv's audio clock at once by −`outputLag` × the change (the sound already in
/// the output plays at the old speed), and back when the speed is restored, so a reading taken
/// during a nudge is off by that much from where mpv will be once the nudge ends. The policy is
/// given that position instead: so corrected, the error responds to the speed without delay,
/// and the loop neither overshoots nor oscillates. Each nudge measures the step, to learn the lag.
/// The step is real to mpv (its pictures are timed by that clock) and grows with the nudge: at
/// the policy's gain of 1 % per 10 ms it shows as 0.4 of the error being corrected, for as long
/// as the nudge lasts; a larger gain would correct sooner but show more.
extension MpvPlayer {
    /// A reading whose round trip took longer than this (ns) is not precise enough to correct by
    /// (it is good to half of it).
    static let correctionRoundTrip: Int64 = 1_000_000
    /// The smallest change of speed, as a fraction, whose step the lag is learned from: smaller
    /// steps drown in the readings' error.
    static let lagLearningChange = 0.005

    func correct() async {
        takeTick()
        let now = MonotonicClock.now()
        let ready = state.withLock { state in
            state.groupRate > 0 && !state.paused && state.hold == nil && now >= state.settleUntil && !state.closed
                && state.stallSuspension == nil
        }
        guard ready, let measured = await preciseReading() else { return }
        await correct(by: measured, settling: false)
    }

    /// Decides what to do about mpv's position `measured` and does it. `settling`: the reading
    /// was taken just after a start, while the loop still leaves mpv alone, to correct what the
    /// start left at once.
    func correct(by measured: Reading, settling: Bool) async {
        let (rate, version, offset) = state.withLock { ($0.groupRate, $0.latestVersion, $0.latencyOffset) }
        // The timeline shifted by the latency offset: where mpv should be, so that its output,
        // lagging by the offset, plays the group's position.
        guard rate > 0, measured.roundTrip <= Self.correctionRoundTrip, playbackCoordinator.timeline.rate > 0,
              let expected = playbackCoordinator.expectedItemTime(atHostTime: HostInstant(nanoseconds: measured.at.saturatingAdding(offset)))?.nanoseconds
        else { return }
        // Past the end, mpv holds the last frame: nothing to correct.
        if let duration, expected >= duration.saturatingSubtracting(200_000_000) { return }
        let decision = state.withLock { state -> (action: CorrectionPolicy.Action, speed: Double)? in
            // Something changed while measuring (a command, a person, a seek): measure again next time.
            guard state.groupRate == rate, state.hold == nil, !state.paused, settling || MonotonicClock.now() >= state.settleUntil else {
                return nil
            }
            let speed = state.requestedSpeed
            // Without sound the picture keeps time by itself: no output to drain, no step.
            let lag = TimeSpan(nanoseconds: hasAudio ? state.outputLag : 0)
            let settled = MpvMachine.settledPosition(ItemTime(nanoseconds: measured.position), speed: speed, rate: rate, outputLag: lag).nanoseconds
            state.statistics.measurements += 1
            state.statistics.lastError = settled.saturatingSubtracting(expected)
            return (state.policy.decide(playerTime: settled, expectedTime: expected, rate: rate), speed)
        }
        guard let (action, speed) = decision else { return }
        switch action {
        case .none:
            await changeSpeed(from: speed, to: rate, after: measured)
        case .nudge(let nudged):
            if abs(speed - nudged) > 0.000_05 {
                state.withLock { $0.statistics.nudges += 1 }
                await changeSpeed(from: speed, to: nudged, after: measured)
            }
        case .seek:
            state.withLock { $0.statistics.correctiveSeeks += 1 }
            // Start afresh on the timeline, from where it is now.
            let now = MonotonicClock.now()
            guard let position = playbackCoordinator.expectedItemTime(atHostTime: HostInstant(nanoseconds: now.saturatingAdding(offset)))?.nanoseconds
            else { return }
            await start(itemTime: position, at: now, rate: rate, version: version)
        }
    }

    /// Changes mpv's speed from `old` to `new` while playing and, for a change large enough,
    /// learns `outputLag` from the step the audio clock takes: `before` is a reading just
    /// before the change, another is taken just after it.
    private func changeSpeed(from old: Double, to new: Double, after before: Reading) async {
        guard let changed = await setSpeed(new) else { return }
        let change = new - old
        guard hasAudio, abs(change) >= Self.lagLearningChange * new,
              let after = await preciseReading(), after.roundTrip <= Self.correctionRoundTrip else { return }
        guard let lag = MpvMachine.learnedLag(before: ItemTime(nanoseconds: before.position), at: HostInstant(nanoseconds: before.at),
                                              after: ItemTime(nanoseconds: after.position), at: HostInstant(nanoseconds: after.at),
                                              changedAt: HostInstant(nanoseconds: changed.midpoint), old: old, new: new)?.nanoseconds
        else { return }
        state.withLock { $0.outputLag = ($0.outputLag + lag) / 2 }
    }
}
