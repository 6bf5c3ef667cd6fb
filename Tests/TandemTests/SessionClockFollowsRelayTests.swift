import Foundation
@testable import Tandem
import TandemNet
import TandemTestKit
import Testing

/// A session whose invite names two relays, on real sockets: when the relay its link joined on
/// is lost mid-session, the link resumes on the other, and the session clock probes that
/// relay's time service from then on, keeping its estimate object (and reading) across the move.
@Suite struct SessionClockFollowsRelayIOTests {
    @Test func theProberMovesToTheRelayTheLinkResumesOn() async throws {
        let relay = try RelayServer(address: try SocketAddress(host: "127.0.0.1", port: 0))
        relay.start()
        defer { relay.stop() }
        // The first relay of the list: a TCP path to the real one, with no time service behind its
        // UDP port, so any sample the clock takes comes from the second relay.
        let first = try HostileRelayProxy(targetPort: relay.port)
        defer { first.stop() }
        let relays = [RelayEndpoint(host: "127.0.0.1", port: first.port), RelayEndpoint(host: "127.0.0.1", port: relay.port)]
        let firstAddress = try SocketAddress(host: "127.0.0.1", port: first.port)
        let secondAddress = try SocketAddress(host: "127.0.0.1", port: relay.port)

        let center = ActivityCenter()
        center.displayName = "ana"
        center.configure(relay: NetworkRelayConnector(relays: relays), relays: relays)
        var hosted = center.sessions(for: Quiz.self).makeAsyncIterator()
        #expect(try await center.start(Quiz(topic: "clocks")))
        let session = try #require(await hosted.next())
        session.join()
        #expect(await awaitValue(session.$state.values, within: 30) { $0.isJoined })
        #expect(session.invitation.relays == relays)
        // The creator joins on the first relay, and its clock probes the first relay's time service.
        let probed = try #require(session.sessionClock as? ProbedSessionClock)
        #expect(probed.server == firstAddress)
        #expect(probed.samples == 0)

        // The first relay goes away after the join: the link resumes on the second.
        // The clock tells of each sample it takes: the wait follows them.
        let (changes, telling) = AsyncStream.makeStream(of: Void.self)
        #expect(probed.observeChanges { telling.yield() })
        first.stop()
        _ = await awaitValue(changes, within: 30) { _ in probed.server == secondAddress && probed.samples > 0 }
        #expect(probed.server == secondAddress, "the clock still probes \(probed.server)")
        #expect(probed.samples > 0, "no sample from the second relay's time service")
        // The session keeps the same clock source, and it now reads the second relay's time.
        #expect(session.sessionClock as? ProbedSessionClock === probed)
        let now = center.localClock.instant().nanoseconds
        let sessionNow = try #require(session.sessionClock?.sessionTime(atLocal: now))
        // The relay's clock is this process's monotonic clock too: the estimate is close to it.
        let bound = try #require(session.sessionClock?.errorBound(atLocal: now))
        #expect(bound >= 0)
        #expect(abs(sessionNow - relay.clock.instant().nanoseconds) < 1_000_000_000, "session time \(sessionNow), the relay's \(relay.clock.instant().nanoseconds)")
        session.leave()
    }
}
