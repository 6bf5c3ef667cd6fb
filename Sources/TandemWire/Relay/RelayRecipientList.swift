import Foundation

/// Who a message is for, as the wire carries it.
public enum RelayRecipientList: Sendable, Hashable {
    /// Every other participant.
    case everyone
    /// These participants, at most `RelayWireLimits.maximumRecipients`.
    case only([UUID])
}
