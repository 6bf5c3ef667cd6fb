/// The kind byte of the relay's own datagrams on its shared UDP port.
///
/// These share the magic, the layout and the version byte of `DatagramHeader` but take values
/// from 0x20 up, clear of `DatagramKind`'s time probes, so that a time service that does not know
/// them ignores them, as every receiver ignores kinds it does not know.
public enum RelayDatagramKind: UInt8, Sendable, Hashable, CaseIterable {
    /// Participant → relay: this address wants datagrams for the participant with this token.
    case register = 0x20
    /// Relay → participant: the registration arrived.
    case registered = 0x21
    /// Participant → relay: an unreliable message to route.
    case unreliable = 0x22
    /// Relay → participant: an unreliable message from another participant.
    case delivery = 0x23
    /// Relay → participant: the cookie that answers a registration, to be echoed.
    case cookie = 0x24
    /// Participant → relay: the cookie echoed, which binds the registration.
    case confirm = 0x25

    /// Whether `bytes` look like a relay datagram (Tandem magic and one of these kinds), so that a
    /// shared port can tell them from time probes by two bytes.
    public static func matches(_ bytes: some Collection<UInt8>) -> Bool {
        var iterator = bytes.makeIterator()
        guard iterator.next() == DatagramHeader.magic, let kind = iterator.next() else { return false }
        return RelayDatagramKind(rawValue: kind) != nil
    }
}
