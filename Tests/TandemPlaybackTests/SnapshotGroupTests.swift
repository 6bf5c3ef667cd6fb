import Foundation
import Testing
import TandemClock
import TandemNet
import TandemTestKit
@testable import TandemPlayback

/// Snapshots through a relay, in virtual time: a participant makes 5,000 proposals, the lowest id
/// publishes snapshots as they come, and a late joiner starts from one, landing on exactly the
/// core of those who were there, from a history that the snapshots keep well under the relay's
/// caps. Whole coordinators over a `VirtualRelayWorld`, deterministic, with no poll.
@Suite struct SnapshotGroupTests {
    /// How long virtual time may run for what a test waits for.
    static let bound: Int64 = 30_000_000_000

    @Test func aLateJoinerAfterFiveThousandProposalsLandsOnTheSameCoreFromASnapshot() throws {
        let group = VirtualCoordinatedGroup()
        defer { group.shutdown() }
        let host = try group.join("host", identity: "d=3600.000;h=aa")
        try host.coordinator.transitionToItem(identifier: "film")
        group.run(for: 100)
        var proposed = host.coordinator.timeline.version
        // In batches of 500, each taken in, so that snapshots come back between them; the
        // loop runs every 50, so that the link's queue stays within its bounds.
        for batch in 0..<10 {
            for n in 0..<500 {
                let index = batch * 500 + n
                if index % 2 == 0 {
                    try host.coordinator.reportItem("film", identity: "d=3600.000;h=\(index % 7)", ready: index % 3 == 0)
                } else {
                    try host.coordinator.proposeSeek(to: ItemTime(nanoseconds: Int64(index) * 1_000_000))
                }
                if n % 50 == 49 { group.world.run() }
            }
            proposed += 500
            let target = proposed
            #expect(group.world.advance(until: { host.coordinator.timeline.version >= target }, within: Self.bound))
        }
        let machine = try #require(host.coordinator.machine)
        // The only participant publishes: a snapshot came back at least every 1,000 records.
        #expect(machine.snapshots.recordsSinceSnapshot < 1_000 + 500, "awaiting its own: \(machine.snapshots.awaitingOwn)")
        #expect(machine.snapshots.lastSnapshotAt != nil)

        let ana = try group.join("ana", identity: "d=3600.000;h=aa")
        let landed = group.world.advance(until: {
            ana.coordinator.machine?.snapshots.phase == .live && ana.coordinator.core == host.coordinator.core
        }, within: Self.bound)
        // Should she not land, say where she stands.
        #expect(landed, """
            ana: phase \(String(describing: ana.coordinator.machine?.snapshots.phase)), \
            history of \(ana.coordinator.machine?.snapshots.assembledHistoryRecords ?? -1) records, \
            version \(ana.coordinator.core.timeline.version) of \(host.coordinator.core.timeline.version)
            """)
        #expect(ana.coordinator.core.timeline.version >= proposed)
        // What the relay kept for her: the records since the older of the two newest snapshots,
        // far below the 5,000 made and the relay's cap of 4,096.
        let kept = try #require(ana.coordinator.machine?.snapshots.assembledHistoryRecords)
        #expect(kept > 0 && kept <= 2 * 1_000 + 2 * 500, "kept \(kept)")
        // And live records go on alike.
        host.coordinator.coordinateSeek(to: ItemTime(nanoseconds: 42_000_000_000))
        #expect(group.world.advance(until: {
            [host, ana].allSatisfy { $0.coordinator.timeline.anchorMediaTime == ItemTime(nanoseconds: 42_000_000_000) }
        }, within: Self.bound))
        group.run(for: 100)
        #expect(ana.coordinator.core == host.coordinator.core)
        #expect(host.player.commandsOffLoop == 0 && ana.player.commandsOffLoop == 0)
    }
}
