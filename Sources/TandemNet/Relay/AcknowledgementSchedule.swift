import Foundation

/// When a side of the relay protocol acknowledges what it received, the same on both sides.
///
/// - At once, in a frame of its own, once `immediateFrames` frames or `immediateBytes` bytes of
///   payload are unacknowledged: what the peer keeps for a resumption stays bounded under load.
/// - With a frame going to the peer anyway (written in the same pass, so it costs no write of
///   its own), once `piggybackSpacing` has passed since the last acknowledgement: two-way
///   traffic is acknowledged about as often as that, and never by a frame of its own.
/// - Otherwise on the tick, at the first instant of the participant's phase (every `interval`)
///   after the frame that made it owed and at least half an interval after the last
///   acknowledgement (`due`): a one-way sender is acknowledged once an interval, at most
///   `interval` late; after an acknowledgement that rode on a frame, at most one and a half.
///
/// A frame received when nothing was owed starts the wait from its phase instant at or before
/// it (`advance`), not from the last acknowledgement, so that a peer that sends now and then is
/// acknowledged once per interval at most, not at once each time.
///
/// The phase comes from the participant's id, not from when something arrived: phases taken
/// from arrivals drift together (everyone who received the same broadcast would acknowledge on
/// the same tick), and a relay or a process with many participants would then write one
/// acknowledgement to each of them at once, every interval. Spread by id, a tick carries about
/// `participants × tick / interval` of them.
enum AcknowledgementSchedule {
    /// How many unacknowledged frames are acknowledged at once.
    static let immediateFrames: UInt64 = 64
    /// How many unacknowledged payload bytes are acknowledged at once.
    static let immediateBytes = 1024 * 1024

    /// Whether `frames` frames and `bytes` payload bytes owed call for an acknowledgement now.
    static func isPressing(frames: UInt64, bytes: Int) -> Bool { frames >= immediateFrames || bytes >= immediateBytes }

    /// How long after an acknowledgement the next may ride on a frame going out anyway: a
    /// quarter of the interval.
    static func piggybackSpacing(interval: Int64) -> Int64 { interval / 4 }

    /// Whether an owed acknowledgement rides on a frame going out at `now`, the last having gone
    /// at `acknowledgedAt`.
    static func mayPiggyback(acknowledgedAt: Int64, at now: Int64, interval: Int64) -> Bool {
        now - acknowledgedAt >= piggybackSpacing(interval: interval)
    }

    /// The instant, at or before `now`, from which a participant's first acknowledgement is
    /// counted: `now` less its phase within the interval.
    static func start(_ id: UUID, at now: Int64, interval: Int64) -> Int64 {
        guard interval > 0 else { return now }
        let bits = withUnsafeBytes(of: id.uuid) { $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self) }
        return now - Int64(bits % UInt64(interval))
    }

    /// Whether an acknowledgement is due at `now` when the last was counted from `last`.
    static func isDue(last: Int64, at now: Int64, interval: Int64) -> Bool { now - last >= interval }

    /// When an owed acknowledgement falls due on the tick, counted from `last` (an instant of
    /// the phase) with the last acknowledgement gone at `acknowledgedAt`: the next instant of
    /// the phase, or the one after when that is within half an interval of the last
    /// acknowledgement (which then rode on a frame, off the phase).
    static func due(last: Int64, acknowledgedAt: Int64, interval: Int64) -> Int64 {
        let next = last &+ interval
        return next &- acknowledgedAt < interval / 2 ? next &+ interval : next
    }

    /// Whether an owed acknowledgement is due on the tick at `now` (`due`).
    static func isDue(last: Int64, acknowledgedAt: Int64, at now: Int64, interval: Int64) -> Bool {
        now >= due(last: last, acknowledgedAt: acknowledgedAt, interval: interval)
    }

    /// An `acknowledgedAt` for a side that has not acknowledged yet.
    static let never: Int64 = .min / 2

    /// The instant on the participant's phase at or before `now` (where the next interval is
    /// counted from once an acknowledgement went out at `now`).
    static func advance(from last: Int64, to now: Int64, interval: Int64) -> Int64 {
        guard interval > 0, now > last else { return now }
        return last + (now - last) / interval * interval
    }
}
