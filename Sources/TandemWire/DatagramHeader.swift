/// The four bytes that open every Tandem datagram: magic, kind, version, flags.
public struct DatagramHeader: Sendable, Hashable {
    /// The first byte of every Tandem datagram: ASCII `T`.
    public static let magic: UInt8 = 0x54
    /// The format version this build writes and reads.
    public static let currentVersion: UInt8 = 1
    /// The header's size in bytes.
    public static let size = 4

    /// What the datagram carries.
    public var kind: DatagramKind
    /// The format version.
    public var version: UInt8
    /// Reserved for sealed bodies and the like; written as zero, ignored when read.
    public var flags: UInt8

    /// Creates a header of the current version.
    public init(kind: DatagramKind, version: UInt8 = DatagramHeader.currentVersion, flags: UInt8 = 0) {
        self.kind = kind
        self.version = version
        self.flags = flags
    }

    /// Reads the header at the start of `bytes`, checking magic, kind and version.
    public static func decode(_ bytes: some Collection<UInt8>, context: String) throws(WireError) -> DatagramHeader {
        guard bytes.count >= size else { throw .wrongLength(expected: size, actual: bytes.count, context: context) }
        let header = Array(bytes.prefix(size))
        guard header[0] == magic else { throw .badMagic(header[0], context: context) }
        guard let kind = DatagramKind(rawValue: header[1]) else { throw .unknownKind(header[1], context: context) }
        guard header[2] == currentVersion else { throw .unsupportedVersion(header[2], context: context) }
        return DatagramHeader(kind: kind, version: header[2], flags: header[3])
    }

    /// Appends the header's bytes to `bytes`.
    public func encode(into bytes: inout [UInt8]) {
        bytes.append(contentsOf: [DatagramHeader.magic, kind.rawValue, version, flags])
    }
}
