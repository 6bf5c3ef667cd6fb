/// Why bytes could not be decoded: a relay frame, a relay datagram, a time datagram or a signed
/// body. Carries what was being decoded and what was wrong with it. Decoding never traps; every
/// defect ends here, as one type whatever the format.
public struct WireError: Error, Hashable, CustomStringConvertible {
    /// What kind of defect, for programs to branch on.
    public enum Code: Hashable, Sendable {
        /// The input ended in the middle of a field.
        case truncated
        /// A length prefix announced more than the limit allows.
        case oversized(length: Int, limit: Int)
        /// The input was not the fixed length its format has.
        case wrongLength(expected: Int, actual: Int)
        /// The format's version is not one this build speaks.
        case unsupportedVersion(UInt8)
        /// The type byte names no known frame, datagram or body.
        case unknownType(UInt8)
        /// The type is known but not the one expected here.
        case unexpectedType(UInt8)
        /// A field's value is impossible (bad UTF-8, an unknown tag, bytes left over).
        case malformed(String)
        /// The first byte was not Tandem's datagram magic.
        case badMagic(UInt8)
    }

    /// What kind of defect.
    public let code: Code
    /// What was being decoded, for example "relay frame 0x10" or "time datagram".
    public let context: String

    /// An error of `code` found while decoding `context`.
    public init(_ code: Code, context: String) {
        self.code = code
        self.context = context
    }

    /// The input was not the length the format requires.
    public static func wrongLength(expected: Int, actual: Int, context: String) -> WireError {
        WireError(.wrongLength(expected: expected, actual: actual), context: context)
    }

    /// The first byte was not Tandem's datagram magic.
    public static func badMagic(_ byte: UInt8, context: String) -> WireError {
        WireError(.badMagic(byte), context: context)
    }

    /// The format version is one this build cannot read.
    public static func unsupportedVersion(_ version: UInt8, context: String) -> WireError {
        WireError(.unsupportedVersion(version), context: context)
    }

    /// The kind byte names no known datagram.
    public static func unknownKind(_ kind: UInt8, context: String) -> WireError {
        WireError(.unknownType(kind), context: context)
    }

    /// The kind is known but not the one expected here.
    public static func unexpectedKind(_ kind: UInt8, context: String) -> WireError {
        WireError(.unexpectedType(kind), context: context)
    }

    /// Whether this error is a wrong length (short or long input).
    public var isWrongLength: Bool {
        if case .wrongLength = code { return true }
        return false
    }

    /// One line saying what was wrong.
    public var description: String {
        switch code {
        case .truncated:
            "\(context): truncated"
        case let .oversized(length, limit):
            "\(context): length \(length) is over the limit of \(limit) bytes"
        case let .wrongLength(expected, actual):
            "\(context): \(actual) bytes, expected \(expected)"
        case let .unsupportedVersion(version):
            "\(context): version \(version) is not supported"
        case let .unknownType(type):
            "\(context): unknown type 0x\(String(type, radix: 16))"
        case let .unexpectedType(type):
            "\(context): type 0x\(String(type, radix: 16)) is not expected here"
        case let .malformed(reason):
            "\(context): \(reason)"
        case let .badMagic(byte):
            "\(context): first byte 0x\(String(byte, radix: 16)) is not Tandem's magic"
        }
    }
}
