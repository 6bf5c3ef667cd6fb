#if canImport(Glibc)
import Glibc
#endif

extension SocketAddress {
    /// The same host (scope included, for link-local IPv6) with another port.
    package func withPort(_ port: UInt16) -> SocketAddress {
        var storage = sockaddr_storage()
        let length = withSockaddr { address, length in
            withUnsafeMutableBytes(of: &storage) { raw in
                raw.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(length)))
            }
            return length
        }
        withUnsafeMutableBytes(of: &storage) { raw in
            if family == AF_INET6 {
                raw.storeBytes(of: port.bigEndian, toByteOffset: MemoryLayout<sockaddr_in6>.offset(of: \.sin6_port)!, as: UInt16.self)
            } else {
                raw.storeBytes(of: port.bigEndian, toByteOffset: MemoryLayout<sockaddr_in>.offset(of: \.sin_port)!, as: UInt16.self)
            }
        }
        // The kernel's own layout went in, so the family is one the initialiser accepts.
        return SocketAddress(storage: storage, length: length)!
    }
}
