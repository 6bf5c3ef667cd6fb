import Foundation
import Testing
import TandemClock
import TandemNet
import TandemPlayback
import TandemHarness

/// Several participants on virtual time, each with its own clock offset and drift, each
/// estimating the session clock through a simulated, jittery network, all applying the same
/// ordered proposals: every change lands at the same true instant everywhere, deterministically.
@Suite struct SimulatedGroupTests {
    static let ms: Int64 = 1_000_000

    /// A participant: its clock synchronisation run and its coordination core.
    struct Peer {
        var clock: ClockSyncSimulation
        var core = CoordinationCore()
    }

    static func peers(jitter: (Int64, Int64)) -> [Peer] {
        let setups: [(offset: Int64, drift: Double)] = [(3_700 * ms, 80), (-2_250 * ms, -120), (41_000 * ms, 35), (-900 * ms, 150)]
        return setups.enumerated().map { index, setup in
            let path = Impairment(delay: (jitter.0 + jitter.1) / 2, jitter: (jitter.1 - jitter.0) / 2)
            return Peer(clock: ClockSyncSimulation(setup: .init(
                impairment: path, clientOffset: setup.offset, clientDriftPPM: setup.drift,
                seed: 0x7A4D_0000 + UInt64(index))))
        }
    }

    /// Proposals as the relay would order them: effective a lead ahead of their ordering, the
    /// lead from the relay's own formula for the slowest round trip.
    static func script(orderedFrom start: Int64, roundTrip: Int64) -> [OrderedProposal] {
        let lead = RelayCoreConfiguration().lead(forRoundTrip: roundTrip)
        let ana = UUID()
        let ben = UUID()
        let changes: [(Int64, UUID, PlaybackProposal)] = [
            (0, ana, .transition(item: "film", at: 0)),
            (200 * ms, ana, .setRate(1)),
            (1_700 * ms, ben, .pause(at: nil)),
            (2_300 * ms, ana, .seek(to: ItemTime(nanoseconds: 600_000 * ms))),
            (2_310 * ms, ben, .setRate(2)),
            (4_000 * ms, ana, .setRate(0.5)),
        ]
        return changes.enumerated().map { index, change in
            OrderedProposal(originator: change.1, order: UInt64(index + 1), orderedAt: SessionInstant(nanoseconds: start + change.0),
                            effectiveAt: SessionInstant(nanoseconds: start + change.0 + lead),
                            proposal: change.2)
        }
    }

    @Test(arguments: [(1 * ms, 3 * ms), (25 * ms, 55 * ms)])
    func changesLandAtTheSameTrueInstantEverywhere(jitter: (Int64, Int64)) {
        var peers = Self.peers(jitter: jitter)
        // Ten seconds of synchronisation first.
        for index in peers.indices {
            peers[index].clock.run(until: 10_000 * Self.ms, evaluationInterval: 1_000 * Self.ms) { _ in }
        }
        let proposals = Self.script(orderedFrom: 10_000 * Self.ms, roundTrip: 2 * jitter.1)
        var worstSpread: Int64 = 0
        for proposal in proposals {
            // Each participant keeps synchronising until the change is due, applies it, and
            // computes the local instant at which its player acts; that instant is mapped back to
            // the true (virtual) time.
            var trueInstants: [Int64] = []
            for index in peers.indices {
                peers[index].clock.run(until: proposal.effectiveAt.nanoseconds - 5 * Self.ms, evaluationInterval: 1_000 * Self.ms) { _ in }
                _ = peers[index].core.apply(proposal)
                let timeline = peers[index].core.timeline
                guard let local = peers[index].clock.sessionClock.localTime(atSession: timeline.anchorSessionTime.nanoseconds) else {
                    Issue.record("participant \(index) has no session clock estimate")
                    return
                }
                trueInstants.append(peers[index].clock.clientClock.baseTime(atLocal: local))
            }
            worstSpread = max(worstSpread, trueInstants.max()! - trueInstants.min()!)
            // Every core holds the same timeline after every change.
            #expect(Set(peers.map { $0.core.timeline.version }).count == 1)
            #expect(peers.allSatisfy { $0.core.timeline == peers[0].core.timeline })
            // And the change lands where it should in true time (within the estimate's error).
            #expect(abs(trueInstants[0] - proposal.effectiveAt.nanoseconds) < Self.ms)
        }
        // Each participant's clock error stays within the clock layer's targets (1 ms under
        // ±15 ms of jitter, far less when quiet); two participants can err in opposite
        // directions, so the worst spread of four, over every change, stays within twice that.
        #expect(worstSpread < (jitter.1 > 10 * Self.ms ? 2 * Self.ms : 500_000), "spread \(worstSpread) ns")
        #expect(peers[0].core.timeline.rate == 0.5)
        #expect(peers[0].core.timeline.anchorMediaTime.nanoseconds > 600_000 * Self.ms)
    }

    @Test func theLeadLetsEveryoneReceiveAChangeBeforeItIsDue() {
        // One way delays up to 55 ms: the slowest round trip is 110 ms; with the relay's margin
        // the change is due after it has reached everyone.
        let configuration = RelayCoreConfiguration()
        let lead = configuration.lead(forRoundTrip: 110 * Self.ms)
        #expect(lead >= 55 * Self.ms + configuration.orderingMargin)
        #expect(configuration.lead(forRoundTrip: 60_000 * Self.ms) == configuration.maximumLead)
        #expect(configuration.lead(forRoundTrip: 0) == configuration.minimumLead)
    }
}
