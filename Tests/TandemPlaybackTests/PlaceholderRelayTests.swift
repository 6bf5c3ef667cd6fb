import Foundation
import Testing
@testable import Tandem
import TandemClock
import TandemNet
import TandemPlayback
import TandemTestKit
import TandemWire

/// An invitee (a participant holding the session's secret) floods the ordered stream with records
/// nobody can open, through the real session stack on the in-memory relay and on a relay server
/// on loopback, while a late joiner
/// joins: every record counts in the joiner's history as a placeholder, so it adopts the group's
/// timeline at once instead of waiting at version 0 for a snapshot.
@Suite(.serialized) struct PlaceholderRelayIOTests {
    typealias Behaviour = CoordinatorBehaviourIOTests

    @Test(arguments: TransportKind.allCases)
    func aLateJoinerAdoptsTheTimelineWhileAnInviteeFloodsUnopenableRecords(transport: TransportKind) async throws {
        let relay = try TestRelay(transport)
        defer { relay.shutdown() }
        let host = try await Behaviour.member("host", relay: relay, invitation: nil, delegate: Behaviour.CommandLog(item: "film"))
        try host.coordinator.reportItem("film", identity: "d=3600.000;h=aa", ready: true)
        try host.coordinator.transitionToItem(identifier: "film")
        host.coordinator.coordinateSeek(to: ItemTime(nanoseconds: 7_000_000_000))
        #expect(await awaitTimeline(of: host.coordinator) { $0.anchorMediaTime == ItemTime(nanoseconds: 7_000_000_000) })

        let mallory = try await CoordinatingPlaybackArticleIOTests.joined("mallory", relay: relay, invitation: host.session.invitation)
        defer { mallory.leave() }
        let link = try #require(mallory.joinedLink)
        // A body sealed once, sent again and again (replays), and random bytes as sealed bodies.
        let replayed = mallory.bodies.seal(Array("{}".utf8), kind: .playbackProposal, path: .ordered, retention: .playback)
        let flood = Task {
            var random = SeededRandom(seed: 0xF100D)
            // About 100 a second, at most 600 (six seconds).
            for sent in 0..<600 {
                if Task.isCancelled { return sent }
                let body = sent % 2 == 0 ? replayed : (0..<200).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                try? link.sendOrdered(body, retention: sent % 4 == 3 ? .kept : .playback)
                try? await Task.sleep(for: .milliseconds(10))
            }
            return 600
        }
        defer { flood.cancel() }
        // The flood is well under way: the group's history is mostly the invitee's records.
        #expect(await awaitTimeline(of: host.coordinator) { $0.version >= 120 })

        let clock = ContinuousClock()
        let started = clock.now
        let ana = try await Behaviour.member("ana", relay: relay, invitation: host.session.invitation, delegate: Behaviour.CommandLog(item: "film"))
        // Adopted: her published timeline is the group's, past a hundred of the invitee's records.
        let adopted = await awaitTimeline(of: ana.coordinator) {
            $0.version >= 100 && $0.anchorMediaTime == ItemTime(nanoseconds: 7_000_000_000)
        } && ana.coordinator.machine?.snapshots.phase == .live
        let took = clock.now - started
        flood.cancel()
        let sent = await flood.value
        #expect(adopted, """
            ana: phase \(String(describing: ana.coordinator.machine?.snapshots.phase)), version \(ana.coordinator.core.timeline.version) \
            of \(host.coordinator.core.timeline.version)
            """)
        #expect(took < .seconds(5), "adopted the timeline after \(took)")
        #expect(sent < 600, "the flood was still going while she joined")
        // Once the flood stops, she and the host hold the same state at the same version.
        #expect(await eventually(10) { ana.coordinator.core == host.coordinator.core })
        #expect(host.session.rejectionCounts[.replayed, default: 0] > 10)
        // Random bytes name an epoch nobody holds (their first byte), or fail to open under its key.
        #expect(host.session.rejectionCounts[.malformed, default: 0] + host.session.rejectionCounts[.unknownEpoch, default: 0] > 10)
        #expect(ana.coordinator.core.timeline.version > 100)
        ana.session.leave()
        host.session.leave()
    }
}
