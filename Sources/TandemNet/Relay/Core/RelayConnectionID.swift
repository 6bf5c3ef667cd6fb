/// Names one connection to the relay core: a TCP connection on the real relay, a pipe in memory.
public struct RelayConnectionID: Sendable, Hashable, CustomStringConvertible {
    /// The number, unique for the life of a relay.
    public let value: UInt64

    /// The connection numbered `value`.
    public init(_ value: UInt64) { self.value = value }

    /// `#N`.
    public var description: String { "#\(value)" }
}
