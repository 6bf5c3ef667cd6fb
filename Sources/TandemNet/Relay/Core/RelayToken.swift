/// The secret that names a participant's datagrams: 16 random bytes the relay hands out in the
/// welcome, kept across reconnections, forgotten when the participant goes.
public struct RelayToken: Sendable, Hashable {
    /// The 16 bytes.
    public let bytes: [UInt8]

    /// A token of these bytes (`RelayWireLimits.tokenLength` of them).
    public init(_ bytes: [UInt8]) { self.bytes = bytes }
}
