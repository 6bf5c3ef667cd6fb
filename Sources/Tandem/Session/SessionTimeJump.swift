import Foundation
import TandemClock

/// The relay's session time ran ahead of this participant's own monotonic clock by more than
/// delivery and drift allow, at an ordered record (`GroupSession.sessionTimeJumps()`).
public struct SessionTimeJump: Sendable, Equatable, Hashable {
    /// The order of the record stamped too far ahead.
    public var order: UInt64
    /// How far past the bound the relay's ordering instant was.
    public var ahead: TimeSpan

    /// A jump at `order`, `ahead` past the bound.
    public init(order: UInt64, ahead: TimeSpan) {
        self.order = order
        self.ahead = ahead
    }
}
