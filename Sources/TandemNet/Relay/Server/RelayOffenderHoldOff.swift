#if canImport(Glibc)
import Glibc
#endif

/// Which source addresses the relay holds off at accept: an address whose connections keep
/// being cut as strangers over their limit (a flood of partial frames that reconnects as fast
/// as it is cut) has its new connections closed as they are accepted, for `holdOff`, before any
/// state, read or core work is spent on them. Pure: time is given.
///
/// Only cuts count, never connections: an honest peer is never cut, so however many connections
/// it opens from one address (a whole bench, a NAT) it is never held off. Each address has a
/// token bucket of `burst` cuts refilled at `rate` a second (`TokenBucket`); the cut that finds
/// it empty holds the address off. At most `maximumAddresses` are remembered: past it, new ones
/// are not (the relay stays bounded; the per-connection limits still apply to them). Honest
/// peers behind the same address as an attacker (a NAT) wait out its hold-off when they connect;
/// those connected already are not touched.
///
/// An IPv4 address counts alone; an IPv6 address counts by its /64 (`key(for:)`), since one host
/// is usually given a whole /64 and could otherwise dodge the hold-off by changing its low bits.
struct RelayOffenderHoldOff {
    /// Cuts an address may take at once.
    let burst: Double
    /// Cuts a second an address may take, sustained.
    let rate: Double
    /// How long a held-off address's new connections are closed at accept.
    let holdOff: Int64
    /// The most addresses remembered.
    let maximumAddresses: Int

    private struct Entry {
        var bucket: TokenBucket
        var lastCut: Int64
        var heldUntil: Int64?
    }

    private var entries: [String: Entry] = [:]

    /// A hold-off of `holdOff` for an address cut more than `burst` times at once, or more than
    /// `rate` times a second.
    init(burst: Double = 16, rate: Double = 4, holdOff: Int64 = 1_000_000_000, maximumAddresses: Int = 4096) {
        self.burst = burst
        self.rate = rate
        self.holdOff = holdOff
        self.maximumAddresses = maximumAddresses
    }

    /// How many addresses are remembered.
    var count: Int { entries.count }

    /// Whether a connection accepted from `host` at `now` is to be closed at once.
    func refuses(_ host: String, at now: Int64) -> Bool {
        guard let until = entries[Self.key(for: host)]?.heldUntil else { return false }
        return now < until
    }

    /// A connection from `host` was cut at `now` for what it sent; true when that holds the
    /// address off (from now, for `holdOff`).
    mutating func cut(_ address: String, at now: Int64) -> Bool {
        let host = Self.key(for: address)
        if entries[host] == nil {
            guard entries.count < maximumAddresses else { return false }
            entries[host] = Entry(bucket: TokenBucket(rate: rate, capacity: burst, now: now), lastCut: now)
        }
        entries[host]?.lastCut = now
        guard entries[host]?.bucket.take(1, at: now) == false else { return false }
        entries[host]?.heldUntil = now + holdOff
        return true
    }

    /// Forgets the addresses that no longer matter at `now`: not held off, and not cut for as
    /// long as their bucket takes to fill again.
    mutating func prune(at now: Int64) {
        let refill = Int64(burst / max(rate, 1e-9) * 1e9)
        entries = entries.filter { _, entry in
            if let until = entry.heldUntil, now < until { return true }
            return now - entry.lastCut < refill
        }
    }

    /// What a cut from `host` is charged to: an IPv4 address itself (also when written as an
    /// IPv4-mapped IPv6 address, `::ffff:a.b.c.d`), the /64 prefix of an IPv6 address
    /// (`2001:db8:1:2::/64`), and anything else (a name) as it is.
    static func key(for host: String) -> String {
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, host, &v6) == 1 else { return host }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return bytes[12..<16].map(String.init).joined(separator: ".")
        }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }
}
