import Foundation
import Synchronization
@testable import Tandem
import TandemNet
import TandemTestKit
import TandemHarness
import TandemWire
import Testing

/// What a malicious relay can no longer do: the real relay runs as `tandem serve` in its own
/// process, and a hostile proxy in front of it replays, re-routes and re-attributes sealed
/// bodies. Each is dropped on arrival, counted by reason and reported; nothing is delivered.
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
        #expect(await eventually(30) { session.state.isJoined })
        return session
    }

    @Test func replayedReroutedAndReattributedBodiesAreDroppedAndCounted() async throws {
        let serve = try ServeProcess()
        defer { serve.stop() }
        let proxy = try HostileRelayProxy(targetPort: serve.port)
        defer { proxy.stop() }

        let host = center("ana", port: proxy.port)
        var hosted = host.sessions(for: Quiz.self).makeAsyncIterator()
        #expect(try await host.start(Quiz(topic: "trust")))
        let ana = try #require(await hosted.next())
        ana.join()
        #expect(await eventually(30) { ana.state.isJoined })
        let ben = try await join("ben", ana.invitation, port: proxy.port)
        let carl = try await join("carl", ana.invitation, port: proxy.port)
        for session in [ana, ben, carl] {
            #expect(await eventually(30) { session.activeParticipants.count == 3 }, "\(session.localParticipant) sees \(session.activeParticipants)")
        }
        let anaID = ana.localParticipant.id
        let benInbox = Inbox(GroupSessionMessenger(session: ben), Answer.self)
        let carlInbox = Inbox(GroupSessionMessenger(session: carl), Answer.self)
        let rejections = Mutex<[Rejection]>([])
        let watcher = Task { for await rejection in ben.rejections { rejections.withLock { $0.append(rejection) } } }
        defer { watcher.cancel() }
        let ordered = Mutex<[OrderedPlaintext]>([])
        let orderedReader = Task { for await delivery in ben.orderedDeliveries() { ordered.withLock { $0.append(delivery) } } }
        defer { orderedReader.cancel() }

        /// The body of the first delivery from `sender` that `participant` received after `skip` frames.
        func captured(by participant: String, from sender: UUID) async -> [UInt8]? {
            var body: [UInt8]?
            _ = await eventually {
                body = proxy.received.lazy.filter { $0.participant == participant }.compactMap { received -> [UInt8]? in
                    if case let .delivery(_, from, _, bytes) = received.frame, from == sender { bytes } else { nil }
                }.last
                return body != nil
            }
            return body
        }

        // Re-routed: a message Ana meant for Carl alone, delivered to Ben too.
        try await GroupSessionMessenger(session: ana).send(Answer(question: 1, text: "for carl"), to: .only(carl.localParticipant))
        #expect(await eventually { carlInbox.received.count == 1 })
        let forCarl = try #require(await captured(by: "carl", from: anaID))
        proxy.inject(to: "ben") { .delivery(sequence: $0, sender: anaID, reliable: true, body: forCarl) }
        #expect(await eventually { ben.rejectionCounts[.notRecipient] == 1 })

        // Replayed and re-attributed: a message to everyone, delivered to Ben again, and again under Carl's name.
        try await GroupSessionMessenger(session: ana).send(Answer(question: 2, text: "for all"))
        #expect(await eventually { benInbox.received.count == 1 })
        let forAll = try #require(await captured(by: "ben", from: anaID))
        proxy.inject(to: "ben") { .delivery(sequence: $0, sender: anaID, reliable: true, body: forAll) }
        #expect(await eventually { ben.rejectionCounts[.replayed] == 1 })
        let carlID = carl.localParticipant.id
        proxy.inject(to: "ben") { .delivery(sequence: $0, sender: carlID, reliable: true, body: forAll) }
        #expect(await eventually { ben.rejectionCounts[.wrongSender] == 1 })
        // An unreliable path is another path: the reliable body does not pass there either.
        proxy.inject(to: "ben") { .delivery(sequence: $0, sender: anaID, reliable: false, body: forAll) }
        #expect(await eventually { ben.rejectionCounts[.wrongKind] == 1 })

        // An ordered proposal replayed with a fresh order number, and one re-attributed to Carl.
        try ana.sendOrdered(Array("seek 0".utf8))
        #expect(await eventually { ordered.withLock { $0.count } == 1 })
        let entry = try #require(proxy.received.lazy.filter { $0.participant == "ben" }.compactMap { received -> RelayOrderedEntry? in
            if case let .ordered(_, entry) = received.frame { entry } else { nil }
        }.first)
        proxy.inject(to: "ben") { .ordered(sequence: $0, entry: RelayOrderedEntry(
            sender: entry.sender, order: entry.order + 1, orderedAt: entry.orderedAt + 1, effectiveAt: entry.effectiveAt + 1, body: entry.body)) }
        #expect(await eventually { ben.rejectionCounts[.replayed] == 2 })
        proxy.inject(to: "ben") { .ordered(sequence: $0, entry: RelayOrderedEntry(
            sender: carlID, order: entry.order + 2, orderedAt: entry.orderedAt + 2, effectiveAt: entry.effectiveAt + 2, body: entry.body)) }
        #expect(await eventually { ben.rejectionCounts[.wrongSender] == 2 })

        // Nothing forged was delivered; what was honest was, once, under its signer's name.
        let delivered = ordered.withLock { $0 }
        #expect(delivered.count == 1 && delivered.first?.sender == anaID && delivered.first?.body == Array("seek 0".utf8))
        #expect(benInbox.received.map(\.0.text) == ["for all"])
        #expect(benInbox.received.allSatisfy { $0.1.id == anaID })
        #expect(await eventually { carlInbox.received.map(\.0.text) == ["for carl", "for all"] })
        #expect(await eventually { rejections.withLock { $0.count } == 6 })
        #expect(rejections.withLock { $0.map(\.reason) } == [.notRecipient, .replayed, .wrongSender, .wrongKind, .replayed, .wrongSender])
        #expect(rejections.withLock { $0.map(\.sender) } == [anaID, anaID, carlID, anaID, anaID, carlID])
        // Ben's link took every forged frame as the relay's: he is still joined, and so is everyone.
        for session in [ana, ben, carl] { #expect(session.state.isJoined) }
        try await GroupSessionMessenger(session: carl).send(Answer(question: 3, text: "still here"), to: .only(ben.localParticipant))
        #expect(await eventually { benInbox.received.count == 2 })
        for session in [ana, ben, carl] { session.leave() }
        #expect(serve.isRunning)
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
        #expect(await eventually(30) { ana.state.isJoined })
        let ben = try await join("ben", ana.invitation, port: proxy.port)
        #expect(await eventually(30) { ben.activeParticipants.count == 2 })
        let rejections = Mutex<[Rejection]>([])
        let watcher = Task { for await rejection in ben.rejections { rejections.withLock { $0.append(rejection) } } }
        defer { watcher.cancel() }
        let ordered = Mutex<[OrderedPlaintext]>([])
        let orderedReader = Task { for await delivery in ben.orderedDeliveries() { ordered.withLock { $0.append(delivery) } } }
        defer { orderedReader.cancel() }

        try ana.sendOrdered(Array("chat".utf8))
        try ana.sendOrdered(Array("play".utf8), retention: .playback)
        try ana.sendOrdered(Array("state".utf8), retention: .snapshot(reflecting: 2))
        #expect(await eventually { ordered.withLock { $0.count } == 3 })
        #expect(ordered.withLock { $0.map(\.retention) } == [.kept, .playback, .snapshot(reflecting: 2)])
        #expect(ordered.withLock { $0.map(\.order) } == [1, 2, 3])
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
        #expect(await eventually { ben.rejectionCounts[.wrongRetention] == 4 })
        // Labelled as signed, the same body is a replay: the retention check came first.
        let honest = relabelled(entries[1], order: 8, .playback)
        proxy.inject(to: "ben") { .ordered(sequence: $0, entry: honest) }
        #expect(await eventually { ben.rejectionCounts[.replayed] == 1 })
        #expect(rejections.withLock { $0.map(\.reason) } == [.wrongRetention, .wrongRetention, .wrongRetention, .wrongRetention, .replayed])
        #expect(rejections.withLock { $0.allSatisfy { $0.path == "ordered" && $0.sender == ana.localParticipant.id } })
        #expect(ordered.withLock { $0.count } == 3, "nothing relabelled was delivered")

        // A late joiner: the relay dropped the playback record the snapshot covers.
        let carl = try await join("carl", ana.invitation, port: proxy.port)
        let late = Mutex<[OrderedPlaintext]>([])
        let lateReader = Task { for await delivery in carl.orderedDeliveries() { late.withLock { $0.append(delivery) } } }
        defer { lateReader.cancel() }
        #expect(await eventually { late.withLock { $0.count } == 2 })
        #expect(late.withLock { $0.map(\.order) } == [1, 3])
        #expect(late.withLock { $0.map(\.retention) } == [.kept, .snapshot(reflecting: 2)])
        #expect(late.withLock { $0.map(\.body) } == [Array("chat".utf8), Array("state".utf8)])
        #expect(carl.rejectionCounts.isEmpty)
        for session in [ana, ben, carl] { #expect(session.state.isJoined) }
        for session in [ana, ben, carl] { session.leave() }
        #expect(serve.isRunning)
    }
}
