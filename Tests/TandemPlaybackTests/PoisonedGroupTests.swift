import Foundation
import Testing
import TandemClock
import TandemNet
import TandemTestKit
@testable import TandemPlayback

/// Poisoned proposals through a relay, in virtual time: a participant that bypasses its
/// coordinator's validation sends them on its link's ordered channel; every coordinator skips
/// them with an event attributed to the sender, the group plays on, and a late joiner whose
/// history holds them lands on the same core. Whole coordinators (`PlaybackCoordinator` on the
/// participant's loop, scripted players) over a `VirtualRelayWorld`: no sleep, no poll.
/// (`PoisonedSessionIOTests` keeps the coordinator's refusals through the real session stack.)
@Suite struct PoisonedGroupTests {
    static let film = "d=60.000;h=00000000000000aa"

    /// The reasons of the rejections among `events`, in order.
    static func rejections(_ events: [CoordinationCore.Event]) -> [ProposalRejection.Reason] {
        events.compactMap { if case .proposalRejected(let rejection, _, _) = $0 { rejection.reason } else { nil } }
    }

    /// The poisons, as bodies of the ordered channel, and why each is skipped.
    static func poisons() throws -> [(body: [UInt8], reason: ProposalRejection.Reason)] {
        let encoder = JSONEncoder()
        return [
            (Array(try encoder.encode(PlaybackProposal.setRate(1e15))), .rateOutOfRange),
            (Array(try encoder.encode(PlaybackProposal.seek(to: .max))), .mediaTimeOutOfRange),
            (Array(try encoder.encode(PlaybackProposal.transition(item: "film", at: 3_600_000_000_000))), .mediaTimeOutOfRange),
            (Array("{\"setRate\":{\"_0\":\"fast\"}}".utf8), .unreadable),
            ([0xFF, 0x00, 0x7B], .unreadable),
            (Array(repeating: UInt8(ascii: " "), count: CoordinationCore.maximumProposalBytes + 1), .oversized),
        ]
    }

    /// The host puts the group on the one-minute film and plays it.
    static func playingFilm(_ group: VirtualCoordinatedGroup) throws -> VirtualCoordinatedGroup.Member {
        let host = try group.join("host", identity: film)
        try host.coordinator.transitionToItem(identifier: "film")
        host.coordinator.coordinateRateChange(to: 1)
        group.run(for: 1_200)
        #expect(host.coordinator.timeline.rate == 1 && host.coordinator.timeline.item == "film")
        return host
    }

    @Test func poisonedProposalsAreSkippedByEveryoneAndALateJoinerJoinsNormally() throws {
        let group = VirtualCoordinatedGroup()
        defer { group.shutdown() }
        let host = try Self.playingFilm(group)
        // Eve bypasses the coordinator: her link orders whatever bytes she gives it.
        let eve = try group.join("eve", identity: Self.film)
        group.run(for: 300)
        let before = host.coordinator.timeline.version
        let playing = host.coordinator.timeline
        let poisons = try Self.poisons()
        for poison in poisons { try eve.participant.link.sendOrdered(poison.body, retention: .kept) }
        group.run(for: 300)

        #expect(host.coordinator.timeline.version == before + UInt64(poisons.count))
        for member in [host, eve] { #expect(Self.rejections(member.events) == poisons.map(\.reason)) }
        // Attributed to the one who sent them, in their order.
        let rejected = host.events.compactMap { if case .proposalRejected(_, let originator, let order) = $0 { (originator, order) } else { nil } }
        #expect(rejected.map(\.0) == Array(repeating: eve.id, count: poisons.count))
        #expect(rejected.map(\.1) == Array((before + 1)...(before + UInt64(poisons.count))))
        // Nothing moved: the group still plays the film at rate 1 from where it started.
        #expect(host.coordinator.timeline.rate == 1 && host.coordinator.timeline.item == "film")
        #expect(host.coordinator.timeline.anchorMediaTime == playing.anchorMediaTime)
        #expect(host.coordinator.timeline.anchorSessionTime == playing.anchorSessionTime)

        // A late joiner replays the history, poisons included, and lands on the same core.
        let ana = try group.join("ana", identity: Self.film)
        group.run(for: 1_200)
        #expect(ana.coordinator.core == host.coordinator.core)
        #expect(Self.rejections(ana.events) == poisons.map(\.reason))
        #expect(ana.player.plays.contains { $0.rate == 1 })

        // And the group goes on: a valid change after them applies everywhere, its pre-roll gate
        // closed.
        ana.coordinator.coordinateSeek(to: .zero + .seconds(30))
        group.run(for: 1_500)
        for member in [host, eve, ana] {
            let core = member.coordinator.core
            #expect(core.timeline.anchorMediaTime == .zero + .seconds(30) && core.waiting.gate == nil)
            #expect(member.player.commandsOffLoop == 0)
        }
        #expect(host.coordinator.core == ana.coordinator.core && eve.coordinator.core == ana.coordinator.core)
    }

    @Test func aSuspensionEndedAtATimePastTheItemStillEndsAndTheGroupResumes() throws {
        let group = VirtualCoordinatedGroup()
        defer { group.shutdown() }
        let host = try Self.playingFilm(group)
        let stall = host.coordinator.beginSuspension(for: .stallRecovery)
        group.run(for: 300)
        // Waiting pauses the published timeline.
        #expect(host.coordinator.timeline.rate == 0)
        #expect(host.coordinator.core.isWaiting)
        stall.end(proposingNewTime: .max)
        group.run(for: 1_200)
        #expect(host.coordinator.timeline.rate == 1)
        #expect(!host.coordinator.core.isWaiting)
        #expect(host.coordinator.timeline.anchorMediaTime == .zero + .seconds(60))
    }
}
