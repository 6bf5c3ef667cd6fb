import Foundation
import Testing
import Tandem
import TandemNet
import TandemTestKit

/// The GroupActivities model with whole participants in virtual time: real `GroupSession`s over
/// a `VirtualRelayWorld` (`VirtualSessions` in TandemTestKit), the lifecycle, messages and their limits, each
/// deterministic, with no sleep and no poll. (`SessionIOTests` runs messages and the journal on
/// the in-memory relay's thread and on the real relay over loopback, for the wiring.)
@Suite struct VirtualSessionTests {
    /// Every message `messages` holds once its session is over (the sequence then ends).
    static func drained<Message: Decodable & Sendable>(_ messages: GroupSessionMessenger.Messages<Message>) async -> [(Message, Participant)] {
        var received: [(Message, Participant)] = []
        for await (message, context) in messages { received.append((message, context.source)) }
        return received
    }

    @Test func lifecycleJoinLeaveAndEnd() async throws {
        let sessions = VirtualSessions(activity: Quiz(topic: "rivers"))
        defer { sessions.shutdown() }
        let host = try sessions.join("host").session
        #expect(host.state.isJoined)
        // Accepted but not joined: waiting, and not active for the others.
        let ana = try sessions.join("ana", joining: false).session
        #expect(ana.state.isWaiting)
        sessions.run(for: 100)
        #expect(host.activeParticipants.map(\.displayName) == ["host"])
        ana.join(lifetimePolicy: .automatic)
        let ben = try sessions.join("ben").session
        sessions.run(for: 100)
        for session in [host, ana, ben] {
            #expect(Set(session.activeParticipants.map(\.displayName)) == ["host", "ana", "ben"],
                    "\(session.localParticipant) sees \(session.activeParticipants)")
        }
        // Ana leaves; the others go on without her.
        ana.leave()
        #expect(ana.state.isInvalidated(.left))
        sessions.run(for: 100)
        for session in [host, ben] {
            #expect(Set(session.activeParticipants.map(\.displayName)) == ["host", "ben"])
            #expect(session.state.isJoined)
        }
        // Ben ends it for everyone, with his name in the reason.
        var hostStates = host.$state.values.makeAsyncIterator()
        ben.end()
        sessions.run(for: 100)
        #expect(host.state.isInvalidated(.ended))
        if case .invalidated(let reason) = host.state {
            #expect(reason.detail.contains("ben"))
        }
        // The observer's sequence ends after the invalidation.
        var last: GroupSession<Quiz>.State?
        while let state = await hostStates.next() { last = state }
        #expect(last?.isInvalidated(.ended) == true)
    }

    @Test(arguments: [GroupSessionMessenger.DeliveryMode.reliable, .unreliable])
    func messagesReachAllOneOrASet(mode: GroupSessionMessenger.DeliveryMode) async throws {
        let sessions = VirtualSessions(activity: Quiz(topic: "rivers"))
        defer { sessions.shutdown() }
        let (host, ana, ben) = (try sessions.join("host").session, try sessions.join("ana").session, try sessions.join("ben").session)
        sessions.run(for: 100)
        #expect([host, ana, ben].allSatisfy { $0.activeParticipants.count == 3 })
        let messengers = [host, ana, ben].map { GroupSessionMessenger(session: $0, deliveryMode: mode) }
        let inboxes = messengers.map { $0.messages(of: Answer.self) }
        sessions.run()
        try await messengers[0].send(Answer(question: 1, text: "to all"))
        try await messengers[0].send(Answer(question: 2, text: "to ana"), to: .only(ana.localParticipant))
        try await messengers[1].send(Answer(question: 3, text: "to a set"), to: .only([host.localParticipant, ben.localParticipant]))
        sessions.run(for: 100)
        for session in [host, ana, ben] { session.leave() }
        sessions.run(for: 100)
        let received = [await Self.drained(inboxes[0]), await Self.drained(inboxes[1]), await Self.drained(inboxes[2])]
        #expect(received[1].map(\.0.text) == ["to all", "to ana"])
        #expect(received[1].allSatisfy { $0.1 == host.localParticipant })
        #expect(Set(received[2].map(\.0.text)) == ["to all", "to a set"])
        #expect(received[2].count == 2)
        #expect(received[0].map(\.0.text) == ["to a set"])
        #expect(received[0].first?.1.displayName == "ana")
    }

    @Test func reliableMessagesArriveInOrderWithoutLoss() async throws {
        let sessions = VirtualSessions(activity: Quiz(topic: "rivers"))
        defer { sessions.shutdown() }
        let host = try sessions.join("host").session
        let ana = try sessions.join("ana").session
        sessions.run(for: 100)
        #expect(host.activeParticipants.count == 2)
        let inbox = GroupSessionMessenger(session: ana).messages(of: Answer.self)
        let messenger = GroupSessionMessenger(session: host)
        sessions.run()
        for question in 0..<500 {
            try await messenger.send(Answer(question: question, text: String(repeating: "x", count: question)))
            // The loop takes what was sent as a running loop would, so that the link's queue
            // stays within its bounds.
            if question % 50 == 49 { sessions.run() }
        }
        sessions.run(for: 1_000)
        ana.leave()
        sessions.run(for: 100)
        let received = await Self.drained(inbox)
        #expect(received.map(\.0.question) == Array(0..<500))
    }

    @Test func oversizedMessagesAreRefusedBeforeSending() async throws {
        let sessions = VirtualSessions(activity: Quiz(topic: "rivers"))
        defer { sessions.shutdown() }
        let host = try sessions.join("host").session
        let ana = try sessions.join("ana").session
        sessions.run(for: 100)
        let inbox = GroupSessionMessenger(session: ana).messages(of: Answer.self)
        let messenger = GroupSessionMessenger(session: host)
        sessions.run()
        let huge = Answer(question: 0, text: String(repeating: "y", count: 256 * 1024))
        let refusal = await #expect(throws: GroupSessionError.self) { try await messenger.send(huge) }
        #expect(refusal?.code == .tooLarge)
        #expect(refusal?.detail.contains("262144") == true)
        // Just under the limit goes through, and the session still works.
        let big = Answer(question: 1, text: String(repeating: "z", count: 250 * 1024))
        try await messenger.send(big)
        sessions.run(for: 100)
        ana.leave()
        sessions.run(for: 100)
        let received = await Self.drained(inbox)
        #expect(received.map(\.0) == [big])
    }
}
