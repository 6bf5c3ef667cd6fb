import Foundation

/// When a side of the relay protocol acknowledges a peer that is not busy: every `interval`, on
/// a phase of that participant's own.
///
/// The phase comes from the participant's id, not from when something arrived: phases taken
/// from arrivals drift together (everyone who received the same broadcast would acknowledge on
/// the same tick), and a relay or a process with many participants would then write one
/// acknowledgement to each of them at once, every interval. Spread by id, a tick carries about
/// `participants × tick / interval` of them.
enum AcknowledgementSchedule {
    /// The instant, at or before `now`, from which a participant's first acknowledgement is
    /// counted: `now` less its phase within the interval.
    static func start(_ id: UUID, at now: Int64, interval: Int64) -> Int64 {
        guard interval > 0 else { return now }
        let bits = withUnsafeBytes(of: id.uuid) { $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self) }
        return now - Int64(bits % UInt64(interval))
    }

    /// Whether an acknowledgement is due at `now` when the last was counted from `last`.
    static func isDue(last: Int64, at now: Int64, interval: Int64) -> Bool { now - last >= interval }

    /// The instant on the participant's phase at or before `now` (where the next interval is
    /// counted from once an acknowledgement went out at `now`).
    static func advance(from last: Int64, to now: Int64, interval: Int64) -> Int64 {
        guard interval > 0, now > last else { return now }
        return last + (now - last) / interval * interval
    }
}
