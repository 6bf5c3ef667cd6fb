import Foundation
import TandemClock

/// A bound on how far the relay's session time may run ahead of this participant's own
/// monotonic clock, checked on each ordered record as it arrives live.
///
/// A record ordered at session instant `s` and received at local instant `l` has
/// `l − s = offset + delay`: the two clocks' offset, which moves only with their drift, plus the
/// time the record took to arrive, which is never negative. The least `l − s` seen so far
/// (lowered by the drift the clocks may have had since, `maximumDrift`) is therefore a floor that
/// no honest record can fall below by more than `allowance` (what a delivery faster than any
/// before can gain). A record below it was stamped later than the participant's own clock allows:
/// the relay's time jumped forward. The check is one-sided: a record stamped earlier (a backward
/// step, a slow clock) looks like one that took longer to arrive, and cannot be told from it.
/// And it sees steps, not their sum: a session clock that runs fast a little at a time looks like
/// deliveries that keep getting faster, and the floor follows it down.
/// Pure; the caller hands each live record's ordering instant with the local instant it arrived.
struct SessionTimeBound: Sendable {
    /// How far below the floor a record may fall: a delivery faster than any seen before.
    static let allowance = TimeSpan.milliseconds(250)
    /// The most the two clocks may drift apart, in parts per million of the local time elapsed.
    static let maximumDrift: Int64 = 1_000

    /// The least `received − ordered` seen, as of `last`.
    private var floor: TimeSpan?
    private var last: LocalInstant?

    /// Takes a record ordered at `ordered` and received at `received`: nil when the relay's time
    /// is within the bound, else how far ahead of the bound it ran. After a jump the floor starts
    /// again from that record, so one jump is reported once.
    mutating func take(ordered: SessionInstant, received: LocalInstant) -> TimeSpan? {
        let gap = TimeSpan(nanoseconds: received.nanoseconds.saturatingSubtracting(ordered.nanoseconds))
        defer { last = received }
        guard let floor, let last else {
            self.floor = gap
            return nil
        }
        let elapsed = max(received - last, .zero)
        let drift = TimeSpan(nanoseconds: elapsed.nanoseconds / 1_000_000 * Self.maximumDrift)
        let lowest = floor - drift
        if gap < lowest - Self.allowance {
            self.floor = gap
            return lowest - gap
        }
        self.floor = min(lowest, gap)
        return nil
    }
}
