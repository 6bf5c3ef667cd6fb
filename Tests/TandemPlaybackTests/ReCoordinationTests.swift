import Foundation
import Synchronization
import Testing
import Tandem
import TandemClock
@testable import TandemPlayback
import TandemTestKit

/// A coordinator that coordinates anew (`coordinateWithSession` again, with another session)
/// ends its delivery from the former session: the records that session goes on opening are
/// neither decoded nor handed to the coordinator (before, each was decoded and hopped onto the
/// scheduler, then dropped by the generation check).
@Suite(.serialized, .timeLimit(.minutes(1))) struct ReCoordinationIOTests {
    /// A session's channel that counts the records it decodes and hands to the coordinator.
    final class CountingChannel: CoordinationChannel, @unchecked Sendable {
        let channel: SessionChannel<WatchTogether>
        let handed = Mutex(0)
        init(_ session: GroupSession<WatchTogether>) { channel = SessionChannel(session: session) }
        var count: Int { handed.withLock { $0 } }

        func propose(_ proposal: PlaybackProposal) throws { try channel.propose(proposal) }
        func publish(_ snapshot: CoordinationSnapshot) throws { try channel.publish(snapshot) }
        func deliverOrdered(while wanted: @escaping @Sendable () -> Bool, to receive: @escaping @Sendable (OrderedInput) -> Void) {
            channel.deliverOrdered(while: wanted) { input in
                if input != .endOfHistory { self.handed.withLock { $0 += 1 } }
                receive(input)
            }
        }
        var marksEndOfHistory: Bool { channel.marksEndOfHistory }
        var presentParticipants: Set<UUID>? { channel.presentParticipants }
        var localParticipant: UUID { channel.localParticipant }
        func deliverDepartures(while wanted: @escaping @Sendable () -> Bool, to depart: @escaping @Sendable (UUID) -> Void) {
            channel.deliverDepartures(while: wanted, to: depart)
        }
        var executor: (any CoordinatorExecutor)? { channel.executor }
        var clock: (any SessionClockSource)? { channel.clock }
        var localClock: any MonotonicDerivedClock { channel.localClock }
    }

    @Test func aCoordinatorCoordinatingAnewNoLongerReadsItsFormerSession() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let former = try await CoordinatingPlaybackArticleIOTests.joined("host", relay: relay, invitation: nil)
        let anaSession = try await CoordinatingPlaybackArticleIOTests.joined("ana", relay: relay, invitation: former.invitation)
        let next = try await CoordinatingPlaybackArticleIOTests.joined("host", relay: relay, invitation: nil)
        let log = CoordinatorBehaviourIOTests.CommandLog(item: "film")
        let coordinator = PlaybackCoordinator(delegate: log)
        let counted = CountingChannel(former)
        coordinator.coordinate(over: counted)
        let anaLog = CoordinatorBehaviourIOTests.CommandLog(item: "film")
        let ana = PlaybackCoordinator(delegate: anaLog)
        ana.coordinateWithSession(anaSession)
        try ana.transitionToItem(identifier: "film")
        #expect(await awaitTimeline(of: coordinator) { $0.item == "film" })
        let whileCurrent = counted.count
        #expect(whileCurrent >= 1, "Ana's records, decoded and handed over")

        coordinator.coordinateWithSession(next)
        // Ana's group goes on: five more records, then a chat line that marks the end of them on
        // the former session (it opens the records in order, on one thread).
        for second in 1...5 { ana.coordinateSeek(to: .zero + .seconds(Double(second))) }
        #expect(await awaitTimeline(of: ana) { $0.anchorMediaTime == .zero + .seconds(5) })
        var lines = former.chatMessages().makeAsyncIterator()
        try anaSession.sendChat("the last")
        while let line = await lines.next(), line.text != "the last" {}
        #expect(counted.count == whileCurrent, "records of the former session decoded after coordinating anew: \(counted.count - whileCurrent)")
        // The coordinator follows its new session only.
        #expect(coordinator.timeline.item == nil)
    }
}
