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
            engine.scheduleLocked(timeline, discontinuous: jump, now: .now())
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

    /// Moves to `itemTime`, keeping the rate, as AVPlayer's `seek(to:)`: now (while playing,
    /// landing `Options.seekLead` ahead), or, coordinated, the group is asked to. A failure is
    /// published as `error`; `setPosition(_:)` throws it instead.
    public func seek(to itemTime: ItemTime) {
        reportingFailure { () throws(MediaError) in try setPosition(itemTime) }
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

    /// Plays at `rate` from the current position, at host instant `hostTime`. Throws
    /// `MediaError.notWhileCoordinated` while coordinated.
    public func play(rate: Double = 1, at hostTime: HostInstant) throws(MediaError) {
        guard !playbackCoordinator.isCoordinating else { throw MediaError.notWhileCoordinated("play(at:)") }
        guard rate > 0 else { throw MediaError.invalidArgument("rate", "play needs a rate above 0; use pause") }
        try changeRate(to: rate, at: hostTime)
    }

    /// Pauses at the current position, at host instant `hostTime`. Throws
    /// `MediaError.notWhileCoordinated` while coordinated.
    public func pause(at hostTime: HostInstant) throws(MediaError) {
        guard !playbackCoordinator.isCoordinating else { throw MediaError.notWhileCoordinated("pause(at:)") }
        try changeRate(to: 0, at: hostTime)
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

    /// Changes the rate (0 pauses), keeping the media position, at host instant `hostTime`.
    /// Throws `MediaError.notWhileCoordinated` while coordinated.
    public func setRate(_ rate: Double, at hostTime: HostInstant) throws(MediaError) {
        guard !playbackCoordinator.isCoordinating else { throw MediaError.notWhileCoordinated("setRate(_:at:)") }
        try changeRate(to: rate, at: hostTime)
    }

    /// Moves to `itemTime`, keeping the rate; coordinated, asks the group to. While playing, the
    /// jump is scheduled a moment ahead (`Options.seekLead`), so that it lands on time. The
    /// throwing form of `seek(to:)`.
    public func setPosition(_ itemTime: ItemTime) throws(MediaError) {
        if playbackCoordinator.isCoordinating {
            try propose("seek to \(Double(itemTime.nanoseconds) / 1e9) s") { try playbackCoordinator.proposeSeek(to: itemTime) }
            return
        }
        try seekLocally(to: itemTime, at: nil)
    }

    /// Moves to `itemTime`, keeping the rate, at host instant `hostTime`. Throws
    /// `MediaError.notWhileCoordinated` while coordinated.
    public func seek(to itemTime: ItemTime, at hostTime: HostInstant) throws(MediaError) {
        guard !playbackCoordinator.isCoordinating else { throw MediaError.notWhileCoordinated("seek(to:at:)") }
        try seekLocally(to: itemTime, at: hostTime)
    }

    private func seekLocally(to itemTime: ItemTime, at hostTime: HostInstant?) throws(MediaError) {
        let now = HostInstant.now()
        let current = timeline
        let instant = hostTime ?? (current.rate > 0 ? now + options.seekLead : now)
        try setTimeline(PresentationTimeline(rate: current.rate, anchorItemTime: itemTime, anchorHostTime: instant),
                        discontinuous: true)
    }

    private func changeRate(to rate: Double, at hostTime: HostInstant?) throws(MediaError) {
        let changed = engine.lock.withLock {
            let newest = engine.schedule.newest
            let instant = max(hostTime ?? .now(), newest.anchorHostTime)
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

extension HeadlessPlayer {
    /// `seek(to:)` to an item time in bare nanoseconds.
    @available(*, deprecated, message: "pass an ItemTime")
    public func seek(to mediaTime: Int64) {
        seek(to: ItemTime(nanoseconds: mediaTime))
    }

    /// `play(rate:at:)` at a host instant in bare nanoseconds.
    @available(*, deprecated, message: "pass a HostInstant")
    public func play(rate: Double = 1, at localTime: Int64) throws(MediaError) {
        try play(rate: rate, at: HostInstant(nanoseconds: localTime))
    }

    /// `pause(at:)` at a host instant in bare nanoseconds.
    @available(*, deprecated, message: "pass a HostInstant")
    public func pause(at localTime: Int64) throws(MediaError) {
        try pause(at: HostInstant(nanoseconds: localTime))
    }

    /// `setRate(_:at:)` at a host instant in bare nanoseconds.
    @available(*, deprecated, message: "pass a HostInstant")
    public func setRate(_ rate: Double, at localTime: Int64) throws(MediaError) {
        try setRate(rate, at: HostInstant(nanoseconds: localTime))
    }

    /// `setPosition(_:)` to an item time in bare nanoseconds.
    @available(*, deprecated, message: "pass an ItemTime")
    public func setPosition(_ mediaTime: Int64) throws(MediaError) {
        try setPosition(ItemTime(nanoseconds: mediaTime))
    }

    /// `seek(to:at:)` with the item time and the host instant in bare nanoseconds.
    @available(*, deprecated, message: "pass an ItemTime and a HostInstant")
    public func seek(to mediaTime: Int64, at localTime: Int64) throws(MediaError) {
        try seek(to: ItemTime(nanoseconds: mediaTime), at: HostInstant(nanoseconds: localTime))
    }
}
