import Foundation
import Tandem
import TandemNet
import TandemTestKit
import Testing

/// Issue 15, item 2, through a real relay's sockets and real sessions: a participant whose
/// connection was closed by its peer shows in `GroupSession.awayParticipants` at once, for those
/// already there and for a joiner who comes while it is away, and then as departed once the
/// relay's short grace period has run out. The relay core's part is `PeerAwayTests` on virtual
/// time; this is the shell's, on real sockets, waiting on the published values (no polling).
@Suite("Sessions: away, then departed, on a real relay")
struct AwayParticipantsIOTests {
    private func center(_ name: String, port: UInt16) -> ActivityCenter {
        let center = ActivityCenter()
        center.displayName = name
        center.configure(relay: NetworkRelayConnector(host: "127.0.0.1", port: port), host: "127.0.0.1", port: port)
        return center
    }

    private func join(_ name: String, _ invitation: Invitation, port: UInt16) async throws -> GroupSession<Quiz> {
        let center = center(name, port: port)
        var sessions = center.sessions(for: Quiz.self).makeAsyncIterator()
        try await center.accept(invitation)
        let session = try #require(await sessions.next())
        session.join()
        #expect(await awaitValue(session.$state.values, within: 30) { $0.isJoined })
        return session
    }

    @Test("a peer-closed participant is away for those there and for a late joiner, then departed for both")
    func awayThenDeparted() async throws {
        var configuration = RelayCoreConfiguration()
        // Long enough for a joiner to come in while Carl is away on a loaded machine; the long
        // grace of a silent connection is far off, so only the short one can end his seat.
        configuration.closedGracePeriod = 4_000_000_000
        configuration.gracePeriod = 120_000_000_000
        let relay = try TestRelay(.network, configuration: configuration)
        defer { relay.shutdown() }
        // Carl reaches the relay through a proxy, which closes both sides as his process's exit would.
        let proxy = try HostileRelayProxy(targetPort: relay.port)
        defer { proxy.stop() }

        let host = center("ana", port: relay.port)
        var hosted = host.sessions(for: Quiz.self).makeAsyncIterator()
        #expect(try await host.start(Quiz(topic: "away")))
        let ana = try #require(await hosted.next())
        ana.join()
        #expect(await awaitValue(ana.$state.values, within: 30) { $0.isJoined })
        defer { ana.leave() }
        let carl = try await join("carl", ana.invitation, port: proxy.port)
        defer { carl.leave() }
        #expect(await awaitValue(ana.$activeParticipants.values, within: 30) { $0.count == 2 })
        #expect(ana.awayParticipants.isEmpty)

        proxy.stop()
        #expect(await awaitValue(ana.$awayParticipants.values) { [carl.localParticipant.id] == $0.map(\.id) },
                "ana sees away: \(ana.awayParticipants)")
        // Ben joins while Carl is away: his welcome is followed by the relay's word that Carl is.
        let ben = try await join("ben", ana.invitation, port: relay.port)
        defer { ben.leave() }
        #expect(await awaitValue(ben.$awayParticipants.values) { [carl.localParticipant.id] == $0.map(\.id) },
                "ben sees away: \(ben.awayParticipants)")

        // Past the short grace, Carl is departed: away no more, and not active.
        for session in [ana, ben] {
            // Departing ends the away report and the seat alike; each waited for as it is published.
            let carlID = carl.localParticipant.id
            #expect(await awaitValue(session.$awayParticipants.values, within: 15) { $0.isEmpty },
                    "\(session.localParticipant.displayName) sees away \(session.awayParticipants)")
            #expect(await awaitValue(session.$activeParticipants.values, within: 15) { !$0.contains { $0.id == carlID } },
                    "\(session.localParticipant.displayName) sees active \(session.activeParticipants)")
        }
    }
}
