import Foundation

/// Writes the fields of a Tandem encoding in network byte order, with the same length
/// prefixes that `ByteReader` checks.
package struct ByteWriter {
    package private(set) var bytes: [UInt8] = []

    package init(capacity: Int = 64) { bytes.reserveCapacity(capacity) }

    /// Swaps what has been written with `other`: how an encoder writes onto the end of a
    /// buffer it does not own (exchange in, write, exchange back) without copying it.
    package mutating func exchange(_ other: inout [UInt8]) { swap(&bytes, &other) }

    package mutating func uint8(_ value: UInt8) { bytes.append(value) }

    package mutating func uint16(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    package mutating func uint32(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    package mutating func uint64(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    package mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    package mutating func uuid(_ value: UUID) {
        withUnsafeBytes(of: value.uuid) { bytes.append(contentsOf: $0) }
    }

    package mutating func fixed(_ value: some Collection<UInt8>) { bytes.append(contentsOf: value) }

    /// Exactly `count` bytes of `value`: cut, or padded with zeros, so that a field of the wrong
    /// size still makes a frame the reader accepts (and whose check then fails).
    package mutating func fixed(_ value: some Collection<UInt8>, count: Int) {
        bytes.append(contentsOf: value.prefix(count))
        if value.count < count { bytes.append(contentsOf: repeatElement(0, count: count - value.count)) }
    }

    /// Bytes with a 32-bit length prefix.
    package mutating func bytes(_ value: some Collection<UInt8>) {
        uint32(UInt32(truncatingIfNeeded: value.count))
        bytes.append(contentsOf: value)
    }

    /// UTF-8 text with a 16-bit length prefix; longer text is cut at the limit the reader allows,
    /// on a character boundary, so that encoding never produces a frame the reader refuses.
    package mutating func text(_ value: String, limit: Int) {
        var utf8 = Array(value.utf8)
        if utf8.count > limit {
            var cut = ""
            for character in value {
                if cut.utf8.count + character.utf8.count > limit { break }
                cut.append(character)
            }
            utf8 = Array(cut.utf8)
        }
        uint16(UInt16(utf8.count))
        bytes.append(contentsOf: utf8)
    }
}
