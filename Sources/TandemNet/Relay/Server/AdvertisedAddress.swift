#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The address `tandem host` puts in its invite when the relay listens on every address and no
/// `--advertise` is given: the IPv4 address of the interface that carries the default route, as
/// `/proc/net/route` and the interface list say (the address others on the network reach this
/// machine at). Parsing is pure, tested on fixtures; only `current()` reads the system.
public enum AdvertisedAddress {
    /// One interface address: its interface's name and the address in dotted form.
    public struct InterfaceAddress: Equatable, Sendable {
        /// The interface, `eth0` say.
        public var interface: String
        /// Its IPv4 address, `192.168.1.20` say.
        public var address: String

        /// An interface address.
        public init(interface: String, address: String) {
            self.interface = interface
            self.address = address
        }
    }

    /// The interface of the default route in `table` (the text of `/proc/net/route`): a route up
    /// (flag RTF_UP, 0x1) with destination and mask 0, the lowest metric first; nil if none.
    public static func defaultRouteInterface(routeTable table: String) -> String? {
        var best: (interface: String, metric: Int)?
        for line in table.split(whereSeparator: \.isNewline).dropFirst() {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            // Iface Destination Gateway Flags RefCnt Use Metric Mask MTU Window IRTT
            guard fields.count >= 8, fields[1] == "00000000", fields[7] == "00000000",
                  let flags = UInt32(fields[3], radix: 16), flags & 0x1 != 0, let metric = Int(fields[6]) else { continue }
            if best == nil || metric < best!.metric { best = (fields[0], metric) }
        }
        return best?.interface
    }

    /// The first of `addresses` on `interface`, skipping loopback ones.
    public static func address(of interface: String, among addresses: [InterfaceAddress]) -> String? {
        addresses.first { $0.interface == interface && !$0.address.hasPrefix("127.") }?.address
    }

    /// Whether the dotted IPv4 `address` is one the internet does not route to: private
    /// (10/8, 172.16/12, 192.168/16), shared (100.64/10, carrier-grade NAT), link-local
    /// (169.254/16) or loopback (127/8). Not an IPv4 address: false.
    public static func isPrivate(_ address: String) -> Bool {
        let parts = address.split(separator: ".", omittingEmptySubsequences: false).compactMap { UInt8($0) }
        guard parts.count == 4 else { return false }
        switch (parts[0], parts[1]) {
        case (10, _), (127, _): return true
        case (172, 16...31), (192, 168), (169, 254), (100, 64...127): return true
        default: return false
        }
    }

    /// What `tandem host` advertises for `bind` when no `--advertise` is given, and whether it
    /// was found from the default route (false: `bind` itself, or loopback for lack of a route).
    public static func choose(bind: String, routeTable: String?, addresses: [InterfaceAddress]) -> (address: String, fromRoute: Bool) {
        guard ["0.0.0.0", "::", ""].contains(bind) else { return (bind, false) }
        guard let table = routeTable, let interface = defaultRouteInterface(routeTable: table),
              let address = address(of: interface, among: addresses) else { return ("127.0.0.1", false) }
        return (address, true)
    }

    /// This machine's IPv4 interface addresses (getifaddrs).
    public static func interfaceAddresses() -> [InterfaceAddress] {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0 else { return [] }
        defer { freeifaddrs(first) }
        var result: [InterfaceAddress] = []
        var cursor = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let socketAddress = entry.pointee.ifa_addr, socketAddress.pointee.sa_family == sa_family_t(AF_INET) else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            let converted = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                withUnsafePointer(to: address.pointee.sin_addr) { inet_ntop(AF_INET, $0, &text, socklen_t(text.count)) }
            }
            guard converted != nil else { continue }
            let name = String(cString: entry.pointee.ifa_name)
            result.append(InterfaceAddress(interface: name, address: String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))
        }
        return result
    }

    /// What to advertise for `bind` on this machine now.
    public static func current(bind: String) -> (address: String, fromRoute: Bool) {
        let table = try? String(contentsOfFile: "/proc/net/route", encoding: .utf8)
        return choose(bind: bind, routeTable: table, addresses: interfaceAddresses())
    }
}
