import TandemNet
import Testing

/// Issue 15, item 8: what `tandem host` advertises, from `/proc/net/route` and the interface
/// addresses, on fixtures only (no traffic, nothing read from this machine).
@Suite("Advertised address")
struct AdvertisedAddressTests {
    private let header = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"

    private let addresses = [
        AdvertisedAddress.InterfaceAddress(interface: "lo", address: "127.0.0.1"),
        AdvertisedAddress.InterfaceAddress(interface: "eth0", address: "192.168.1.20"),
        AdvertisedAddress.InterfaceAddress(interface: "wlan0", address: "10.0.0.7"),
        AdvertisedAddress.InterfaceAddress(interface: "wg0", address: "203.0.113.5"),
    ]

    @Test("the default route's interface: destination and mask 0, up, the lowest metric")
    func defaultRoute() {
        let table = header
            + "eth0\t0001A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0\n"
            + "wlan0\t00000000\t0100000A\t0003\t0\t0\t600\t00000000\t0\t0\t0\n"
            + "eth0\t00000000\t0101A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
            // Down (no RTF_UP): never chosen, whatever its metric.
            + "wg0\t00000000\t00000000\t0000\t0\t0\t1\t00000000\t0\t0\t0\n"
        #expect(AdvertisedAddress.defaultRouteInterface(routeTable: table) == "eth0")
        #expect(AdvertisedAddress.choose(bind: "0.0.0.0", routeTable: table, addresses: addresses) == ("192.168.1.20", true))
    }

    @Test("no default route, or no address on its interface: loopback; a bind address is advertised as it is")
    func fallbacks() {
        let onlyLocal = header + "eth0\t0001A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0\n"
        #expect(AdvertisedAddress.defaultRouteInterface(routeTable: onlyLocal) == nil)
        #expect(AdvertisedAddress.choose(bind: "0.0.0.0", routeTable: onlyLocal, addresses: addresses) == ("127.0.0.1", false))
        #expect(AdvertisedAddress.choose(bind: "0.0.0.0", routeTable: nil, addresses: addresses) == ("127.0.0.1", false))
        let toTunnel = header + "tun9\t00000000\t00000000\t0001\t0\t0\t0\t00000000\t0\t0\t0\n"
        #expect(AdvertisedAddress.choose(bind: "::", routeTable: toTunnel, addresses: addresses) == ("127.0.0.1", false))
        #expect(AdvertisedAddress.choose(bind: "127.0.0.1", routeTable: header, addresses: addresses) == ("127.0.0.1", false))
        #expect(AdvertisedAddress.choose(bind: "192.168.1.20", routeTable: nil, addresses: []) == ("192.168.1.20", false))
        #expect(AdvertisedAddress.defaultRouteInterface(routeTable: "") == nil)
        #expect(AdvertisedAddress.defaultRouteInterface(routeTable: header + "garbage\n\t\n") == nil)
    }

    @Test("private, shared, link-local and loopback ranges are private; public and malformed ones are not")
    func privateRanges() {
        for address in ["10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.0.1", "100.64.0.1", "100.127.1.1", "169.254.3.4", "127.0.0.1"] {
            #expect(AdvertisedAddress.isPrivate(address), "\(address)")
        }
        for address in ["172.15.0.1", "172.32.0.1", "100.63.0.1", "100.128.0.1", "203.0.113.5", "8.8.8.8", "192.169.0.1",
                        "10.0.0", "10.0.0.256", "host.example", "::1", ""] {
            #expect(!AdvertisedAddress.isPrivate(address), "\(address)")
        }
    }
}
