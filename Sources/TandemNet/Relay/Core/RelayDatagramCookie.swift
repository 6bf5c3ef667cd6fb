import CSodium
import TandemWire

/// The relay's answer to a datagram registration: the time it was issued and an HMAC-SHA256
/// (libsodium's `crypto_auth_hmacsha256`) under a key only the relay holds, over the token, the
/// source address and that time. A participant echoes it from the same address to prove that
/// it receives there, so that nobody binds a token to an address it cannot hear from (no
/// reflection at a third party).
public enum RelayDatagramCookie {
    private static let ready: Bool = sodium_init() >= 0

    /// The cookie for `token` registering from `address` at `now` under `key` (32 bytes).
    static func make(key: [UInt8], token: [UInt8], address: SocketAddress, at now: Int64) -> [UInt8] {
        var cookie = [UInt8](repeating: 0, count: 8)
        for index in 0..<8 { cookie[index] = UInt8(truncatingIfNeeded: UInt64(bitPattern: now) >> (56 - 8 * UInt64(index))) }
        return cookie + mac(key: key, token: token, address: address, stamp: cookie)
    }

    /// The time `cookie` was issued at, when it is the relay's own for `token` and `address`.
    static func issued(_ cookie: [UInt8], key: [UInt8], token: [UInt8], address: SocketAddress) -> Int64? {
        guard cookie.count == RelayDatagram.cookieLength else { return nil }
        let stamp = Array(cookie.prefix(8))
        let expected = mac(key: key, token: token, address: address, stamp: stamp)
        guard sodium_memcmp(Array(cookie.suffix(32)), expected, 32) == 0 else { return nil }
        return Int64(bitPattern: stamp.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    private static func mac(key: [UInt8], token: [UInt8], address: SocketAddress, stamp: [UInt8]) -> [UInt8] {
        precondition(ready, "libsodium failed to initialise")
        var message = token + stamp
        message += Array(address.description.utf8)
        var mac = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_BYTES))
        _ = crypto_auth_hmacsha256(&mac, message, UInt64(message.count), key)
        return mac
    }
}

extension RelayDatagramCookie {
    /// A fresh 32-byte cookie key from libsodium's random source.
    public static func randomKey() -> [UInt8] {
        precondition(ready, "libsodium failed to initialise")
        var key = [UInt8](repeating: 0, count: 32)
        randombytes_buf(&key, 32)
        return key
    }
}
