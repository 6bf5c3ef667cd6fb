import Foundation

/// Reads the fields of every Tandem encoding (relay frames and datagrams, time datagrams, signed
/// bodies): the one checked byte reader. It checks every length against what is left
/// before touching or allocating anything, so that no input can make it trap or over-allocate.
package struct ByteReader {
    private let bytes: ArraySlice<UInt8>
    private var offset: Int
    package let context: String

    package init(_ bytes: ArraySlice<UInt8>, context: String) {
        self.bytes = bytes
        offset = bytes.startIndex
        self.context = context
    }

    package var remaining: Int { bytes.endIndex - offset }

    private mutating func take(_ count: Int) throws(WireError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else { throw WireError(.truncated, context: context) }
        defer { offset += count }
        return bytes[offset..<(offset + count)]
    }

    package mutating func uint8() throws(WireError) -> UInt8 { try take(1).first! }

    package mutating func uint16() throws(WireError) -> UInt16 {
        try take(2).reduce(0) { $0 << 8 | UInt16($1) }
    }

    package mutating func uint32() throws(WireError) -> UInt32 {
        try take(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    package mutating func uint64() throws(WireError) -> UInt64 {
        try take(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    package mutating func bool() throws(WireError) -> Bool {
        switch try uint8() {
        case 0: false
        case 1: true
        case let other: throw WireError(.malformed("\(other) is not a boolean"), context: context)
        }
    }

    package mutating func uuid() throws(WireError) -> UUID {
        let raw = try take(16)
        var tuple: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &tuple) { $0.copyBytes(from: raw) }
        return UUID(uuid: tuple)
    }

    /// Exactly `count` bytes.
    package mutating func fixed(_ count: Int) throws(WireError) -> [UInt8] { Array(try take(count)) }

    /// Bytes with a 32-bit length prefix of at most `limit`.
    package mutating func bytes(limit: Int) throws(WireError) -> [UInt8] {
        let length = Int(try uint32())
        guard length <= limit else { throw WireError(.oversized(length: length, limit: limit), context: context) }
        return Array(try take(length))
    }

    /// UTF-8 text with a 16-bit length prefix of at most `limit` bytes.
    package mutating func text(limit: Int) throws(WireError) -> String {
        let length = Int(try uint16())
        guard length <= limit else { throw WireError(.oversized(length: length, limit: limit), context: context) }
        guard let text = String(validating: Array(try take(length)), as: UTF8.self) else {
            throw WireError(.malformed("text is not UTF-8"), context: context)
        }
        return text
    }

    /// Fails when bytes are left over: a frame is exactly as long as its fields.
    package func finish() throws(WireError) {
        guard remaining == 0 else {
            throw WireError(.malformed("\(remaining) bytes left over"), context: context)
        }
    }
}
