/// Reads big-endian integers from a byte array whose length the caller has already checked.
struct BigEndianReader {
    private let bytes: [UInt8]
    private var offset: Int

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    mutating func readUInt32() -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            value = value << 8 | UInt32(bytes[offset])
            offset += 1
        }
        return value
    }

    mutating func readInt64() -> Int64 {
        var value: UInt64 = 0
        for _ in 0..<8 {
            value = value << 8 | UInt64(bytes[offset])
            offset += 1
        }
        return Int64(bitPattern: value)
    }
}
