/// Why bytes could not be decoded. Carries what was being decoded and what was wrong with it.
public struct WireError: Error, Hashable, CustomStringConvertible {
    private enum Code: Hashable {
        case wrongLength(expected: Int, actual: Int)
        case badMagic(UInt8)
        case unsupportedVersion(UInt8)
        case unknownKind(UInt8)
        case unexpectedKind(UInt8)
    }

    private let code: Code
    /// What was being decoded, for example "time datagram".
    public let context: String

    private init(_ code: Code, context: String) {
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
        WireError(.unknownKind(kind), context: context)
    }

    /// The kind is known but not the one expected here.
    public static func unexpectedKind(_ kind: UInt8, context: String) -> WireError {
        WireError(.unexpectedKind(kind), context: context)
    }

    /// Whether this error is a wrong length (short or long input).
    public var isWrongLength: Bool {
        if case .wrongLength = code { return true }
        return false
    }

    /// One line saying what was wrong.
    public var description: String {
        switch code {
        case let .wrongLength(expected, actual):
            "\(context): \(actual) bytes, expected \(expected)"
        case let .badMagic(byte):
            "\(context): first byte 0x\(String(byte, radix: 16)) is not Tandem's magic"
        case let .unsupportedVersion(version):
            "\(context): version \(version) is not supported (this build speaks \(DatagramHeader.currentVersion))"
        case let .unknownKind(kind):
            "\(context): unknown datagram kind \(kind)"
        case let .unexpectedKind(kind):
            "\(context): datagram kind \(kind) is not expected here"
        }
    }
}
