import Foundation
import Testing
import Tandem
import TandemClock
import TandemNet
import TandemPlayback
import TandemTestKit

/// Snapshots through the real session stack on the in-memory relay: a participant makes 5,000
/// proposals, the lowest id publishes snapshots as they come, and a late joiner starts from one,
/// landing on exactly the core of those who were there, from a history that the snapshots keep
/// well under the relay's caps.
@Suite(.serialized) struct SnapshotRelayIOTests {
    typealias Behaviour = CoordinatorBehaviourIOTests

    @Test func aLateJoinerAfterFiveThousandProposalsLandsOnTheSameCoreFromASnapshot() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let host = try await Behaviour.member("host", relay: relay, invitation: nil, delegate: Behaviour.CommandLog(item: "film"))
        try host.coordinator.reportItem("film", identity: "d=3600.000;h=aa", ready: true)
        try host.coordinator.transitionToItem(identifier: "film")
        // In batches of 500, each waited for (bounded), so that snapshots come back between them.
        var proposed = 2
        for batch in 0..<10 {
            for n in 0..<500 {
                let index = batch * 500 + n
                if index % 2 == 0 {
                    try host.coordinator.reportItem("film", identity: "d=3600.000;h=\(index % 7)", ready: index % 3 == 0)
                } else {
                    host.coordinator.coordinateSeek(to: ItemTime(nanoseconds: Int64(index) * 1_000_000))
                }
            }
            proposed += 500
            let target = UInt64(proposed)
            #expect(await awaitTimeline(of: host.coordinator, within: 30) { $0.version >= target })
        }
        let machine = try #require(host.coordinator.machine)
        // The only participant publishes: a snapshot came back at least every 1,000 records.
        #expect(machine.snapshots.recordsSinceSnapshot < 1_000 + 500,
                "awaiting its own: \(machine.snapshots.awaitingOwn); session \(host.session.state)")
        #expect(machine.snapshots.lastSnapshotAt != nil)

        let ana = try await Behaviour.member("ana", relay: relay, invitation: host.session.invitation, delegate: Behaviour.CommandLog(item: "film"))
        let landed = await eventually(30) {
            ana.coordinator.machine?.snapshots.phase == .live && ana.coordinator.core == host.coordinator.core
        }
        // Should she not land, say where she stands.
        #expect(landed, """
            ana: session \(ana.session.state), phase \(String(describing: ana.coordinator.machine?.snapshots.phase)), \
            history of \(ana.coordinator.machine?.snapshots.assembledHistoryRecords ?? -1) records, \
            version \(ana.coordinator.core.timeline.version) of \(host.coordinator.core.timeline.version)
            """)
        #expect(ana.coordinator.core == host.coordinator.core)
        #expect(ana.coordinator.core.timeline.version >= UInt64(proposed))
        // What the relay kept for her: the records since the older of the two newest snapshots,
        // far below the 5,002 made and the relay's cap of 4,096.
        let kept = try #require(ana.coordinator.machine?.snapshots.assembledHistoryRecords)
        #expect(kept > 0 && kept <= 2 * 1_000 + 2 * 500, "kept \(kept)")
        // And live records go on alike.
        host.coordinator.coordinateSeek(to: 42_000_000_000)
        for member in [host, ana] { #expect(await awaitTimeline(of: member.coordinator) { $0.anchorMediaTime == 42_000_000_000 }) }
        #expect(ana.coordinator.core == host.coordinator.core)
    }
}
