import Foundation
import Synchronization
@testable import Tandem
import TandemNet
import TandemTestKit
import TandemHarness
import TandemWire
import Testing

/// What a malicious relay can no longer do, through the whole stack: the real relay runs as
/// `tandem serve` in its own process, and a hostile proxy in front of it relabels and replays
/// sealed records. Each is dropped on arrival, counted by reason and reported; nothing is
/// delivered, and every participant stays joined. The session machine's decisions about
/// replayed, re-routed and re-attributed bodies are `HostileRelayMachineTests`, in virtual time.
@Suite struct HostileRelayProcessTests {
    func center(_ name: String, port: UInt16) -> ActivityCenter {
        let center = ActivityCenter()
        center.displayName = name
        center.configure(relay: NetworkRelayConnector(host: "127.0.0.1", port: port), host: "127.0.0.1", port: port)
        return center
    }

    func join(_ name: String, _ invitation: Invitation, port: UInt16) async throws -> GroupSession<Quiz> {
        let center = center(name, port: port)
        var sessions = center.sessions(for: Quiz.self).makeAsyncIterator()
        try await center.accept(invitation)
        let session = try #require(await sessions.next())
        session.join()
        #expect(await awaitValue(session.$state.values, within: 30) { $0.isJoined })
        return session
    }

    /// The retention in the relay's header is signed inside the body: a relay that relabels a
    /// kept record as droppable, a playback record as a snapshot, or moves a snapshot's
    /// reflected order is caught by every receiver, counted and reported, before the replay
    /// window; a late joiner gets what the real relay kept (the kept record and the snapshot).
    @Test func relabelledRetentionIsRejectedAndCounted() async throws {
        let serve = try ServeProcess()
        defer { serve.stop() }
        let proxy = try HostileRelayProxy(targetPort: serve.port)
        defer { proxy.stop() }

        let host = center("ana", port: proxy.port)
        var hosted = host.sessions(for: Quiz.self).makeAsyncIterator()
        #expect(try await host.start(Quiz(topic: "retention")))
        let ana = try #require(await hosted.next())
        ana.join()
        #expect(await awaitValue(ana.$state.values, within: 30) { $0.isJoined })
        let ben = try await join("ben", ana.invitation, port: proxy.port)
        #expect(await awaitValue(ben.$activeParticipants.values, within: 30) { $0.count == 2 })
        let rejections = StreamRecording(ben.rejections)
        defer { rejections.stop() }
        let ordered = StreamRecording(ben.orderedDeliveries())
        defer { ordered.stop() }

        try ana.sendOrdered(Array("chat".utf8))
        try ana.sendOrdered(Array("play".utf8), retention: .playback)
        try ana.sendOrdered(Array("state".utf8), retention: .snapshot(reflecting: 2))
        #expect(await ordered.awaitCount(3))
        #expect(ordered.elements.map(\.retention) == [.kept, .playback, .snapshot(reflecting: 2)])
        #expect(ordered.elements.map(\.order) == [1, 2, 3])
        let entries = proxy.received.filter { $0.participant == "ben" }.compactMap { received -> RelayOrderedEntry? in
            if case let .ordered(_, entry) = received.frame { entry } else { nil }
        }
        try #require(entries.count == 3)
        func relabelled(_ entry: RelayOrderedEntry, order: UInt64, _ retention: OrderedRetention) -> RelayOrderedEntry {
            RelayOrderedEntry(sender: entry.sender, order: order, orderedAt: entry.orderedAt, effectiveAt: entry.effectiveAt,
                              retention: retention, body: entry.body)
        }
        let forged = [relabelled(entries[0], order: 4, .playback), relabelled(entries[1], order: 5, .snapshot(reflecting: 1)),
                      relabelled(entries[2], order: 6, .snapshot(reflecting: 1)), relabelled(entries[2], order: 7, .kept)]
        for entry in forged { proxy.inject(to: "ben") { .ordered(sequence: $0, entry: entry) } }
        #expect(await rejections.awaitCount(4))
        // Labelled as signed, the same body is a replay: the retention check came first.
        let honest = relabelled(entries[1], order: 8, .playback)
        proxy.inject(to: "ben") { .ordered(sequence: $0, entry: honest) }
        #expect(await rejections.awaitCount(5))
        // Ben's session counts each rejection after telling its readers; the replay, handled
        // after the forgeries, proves their count published.
        #expect(ben.rejectionCounts[.wrongRetention] == 4)
        #expect(rejections.elements.map(\.reason) == [.wrongRetention, .wrongRetention, .wrongRetention, .wrongRetention, .replayed])
        #expect(rejections.elements.allSatisfy { $0.path == "ordered" && $0.sender == ana.localParticipant.id })
        #expect(ordered.elements.count == 3, "nothing relabelled was delivered")

        // A late joiner: the relay dropped the playback record the snapshot covers.
        let carl = try await join("carl", ana.invitation, port: proxy.port)
        let late = StreamRecording(carl.orderedDeliveries())
        defer { late.stop() }
        #expect(await late.awaitCount(2))
        #expect(late.elements.map(\.order) == [1, 3])
        #expect(late.elements.map(\.retention) == [.kept, .snapshot(reflecting: 2)])
        #expect(late.elements.map(\.body) == [Array("chat".utf8), Array("state".utf8)])
        // Carl's arrival, which Ben's session hears after the replay, proves the replay counted.
        #expect(await awaitValue(ben.$activeParticipants.values) { $0.count == 3 })
        #expect(ben.rejectionCounts[.replayed] == 1)
        #expect(carl.rejectionCounts.isEmpty)
        for session in [ana, ben, carl] { #expect(session.state.isJoined) }
        for session in [ana, ben, carl] { session.leave() }
        #expect(serve.isRunning)
    }
}
