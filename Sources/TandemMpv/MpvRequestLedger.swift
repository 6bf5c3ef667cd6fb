import TandemClock

/// Tells the changes that Tandem asked mpv for from the changes that a person made in mpv itself,
/// so that only the person's are proposed to the group, and the group's own commands and the
/// correction loop's nudges and seeks never echo back as new proposals.
///
/// A pure value: the player records each request (what it asked for, and when, on the raw
/// monotonic clock) before sending it, and hands over each change that mpv reports, stamped with
/// when it arrived. A reported change is Tandem's own when it matches a request sent before it
/// arrived and at most `window` earlier; matching consumes that request and every older one of the
/// same kind (mpv coalesces quick successive requests into one change, so the older ones will
/// never be reported). Anything else is the person's, and becomes the state mpv is in.
public struct MpvRequestLedger: Sendable, Equatable {
    /// A change that mpv reported.
    public enum Observation: Sendable, Equatable {
        /// `pause` changed.
        case pause(Bool)
        /// `speed` changed.
        case speed(Double)
        /// A seek finished (`playback-restart`) with playback at this media time (ns).
        case seekLanded(at: Int64)
        /// `eof-reached` changed: with `--keep-open`, mpv pauses itself at the end of the file.
        case endReached(Bool)
    }

    /// What the person did, to propose to the group.
    public enum UserAction: Sendable, Equatable {
        /// Paused (true) or resumed (false) playback.
        case setPaused(Bool)
        /// Changed the speed to this.
        case setSpeed(Double)
        /// Moved to this media time (ns).
        case seek(to: Int64)
    }

    private struct Request<Value: Sendable & Equatable>: Sendable, Equatable {
        var value: Value
        var sentAt: HostInstant
    }

    /// How long after a request mpv's report of it may still arrive (ns).
    public var window: Int64 = 2_000_000_000
    /// How far a seek may land from where it was asked to (ns): mpv's exact seeks land on the
    /// frame, but a landing is read a moment after playback restarted.
    public var seekTolerance: Int64 = 250_000_000
    /// How close two speeds count as the same (mpv reports six decimals).
    public var speedTolerance: Double = 0.000_05

    /// Whether mpv is paused, as last reported (or assumed at the start).
    public private(set) var paused: Bool
    /// mpv's speed, as last reported.
    public private(set) var speed: Double
    /// Whether mpv is at the end of the file.
    public private(set) var endReached = false

    private var pauseRequests: [Request<Bool>] = []
    private var speedRequests: [Request<Double>] = []
    private var seekRequests: [Request<Int64>] = []

    /// A ledger for an mpv that is `paused` at `speed`, with nothing asked yet.
    public init(paused: Bool, speed: Double) {
        self.paused = paused
        self.speed = speed
    }

    /// Records that Tandem is about to set `pause` to `value`, at `time`.
    public mutating func requestPause(_ value: Bool, at time: HostInstant) {
        pauseRequests.append(Request(value: value, sentAt: time))
    }

    /// Records that Tandem is about to set `speed` to `value`, at `time`.
    public mutating func requestSpeed(_ value: Double, at time: HostInstant) {
        speedRequests.append(Request(value: value, sentAt: time))
    }

    /// Records that Tandem is about to seek to `target`, at `time`.
    public mutating func requestSeek(to target: ItemTime, at time: HostInstant) {
        seekRequests.append(Request(value: target.nanoseconds, sentAt: time))
    }

    /// Whether a request of Tandem's is still waiting to be reported (a seek in flight, say).
    public func hasPendingSeek(at time: HostInstant) -> Bool {
        seekRequests.contains { time - $0.sentAt <= TimeSpan(nanoseconds: window) }
    }

    /// Classifies a change that mpv reported at `time`: nil when it is Tandem's own (or no change
    /// at all), the person's action otherwise.
    public mutating func observe(_ observation: Observation, at time: HostInstant) -> UserAction? {
        expire(before: time - TimeSpan(nanoseconds: window))
        switch observation {
        case .endReached(let reached):
            endReached = reached
            return nil
        case .pause(let value):
            defer { paused = value }
            guard value != paused else { return nil }
            if Self.consume(&pauseRequests, at: time, where: { $0 == value }) { return nil }
            // With --keep-open, mpv pauses itself at the end of the file.
            if value, endReached { return nil }
            return .setPaused(value)
        case .speed(let value):
            defer { speed = value }
            guard abs(value - speed) > speedTolerance else { return nil }
            if Self.consume(&speedRequests, at: time, where: { abs($0 - value) <= speedTolerance }) { return nil }
            return .setSpeed(value)
        case .seekLanded(let position):
            if Self.consume(&seekRequests, at: time, where: { Self.distance($0, position) <= UInt64(max(0, seekTolerance)) }) { return nil }
            return .seek(to: position)
        }
    }

    /// Finds the oldest request that `matches` and was sent by `time`; removes it and everything
    /// older, and says whether there was one.
    private static func consume<Value>(_ requests: inout [Request<Value>], at time: HostInstant,
                                       where matches: (Value) -> Bool) -> Bool {
        guard let index = requests.firstIndex(where: { $0.sentAt <= time && matches($0.value) }) else { return false }
        requests.removeSubrange(...index)
        return true
    }

    /// How far apart `a` and `b` are, for any two values (a landing that mpv reports can be
    /// anything: `abs(a - b)` would trap at the extremes).
    static func distance(_ a: Int64, _ b: Int64) -> UInt64 {
        a >= b ? UInt64(bitPattern: a &- b) : UInt64(bitPattern: b &- a)
    }

    private mutating func expire(before cutoff: HostInstant) {
        pauseRequests.removeAll { $0.sentAt < cutoff }
        speedRequests.removeAll { $0.sentAt < cutoff }
        seekRequests.removeAll { $0.sentAt < cutoff }
    }
}

extension MpvRequestLedger {
    /// `requestPause(_:at:)` at a host instant in bare nanoseconds.
    @available(*, deprecated, message: "pass a HostInstant")
    public mutating func requestPause(_ value: Bool, at time: Int64) {
        requestPause(value, at: HostInstant(nanoseconds: time))
    }

    /// `requestSpeed(_:at:)` at a host instant in bare nanoseconds.
    @available(*, deprecated, message: "pass a HostInstant")
    public mutating func requestSpeed(_ value: Double, at time: Int64) {
        requestSpeed(value, at: HostInstant(nanoseconds: time))
    }

    /// `requestSeek(to:at:)` with the item time and the host instant in bare nanoseconds.
    @available(*, deprecated, message: "pass an ItemTime and a HostInstant")
    public mutating func requestSeek(to target: Int64, at time: Int64) {
        requestSeek(to: ItemTime(nanoseconds: target), at: HostInstant(nanoseconds: time))
    }

    /// `hasPendingSeek(at:)` at a host instant in bare nanoseconds.
    @available(*, deprecated, message: "pass a HostInstant")
    public func hasPendingSeek(at time: Int64) -> Bool {
        hasPendingSeek(at: HostInstant(nanoseconds: time))
    }

    /// `observe(_:at:)` at a host instant in bare nanoseconds.
    @available(*, deprecated, message: "pass a HostInstant")
    public mutating func observe(_ observation: Observation, at time: Int64) -> UserAction? {
        observe(observation, at: HostInstant(nanoseconds: time))
    }
}
