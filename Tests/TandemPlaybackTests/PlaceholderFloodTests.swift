import Foundation
import Testing
@testable import Tandem
import TandemClock
import TandemHarness
import TandemNet
import TandemTestKit
@testable import TandemPlayback

/// An invitee (a participant holding the session's secret) floods the ordered stream with
/// records nobody can open while a late joiner joins: every record counts in the joiner's history
/// as a placeholder, so it adopts the group's timeline at once instead of waiting at version 0
/// for a snapshot. Whole participants in virtual time: real sessions (`VirtualSessions`), each
/// with a `PlaybackCoordinator` coordinating with it on the loop and a scripted player; the flood
/// runs at 100 records a second of virtual time, deterministically.
@Suite struct PlaceholderFloodTests {
    @Test func aLateJoinerAdoptsTheTimelineWhileAnInviteeFloodsUnopenableRecords() throws {
        let sessions = VirtualSessions(activity: WatchTogether(item: "film"))
        defer { sessions.shutdown() }
        let hostParticipant = SessionParticipant(try sessions.join("host"), identity: "d=3600.000;h=aa")
        let (hostMember, host, hostPlayer) = (hostParticipant.member, hostParticipant.coordinator, hostParticipant.player)
        sessions.run()
        try host.transitionToItem(identifier: "film")
        host.coordinateSeek(to: ItemTime(nanoseconds: 7_000_000_000))
        sessions.run(for: 300)
        #expect(host.timeline.anchorMediaTime == ItemTime(nanoseconds: 7_000_000_000))

        let mallory = try sessions.join("mallory").session
        let link = try #require(mallory.joinedLink)
        // A body sealed once, sent again and again (replays), and random bytes as sealed bodies:
        // one every 10 ms, at most 600 (six seconds).
        let replayed = mallory.bodies.seal(Array("{}".utf8), kind: .playbackProposal, path: .ordered, retention: .playback)
        var random = SeededRandom(seed: 0xF100D)
        var sent = 0
        func flood() {
            let body = sent % 2 == 0 ? replayed : (0..<200).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            try? link.sendOrdered(body, retention: sent % 4 == 3 ? .kept : .playback)
            sent += 1
            sessions.run(for: 10)
        }
        // The flood is well under way: the group's history is mostly the invitee's records.
        while host.timeline.version < 120, sent < 600 { flood() }
        #expect(host.timeline.version >= 120)

        let started = sessions.world.now
        let anaParticipant = SessionParticipant(try sessions.join("ana"), identity: "d=3600.000;h=aa")
        let (ana, anaPlayer) = (anaParticipant.coordinator, anaParticipant.player)
        // Adopted: her published timeline is the group's, past a hundred of the invitee's
        // records, while the flood goes on.
        func adopted() -> Bool {
            ana.timeline.version >= 100 && ana.timeline.anchorMediaTime == ItemTime(nanoseconds: 7_000_000_000)
                && ana.machine?.snapshots.phase == .live
        }
        while !adopted(), sent < 600 { flood() }
        let took = sessions.world.now - started
        #expect(adopted(), """
            ana: phase \(String(describing: ana.machine?.snapshots.phase)), version \(ana.core.timeline.version) \
            of \(host.core.timeline.version)
            """)
        #expect(took < 5_000_000_000, "adopted the timeline after \(took) ns")
        #expect(sent < 600, "the flood was still going while she joined")
        // Once the flood stops, she and the host hold the same state at the same version.
        sessions.run(for: 500)
        #expect(ana.core == host.core)
        #expect(hostMember.session.rejectionCounts[.replayed, default: 0] > 10)
        // Random bytes name an epoch nobody holds (their first byte), or fail to open under its key.
        let session = hostMember.session
        #expect(session.rejectionCounts[.malformed, default: 0] + session.rejectionCounts[.unknownEpoch, default: 0] > 10)
        #expect(ana.core.timeline.version > 100)
        #expect(hostPlayer.commandsOffLoop == 0 && anaPlayer.commandsOffLoop == 0)
    }
}
