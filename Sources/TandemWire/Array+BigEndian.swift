extension [UInt8] {
    /// Appends `value` in network byte order.
    mutating func appendBigEndian(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    /// Appends `value` in network byte order.
    mutating func appendBigEndian(_ value: Int64) {
        let bits = UInt64(bitPattern: value)
        for shift in stride(from: 56, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
    }
}
