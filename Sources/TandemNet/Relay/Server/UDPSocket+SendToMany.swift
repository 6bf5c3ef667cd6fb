#if canImport(Glibc)
import Glibc
#endif
import CTandemSystem

extension UDPSocket {
    /// How many datagrams one system call of `send(_:toEach:)` carries.
    static let sendBatch = Int(TANDEM_DATAGRAM_BATCH)

    /// Sends `bytes` as one datagram to each of `addresses`, many to a system call (sendmmsg),
    /// as `send(_:to:)` would one by one: at most once, and an address the kernel refuses (one
    /// unreachable) loses only its own. Stops at a full send buffer, losing the rest as the
    /// network may. Returns how many were sent.
    @discardableResult
    func send(_ bytes: [UInt8], toEach addresses: [SocketAddress]) throws(SystemCallError) -> Int {
        let stride = Int(tandem_address_stride)
        var names = [UInt8](repeating: 0, count: Self.sendBatch * stride)
        var lengths = [socklen_t](repeating: 0, count: Self.sendBatch)
        var sent = 0
        var next = 0
        while next < addresses.count {
            let count = min(Self.sendBatch, addresses.count - next)
            names.withUnsafeMutableBytes { raw in
                for index in 0..<count {
                    addresses[next + index].withSockaddr { address, length in
                        raw.baseAddress!.advanced(by: index * stride).copyMemory(from: address, byteCount: Int(length))
                        lengths[index] = length
                    }
                }
            }
            let descriptor = descriptor
            let result: Int32 = bytes.withUnsafeBytes { payload in
                names.withUnsafeBytes { names in
                    lengths.withUnsafeBufferPointer { lengths in
                        tandem_send_to_many(descriptor, payload.baseAddress, payload.count, names.baseAddress, lengths.baseAddress,
                                            UInt32(count))
                    }
                }
            }
            if result < 0 {
                // A full buffer: the rest are lost. Another error belongs to this address alone.
                if -result == EAGAIN || -result == EWOULDBLOCK || -result == ENOBUFS { return sent }
                if addresses.count == 1 { throw SystemCallError(call: "sendmmsg", errno: -result) }
                next += 1
                continue
            }
            sent += Int(result)
            // Short of the batch: the next one failed; the call after tells why.
            next += Int(result)
        }
        return sent
    }
}
