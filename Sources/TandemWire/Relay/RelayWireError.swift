/// Why bytes from a relay connection or relay datagram could not be decoded: what was being
/// decoded and what was wrong with it. Decoding never traps; every defect ends here.
public struct RelayWireError: Error, Hashable, CustomStringConvertible {
    /// What kind of defect, for programs to branch on.
    public enum Code: Hashable, Sendable {
        /// The input ended in the middle of a field.
        case truncated
        /// A length prefix announced more than the limit allows.
        case oversized(length: Int, limit: Int)
        /// The frame's version is not one this build speaks.
        case unsupportedVersion(UInt8)
        /// The type byte names no known frame or datagram.
        case unknownType(UInt8)
        /// A field's value is impossible (bad UTF-8, an unknown tag, bytes left over).
        case malformed(String)
        /// The first byte was not Tandem's datagram magic.
        case badMagic(UInt8)
    }

    /// What kind of defect.
    public let code: Code
    /// What was being decoded, for example "relay frame 0x10".
    public let context: String

    /// An error of `code` found while decoding `context`.
    public init(_ code: Code, context: String) {
        self.code = code
        self.context = context
    }

    /// One line saying what was wrong.
    public var description: String {
        switch code {
        case .truncated:
            "\(context): truncated"
        case let .oversized(length, limit):
            "\(context): length \(length) is over the limit of \(limit) bytes"
        case let .unsupportedVersion(version):
            "\(context): version \(version) is not supported (this build speaks \(RelayFrame.version))"
        case let .unknownType(type):
            "\(context): unknown type 0x\(String(type, radix: 16))"
        case let .malformed(reason):
            "\(context): \(reason)"
        case let .badMagic(byte):
            "\(context): first byte 0x\(String(byte, radix: 16)) is not Tandem's magic"
        }
    }
}
