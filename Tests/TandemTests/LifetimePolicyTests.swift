import Foundation
import Tandem
import TandemNet
import TandemTestKit
import Testing

/// `GroupActivityMetadata.lifetimePolicy = .endsWhenInitiatorLeaves` when the initiator goes
/// without leaving (its process killed: its connection closed by a proxy, as an exit would), on a
/// real relay: the others' sessions end once the relay reports it departed. Its `leave()` is
/// `SharePlayCompatibilityIOTests`' case.
@Suite struct LifetimePolicyIOTests {
    struct Slides: GroupActivity {
        var deck: String
        var metadata: GroupActivityMetadata {
            var metadata = GroupActivityMetadata()
            metadata.title = deck
            metadata.lifetimePolicy = .endsWhenInitiatorLeaves
            return metadata
        }
    }

    private func center(_ name: String, port: UInt16) -> ActivityCenter {
        let center = ActivityCenter()
        center.displayName = name
        center.configure(relay: NetworkRelayConnector(host: "127.0.0.1", port: port), host: "127.0.0.1", port: port)
        return center
    }

    @Test func theOthersSessionsEndWhenTheInitiatorGoesWithoutLeaving() async throws {
        var configuration = RelayCoreConfiguration()
        configuration.closedGracePeriod = 300_000_000
        let relay = try TestRelay(.network, configuration: configuration)
        defer { relay.shutdown() }
        // The initiator reaches the relay through a proxy, which closes both sides as its exit would.
        let proxy = try HostileRelayProxy(targetPort: relay.port)
        defer { proxy.stop() }

        let host = center("ana", port: proxy.port)
        var hosted = host.sessions(for: Slides.self).makeAsyncIterator()
        #expect(try await host.start(Slides(deck: "q3")))
        let ana = try #require(await hosted.next())
        ana.join()
        #expect(await awaitValue(ana.$state.values, within: 30) { if case .joined = $0 { true } else { false } })

        let guestCenter = center("ben", port: relay.port)
        var joined = guestCenter.sessions(for: Slides.self).makeAsyncIterator()
        try await guestCenter.accept(ana.invitation)
        let ben = try #require(await joined.next())
        ben.join()
        #expect(await awaitValue(ben.$activeParticipants.values, within: 30) { $0.count == 2 })

        proxy.stop()
        #expect(await awaitValue(ben.$state.values, within: 30) { state in
            if case .invalidated(let reason) = state { reason.code == .ended } else { false }
        }, "ben's session: \(ben.state)")
        #expect("\(ben.state)".contains("who started it, left"))
    }
}
