import Foundation
import TandemNet
import TandemTestKit
import TandemWire
import Testing

/// The relay's datagrams, every kind, mutated and random: the decoder never traps, and the core
/// fed whatever decodes never answers an address that is not a participant's own, never answers
/// with more than it was sent, and fans out nothing for a source it did not bind.
@Suite("Relay datagram fuzz")
struct RelayDatagramFuzzTests {
    static let token = [UInt8](repeating: 0x11, count: RelayWireLimits.tokenLength)

    static let corpus: [RelayDatagram] = [
        .register(token: token),
        .cookie(token: token, cookie: [UInt8](repeating: 2, count: RelayDatagram.cookieLength)),
        .confirm(token: token, cookie: [UInt8](repeating: 3, count: RelayDatagram.cookieLength)),
        .registered(token: token),
        .unreliable(token: token, recipients: .only([UUID(), UUID()]), body: [1, 2, 3]),
        .unreliable(token: token, recipients: .everyone, body: [UInt8](repeating: 7, count: 300)),
        .delivery(sender: UUID(), body: [4, 5]),
    ]

    @Test("every kind round-trips, and the register is as large as the cookie that answers it")
    func kinds() throws {
        #expect(Set(RelayDatagramFuzzTests.corpus.map(\.kind)) == Set(RelayDatagramKind.allCases))
        for datagram in RelayDatagramFuzzTests.corpus {
            #expect(try RelayDatagram.decode(datagram.encoded()[...]) == datagram)
        }
        let register = RelayDatagram.register(token: RelayDatagramFuzzTests.token).encoded()
        let cookie = RelayDatagram.cookie(token: RelayDatagramFuzzTests.token, cookie: [UInt8](repeating: 0, count: RelayDatagram.cookieLength)).encoded()
        #expect(register.count >= cookie.count)
        // A register without its padding is refused: nobody gets a cookie for fewer bytes.
        #expect(throws: WireError.self) { try RelayDatagram.decode(register.dropLast(RelayDatagram.cookieLength)) }
    }

    @Test("fuzz: mutated datagrams never trap; the core answers only participants, never with more than it got")
    func fuzz() throws {
        var core = RelayCore(cookieKey: [UInt8](repeating: 8, count: 32))
        let session = UUID()
        let admission = CoreAdmission(key: [UInt8](repeating: 1, count: 32), session: session)
        let peer = try SocketAddress(host: "127.0.0.2", port: 40_000)
        var token: [UInt8] = []
        for case let .send(_, .welcome(welcome)) in admission.admit(&core, RelayConnectionID(1), TestIdentities.make(), create: true, at: 0, peer: peer) {
            token = welcome.token
        }
        _ = admission.admit(&core, RelayConnectionID(2), TestIdentities.make(), create: false, at: 0, peer: try SocketAddress(host: "127.0.0.3", port: 1))
        #expect(token.count == RelayWireLimits.tokenLength)
        let valid = (RelayDatagramFuzzTests.corpus + [.register(token: token), .unreliable(token: token, recipients: .everyone, body: [1])])
            .map { $0.encoded() }
        let sources = try [peer, SocketAddress(host: "127.0.0.2", port: 40_001), SocketAddress(host: "10.0.0.1", port: 40_000)]
        var random = SeededRandom(seed: 0xDA7A)
        var defects = 0
        var decoded = 0
        for iteration in 0..<20_000 {
            var bytes = valid[Int(random.next() % UInt64(valid.count))]
            for _ in 0..<Int(random.next() % 3) + (iteration % 4 == 0 ? 0 : 1) {
                switch random.next() % 3 {
                case 0 where !bytes.isEmpty:
                    bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next())
                case 1 where !bytes.isEmpty:
                    bytes.removeLast(Int(random.next() % UInt64(bytes.count)))
                default:
                    bytes += (0..<Int(random.next() % 8)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                }
            }
            let datagram: RelayDatagram
            do {
                datagram = try RelayDatagram.decode(bytes[...])
            } catch {
                defects += 1
                continue
            }
            decoded += 1
            let source = sources[Int(random.next() % UInt64(sources.count))]
            for directive in core.onDatagram(datagram, from: source, at: Int64(iteration) * 1_000_000) {
                switch directive {
                case let .answerDatagram(to, answer):
                    // The UDP port may differ from the TCP one; the IP address may not.
                    #expect(to.host == peer.host, "answered \(to), which is no participant's address")
                    #expect(answer.encoded().count <= bytes.count, "answered \(answer.encoded().count) bytes to \(bytes.count)")
                case .sendDatagram:
                    #expect(source == peer, "fanned out for \(source)")
                case .bindDatagrams(_, let address):
                    #expect(address.host == peer.host)
                default:
                    break
                }
            }
        }
        #expect(defects > 1_000)
        #expect(decoded > 1_000)
    }
}
