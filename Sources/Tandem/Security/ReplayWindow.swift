/// Which counters of one sender, on one path, have been accepted: the highest so far and a
/// 64-bit map of the 64 below it, as IPsec's anti-replay window (RFC 4303, 3.4.3).
///
/// A counter is accepted once: above the highest (the window slides), or within the 64 below
/// it and not seen. Anything older than the window is refused, so that bodies which arrive a
/// little out of order (datagrams) still pass and no old one ever passes twice.
struct ReplayWindow: Sendable, Equatable {
    /// How many counters below the highest are remembered.
    static let width: UInt64 = 64

    /// The highest counter accepted, 0 before any.
    private(set) var highest: UInt64 = 0
    /// Bit `n` set: counter `highest - n` has been accepted (bit 0 is `highest` itself).
    private(set) var seen: UInt64 = 0

    /// Accepts `counter` if it is new, recording it; false for a replay, a counter too old for
    /// the window, or 0 (never used).
    mutating func accept(_ counter: UInt64) -> Bool {
        guard counter > 0 else { return false }
        if counter > highest {
            let shift = counter - highest
            seen = shift >= ReplayWindow.width ? 0 : seen << shift
            seen |= 1
            highest = counter
            return true
        }
        let offset = highest - counter
        guard offset < ReplayWindow.width else { return false }
        let bit: UInt64 = 1 << offset
        guard seen & bit == 0 else { return false }
        seen |= bit
        return true
    }
}
