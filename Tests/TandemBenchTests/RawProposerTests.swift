import Foundation
import Testing
import Tandem
import TandemClock
import TandemPlayback
import TandemTestKit
import TandemWire
@testable import TandemBench

/// The `long-session` raw client against a real relay on loopback: it joins with the host's
/// invite, and every one of its proposals reaches the host, ordered, as an item report kept as a
/// playback record. Bounded in count and time.
@Suite(.serialized) struct RawProposerIOTests {
    /// Runs the blocking proposer on a thread of its own, not on the tasks' pool it waits for.
    static func run(_ proposer: RawProposer, invite: String) async throws -> RawProposer.Outcome {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try proposer.run(invite: invite) }) }.start()
        }
    }

    @Test func everyProposalReachesTheHostOrderedAsAPlaybackRecord() async throws {
        let relay = try TestRelay(.network)
        defer { relay.shutdown() }
        let center = ActivityCenter()
        center.displayName = "host"
        center.configure(relay: relay.connector, host: relay.host, port: relay.port, sessionClock: .derived(from: SystemClock()))
        var sessions = center.sessions(for: WatchTogether.self).makeAsyncIterator()
        _ = try await center.start(WatchTogether(item: "clip.mp4"))
        let host = try #require(await sessions.next())
        host.join()
        for await state in host.$state.values { if case .joined = state { break } }
        defer { host.end() }
        let deliveries = host.orderedDeliveries()

        let count = 300
        let outcome = try await Self.run(RawProposer(count: count, rate: 5_000, batch: 50, timeout: 30),
                                         invite: host.invitation.url.absoluteString)
        #expect(outcome.sent == count)
        #expect(outcome.echoed == count)

        // The host receives them all, in order, each an item report of the raw client's, kept as playback.
        var received: [Ordered<[UInt8]>] = []
        var iterator = deliveries.makeAsyncIterator()
        while received.count < count, let delivery = await iterator.next() {
            if delivery.sender != host.localParticipant.id { received.append(delivery) }
        }
        #expect(received.count == count)
        #expect(received.allSatisfy { $0.retention == .playback }, "retentions: \(received.map(\.retention.description)), senders: \(Set(received.map(\.sender)).count)")
        #expect(zip(received, received.dropFirst()).allSatisfy { $0.order < $1.order })
        let proposal = try JSONDecoder().decode(PlaybackProposal.self, from: Data(try #require(received.first).body))
        #expect(proposal == .state(item: "clip.mp4", identity: nil, ready: true))
    }

    @Test func aBadInviteIsAClearError() {
        let error = #expect(throws: BenchmarkError.self) { try RawProposer(count: 1).run(invite: "not an invite") }
        #expect("\(String(describing: error))".contains("invite"))
    }
}
