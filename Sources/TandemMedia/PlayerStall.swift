/// A change in whether a player can present on time, as its stall handler hears it
/// (`HeadlessPlayer.setStallHandler(_:)`).
///
/// A coordinated player's adapter turns these into a `.stallRecovery` suspension: begun on
/// `.began`, ended on `.ended`. The rule that raises them is `StallDetector`'s: see
/// `HeadlessPlayer.setStallHandler(_:)`.
public enum PlayerStall: Sendable, Equatable, CustomStringConvertible {
    /// The player cannot present on time: its decoder or source is behind (frames presented or
    /// dropped late, or none decoded when one was due).
    case began
    /// The player can present on time again: it has decoded enough ahead (or reached the end).
    case ended

    /// A word for people to read.
    public var description: String {
        switch self {
        case .began: "stall began"
        case .ended: "stall ended"
        }
    }
}
