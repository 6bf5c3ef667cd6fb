import Foundation
import TandemNet
import TandemTestKit
import Testing

/// A link over a list of real relays on loopback: it passes over a relay that is not listening
/// and one that lacks the session, and when none will do, its error names each relay tried.
@Suite("Relay lists over sockets")
struct RelayListSocketIOTests {
    /// A loopback port where nothing listens: a relay's, once it has stopped.
    static func deadPort() throws -> UInt16 {
        let server = try RelayServer(address: try SocketAddress(host: "127.0.0.1", port: 0))
        server.start()
        let port = server.port
        server.stop()
        return port
    }

    static func relay() throws -> RelayServer {
        let server = try RelayServer(address: try SocketAddress(host: "127.0.0.1", port: 0))
        server.start()
        return server
    }

    @Test func aLinkLandsOnTheSecondRelayWhenTheFirstIsNotListening() async throws {
        let dead = try Self.deadPort()
        let live = try Self.relay()
        defer { live.stop() }
        let relays = [RelayEndpoint(host: "127.0.0.1", port: dead), RelayEndpoint(host: "127.0.0.1", port: live.port)]
        let session = UUID()
        // The creator starts at the first relay, which refuses, and creates the session on the second.
        let ana = Member(link: try await NetworkRelayConnector(relays: relays).join(RelayHarness.request(session, "ana", create: true)))
        #expect(ana.link.welcome.created)
        // It is there: a link to that relay alone joins it.
        let ben = Member(link: try await NetworkRelayConnector(host: "127.0.0.1", port: live.port).join(RelayHarness.request(session, "ben")))
        // Joiners over the list start wherever their draw says, and end up there too.
        let cem = Member(link: try await NetworkRelayConnector(relays: relays, seed: 11).join(RelayHarness.request(session, "cem")))
        #expect(Set(cem.link.welcome.participants.map(\.displayName)) == ["ana", "ben", "cem"])
        // Both paths work on the relay they landed on: reliable frames, and datagrams registered there.
        try ana.link.send(Array("reliable".utf8), to: .everyone, reliable: true)
        try ana.link.send(Array("datagram".utf8), to: .everyone, reliable: false)
        for member in [ben, cem] {
            #expect(await member.recorder.waitForMessages(1, reliable: true) == ["reliable"])
            #expect(await member.recorder.waitForMessages(1, reliable: false) == ["datagram"])
        }
        for member in [ana, ben, cem] { await member.link.leave() }
    }

    @Test func aRelayWithoutTheSessionIsPassedOverAndTheFinalErrorNamesEachRelay() async throws {
        let empty = try Self.relay()
        let holder = try Self.relay()
        defer {
            empty.stop()
            holder.stop()
        }
        let session = UUID()
        let ana = Member(link: try await NetworkRelayConnector(host: "127.0.0.1", port: holder.port)
            .join(RelayHarness.request(session, "ana", create: true)))
        let both = [RelayEndpoint(host: "127.0.0.1", port: empty.port), RelayEndpoint(host: "127.0.0.1", port: holder.port)]
        for seed: UInt64 in 1...4 {
            let link = try await NetworkRelayConnector(relays: both, seed: seed).join(RelayHarness.request(session, "guest\(seed)"))
            #expect(link.welcome.participants.contains { $0.displayName == "ana" })
            await link.leave()
        }

        let dead = try Self.deadPort()
        let none = [RelayEndpoint(host: "127.0.0.1", port: dead), RelayEndpoint(host: "127.0.0.1", port: empty.port)]
        let stranger = UUID()
        let error = await #expect(throws: RelayError.self) {
            _ = try await NetworkRelayConnector(relays: none, seed: 3).join(RelayHarness.request(stranger, "eve"))
        }
        #expect(error?.code == .unreachable)
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("127.0.0.1:\(dead): cannot connect"), "\(text)")
        #expect(text.contains("127.0.0.1:\(empty.port): session not found"), "\(text)")
        await ana.link.leave()
    }
}
