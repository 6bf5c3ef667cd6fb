import Foundation
@testable import TandemNet
import TandemWire
import Testing

/// Issue 12's partial-frame attackers reconnect as fast as they are cut: an address whose
/// strangers keep being cut has its new connections closed at accept for a while
/// (`RelayOffenderHoldOff`), pure on given instants; then once through a real relay's sockets,
/// with the attacker on 127.0.0.2 and an honest participant on 127.0.0.1.
@Suite("Relay: addresses whose strangers keep being cut are held off at accept")
struct OffenderHoldOffIOTests {
    private let second: Int64 = 1_000_000_000

    @Test("the cut past the burst holds the address off for the hold-off, and only that address")
    func burstThenHeld() {
        var holdOff = RelayOffenderHoldOff(burst: 4, rate: 1, holdOff: second)
        for _ in 0..<4 {
            let held = holdOff.cut("10.0.0.1", at: 0)
            #expect(!held)
        }
        #expect(!holdOff.refuses("10.0.0.1", at: 0))
        let fifth = holdOff.cut("10.0.0.1", at: 0)
        #expect(fifth, "the fifth cut at once holds it off")
        #expect(holdOff.refuses("10.0.0.1", at: second - 1))
        #expect(!holdOff.refuses("10.0.0.2", at: 0), "another address is not held off")
        #expect(!holdOff.refuses("10.0.0.1", at: second), "the hold-off ends")
    }

    @Test("cuts at the sustained rate never hold an address off; faster ones do")
    func rate() {
        var slow = RelayOffenderHoldOff(burst: 2, rate: 4, holdOff: second)
        var held = false
        for index in 0..<100 { held = slow.cut("a", at: Int64(index) * second / 4) || held }
        #expect(!held)
        var fast = RelayOffenderHoldOff(burst: 2, rate: 4, holdOff: second)
        held = false
        for index in 0..<100 { held = fast.cut("a", at: Int64(index) * second / 8) || held }
        #expect(held)
    }

    @Test("an IPv6 address is charged by its /64, so changing the low bits dodges nothing; IPv4-mapped counts as IPv4")
    func ipv6ByPrefix() {
        #expect(RelayOffenderHoldOff.key(for: "2001:db8:1:2:aaaa::1") == "2001:db8:1:2::/64")
        #expect(RelayOffenderHoldOff.key(for: "::ffff:10.0.0.7") == "10.0.0.7")
        #expect(RelayOffenderHoldOff.key(for: "10.0.0.7") == "10.0.0.7")
        #expect(RelayOffenderHoldOff.key(for: "::1") == "0:0:0:0::/64")
        var holdOff = RelayOffenderHoldOff(burst: 2, rate: 1, holdOff: second)
        for low in 1...2 {
            let held = holdOff.cut("2001:db8:1:2::\(low)", at: 0)
            #expect(!held)
        }
        let third = holdOff.cut("2001:db8:1:2:ffff::3", at: 0)
        #expect(third, "a third address of the same /64 finds the bucket empty")
        #expect(holdOff.refuses("2001:db8:1:2::99", at: 1))
        #expect(!holdOff.refuses("2001:db8:1:3::1", at: 1), "the next /64 is not held off")
        _ = holdOff.cut("::ffff:10.0.0.7", at: 0)
        _ = holdOff.cut("::ffff:10.0.0.7", at: 0)
        let mapped = holdOff.cut("10.0.0.7", at: 0)
        #expect(mapped, "an IPv4-mapped address and the IPv4 address share one bucket")
    }

    @Test("addresses are forgotten once quiet, and no more than the maximum are remembered")
    func bounded() {
        var holdOff = RelayOffenderHoldOff(burst: 2, rate: 1, holdOff: second, maximumAddresses: 3)
        for host in ["a", "b", "c", "d"] { _ = holdOff.cut(host, at: 0) }
        #expect(holdOff.count == 3)
        // "d" was not remembered: it is never held off, however often it is cut.
        for _ in 0..<10 {
            let held = holdOff.cut("d", at: 0)
            #expect(!held)
        }
        holdOff.prune(at: second)
        #expect(holdOff.count == 3, "a bucket takes burst ÷ rate = 2 s to fill again")
        holdOff.prune(at: 2 * second)
        #expect(holdOff.count == 0)
    }

    @Test("through the relay: an address cut past the burst is closed at accept with no fault; 127.0.0.1 is still admitted")
    func throughTheRelay() throws {
        let relay = try RelayServer(address: SocketAddress(host: "127.0.0.1", port: 0))
        relay.start()
        defer { relay.stop() }
        let address = try SocketAddress(host: "127.0.0.1", port: relay.port)
        // A length prefix of 1 MiB and a few bytes of it: cut at the stranger's first piece, with
        // a fault (all of it read, so the close is an orderly one and the fault is not lost).
        let partial: [UInt8] = [0x00, 0x10, 0x00, 0x00, RelayFrame.version, 1] + [UInt8](repeating: 0, count: 58)
        var faults = 0
        var heldOff = false
        // Bounded: a default hold-off needs 17 quick cuts; 64 attempts at most.
        for _ in 0..<64 where !heldOff {
            let stranger = try TCPSocket(family: AF_INET)
            try stranger.bind(to: SocketAddress(host: "127.0.0.2", port: 0))
            let client = try RawRelayClient(socket: stranger, connectingTo: address)
            try? client.send(partial)
            let cut = client.framesUntilClosed(timeout: .seconds(5))
            #expect(cut.closed, "a stranger was not cut")
            if cut.frames.contains(where: { if case .error = $0 { true } else { false } }) { faults += 1 } else { heldOff = true }
        }
        #expect(heldOff, "the address was never held off after \(faults) cuts")
        #expect(faults >= 16, "held off after only \(faults) cuts")
        #expect(relay.statistics.acceptsHeldOff >= 1)
        #expect(relay.statistics.addressesHeldOff == 1)
        // The honest address is admitted as ever.
        let honest = try RawRelayClient(port: relay.port)
        _ = try honest.admit(session: UUID(), key: [UInt8](repeating: 7, count: 32), create: true)
    }
}
