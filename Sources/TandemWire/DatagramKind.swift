/// What an unreliable datagram on a Tandem UDP port carries, named by its second byte.
///
/// The relay shares one UDP port between time probes and other unreliable traffic and routes on
/// this byte alone; new kinds take new values, and a receiver ignores kinds it does not know.
public enum DatagramKind: UInt8, Sendable, Hashable, CaseIterable {
    /// A participant asks for the session time.
    case timeRequest = 0x01
    /// The time service answers a time request.
    case timeReply = 0x02
}
