import Foundation
import TandemClock
import TandemPlayback
import TandemMediaTypes

/// The built-in player's transport: play, pause, rate and seek, proposed to the group while
/// coordinated and done on this player alone otherwise; `setTimeline` is the delegate's direct path.
extension HeadlessPlayer {
    /// Follows `timeline` from its anchor instant on (at once if that is not in the future): the
    /// low-level path a coordinator's delegate uses; it never goes to the group.
    ///
    /// - Parameter discontinuous: whether the media position jumps, so that the decoder must
    ///   seek; nil decides from how far the position moves.
    public func setTimeline(_ timeline: PresentationTimeline, discontinuous: Bool? = nil) throws(MediaError) {
        guard timeline.isValid else { throw MediaError.invalidArgument("rate", "\(timeline.rate) is outside 0.25...4") }
        engine.lock.withLock {
            let jump = discontinuous ?? !engine.isContinuousLocked(timeline)
            engine.scheduleLocked(timeline, discontinuous: jump, now: MonotonicClock.now())
        }
        refreshTimeControl()
    }

    // MARK: AVPlayer's transport

    /// Plays at rate 1 from the current position, as AVPlayer's `play()`: now, or, coordinated,
    /// the group is asked to. It does not throw: a failure is published as `error` (and on
    /// `$error.values`), as AVPlayer reports one; `play(rate:)` throws it instead.
    public func play() {
        reportingFailure { () throws(MediaError) in try play(rate: 1) }
    }

    /// Pauses at the current position, as AVPlayer's `pause()`: now, or, coordinated, the group
    /// is asked to. A failure is published as `error`; `setRate(0)` throws it instead.
    public func pause() {
        reportingFailure { () throws(MediaError) in try setRate(0) }
    }

    /// Moves to media time `mediaTime` (ns), keeping the rate, as AVPlayer's `seek(to:)`: now
    /// (while playing, landing `Options.seekLeadTime` ahead), or, coordinated, the group is
    /// asked to. A failure is published as `error`; `setPosition(_:)` throws it instead.
    public func seek(to mediaTime: Nanoseconds) {
        reportingFailure { () throws(MediaError) in try setPosition(mediaTime) }
    }

    /// The playback rate, as AVPlayer's: 0 while paused. Coordinated, the group's timeline's
    /// rate (the player's own timeline runs at it corrected for the session clock's drift);
    /// uncoordinated, the rate of the player's newest timeline. Setting it changes the rate from
    /// the current position (0 pauses), now, or, coordinated, asks the group to; a failure (a
    /// rate outside 0.25...4) is published as `error`, and `setRate(_:)` throws it instead.
    public var rate: Float {
        get { Float(playbackCoordinator.isCoordinating ? playbackCoordinator.timeline.rate : timeline.rate) }
        set { reportingFailure { () throws(MediaError) in try setRate(Double(newValue)) } }
    }

    /// Runs a transport request, publishing its failure as `error`.
    private func reportingFailure(_ body: () throws(MediaError) -> Void) {
        do {
            try body()
        } catch {
            self.error = error
        }
        refreshTimeControl()
    }

    // MARK: The throwing forms

    /// Plays at `rate` from the current position, now; coordinated, asks the group to. Throws
    /// what `play()` publishes as `error`.
    public func play(rate: Double) throws(MediaError) {
        guard rate > 0 else { throw MediaError.invalidArgument("rate", "play needs a rate above 0; use pause") }
        if playbackCoordinator.isCoordinating {
            try propose("play") { try playbackCoordinator.proposeRateChange(to: rate) }
            return
        }
        try changeRate(to: rate, at: nil)
    }

    /// Plays at `rate` from the current position, at local instant `at`. Throws
    /// `MediaError.notWhileCoordinated` while coordinated.
    public func play(rate: Double = 1, at localTime: Nanoseconds) throws(MediaError) {
        guard !playbackCoordinator.isCoordinating else { throw MediaError.notWhileCoordinated("play(at:)") }
        guard rate > 0 else { throw MediaError.invalidArgument("rate", "play needs a rate above 0; use pause") }
        try changeRate(to: rate, at: localTime)
    }

    /// Pauses at the current position, at local instant `at`. Throws
    /// `MediaError.notWhileCoordinated` while coordinated.
    public func pause(at localTime: Nanoseconds) throws(MediaError) {
        guard !playbackCoordinator.isCoordinating else { throw MediaError.notWhileCoordinated("pause(at:)") }
        try changeRate(to: 0, at: localTime)
    }

    /// Changes the rate (0 pauses), keeping the media position, now; coordinated, asks the group
    /// to. The throwing form of setting `rate` (and, with 0, of `pause()`).
    public func setRate(_ rate: Double) throws(MediaError) {
        if playbackCoordinator.isCoordinating {
            try propose("change the rate to \(rate)") { try playbackCoordinator.proposeRateChange(to: rate) }
            return
        }
        try changeRate(to: rate, at: nil)
    }

    /// Changes the rate (0 pauses), keeping the media position, at local instant `at`. Throws
    /// `MediaError.notWhileCoordinated` while coordinated.
    public func setRate(_ rate: Double, at localTime: Nanoseconds) throws(MediaError) {
        guard !playbackCoordinator.isCoordinating else { throw MediaError.notWhileCoordinated("setRate(_:at:)") }
        try changeRate(to: rate, at: localTime)
    }

    /// Moves to `mediaTime`, keeping the rate; coordinated, asks the group to. While playing, the
    /// jump is scheduled a moment ahead (`Options.seekLeadTime`), so that it lands on time. The
    /// throwing form of `seek(to:)`.
    public func setPosition(_ mediaTime: Nanoseconds) throws(MediaError) {
        if playbackCoordinator.isCoordinating {
            try propose("seek to \(MediaTime.seconds(mediaTime)) s") { try playbackCoordinator.proposeSeek(to: ItemTime(nanoseconds: mediaTime)) }
            return
        }
        try seekLocally(to: mediaTime, at: nil)
    }

    /// Moves to `mediaTime`, keeping the rate, at local instant `at`. Throws
    /// `MediaError.notWhileCoordinated` while coordinated.
    public func seek(to mediaTime: Nanoseconds, at localTime: Nanoseconds) throws(MediaError) {
        guard !playbackCoordinator.isCoordinating else { throw MediaError.notWhileCoordinated("seek(to:at:)") }
        try seekLocally(to: mediaTime, at: localTime)
    }

    private func seekLocally(to mediaTime: Nanoseconds, at localTime: Nanoseconds?) throws(MediaError) {
        let now = MonotonicClock.now()
        let current = timeline
        let instant = localTime ?? (current.rate > 0 ? now + options.seekLeadTime : now)
        try setTimeline(PresentationTimeline(rate: current.rate, anchorMediaTime: mediaTime, anchorLocalTime: instant),
                        discontinuous: true)
    }

    private func changeRate(to rate: Double, at localTime: Nanoseconds?) throws(MediaError) {
        let changed = engine.lock.withLock {
            let newest = engine.schedule.newest
            let instant = max(localTime ?? MonotonicClock.now(), newest.anchorLocalTime)
            return newest.changingRate(to: rate, at: instant)
        }
        try setTimeline(changed, discontinuous: false)
    }

    /// Runs a coordinator call, its error as a `MediaError`.
    func propose(_ change: String, _ call: () throws -> Void) throws(MediaError) {
        do {
            try call()
        } catch {
            throw MediaError.proposalRefused(change, "\(error)")
        }
    }
}
