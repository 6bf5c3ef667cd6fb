import Foundation
import TandemNet
import TandemWire
import Testing

/// Issue 15, item 2, through the real relay's sockets: a participant whose connection its peer
/// closed (end of stream, as when its process exits or is killed) gets the short grace period,
/// not the long one. The two are set an order of magnitude apart, so that the test tells them
/// apart without timing anything tightly.
@Suite("Relay server: a connection closed by its peer")
struct PeerClosedServerIOTests {
    @Test("end of stream: the others hear the participant left after the short grace, well before the long one")
    func endOfStreamIsTheShortGrace() throws {
        var configuration = RelayCoreConfiguration()
        configuration.closedGracePeriod = 300_000_000
        configuration.gracePeriod = 120_000_000_000
        let relay = try RelayServer(address: SocketAddress(host: "127.0.0.1", port: 0), configuration: configuration)
        relay.start()
        defer { relay.stop() }
        let session = UUID()
        let key = [UInt8](repeating: 5, count: 32)
        let leaving = SigningKeyPair()
        let ana = try RawRelayClient(port: relay.port)
        try ana.admit(session: session, identity: leaving, key: key, create: true, name: "ana")
        let ben = try RawRelayClient(port: relay.port)
        try ben.admit(session: session, key: key, create: false, name: "ben")
        ana.socket.shutdown()
        let anaID = RelayAuthenticator.participantID(for: leaving.publicKey)
        var heard = false
        // Bounded: at most 200 frames (pings, acknowledgements) or 20 s, far below the 120 s grace.
        let deadline = ContinuousClock.now + .seconds(20)
        for _ in 0..<200 where !heard && ContinuousClock.now < deadline {
            guard let frame = try ben.nextFrame(timeout: .seconds(20)) else { break }
            if case let .participantLeft(_, id) = frame, id == anaID { heard = true }
        }
        #expect(heard, "ben never heard that ana left")
    }
}
