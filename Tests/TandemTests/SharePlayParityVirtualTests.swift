import Foundation
import Testing
import Tandem
import TandemNet
import TandemTestKit

/// What must be as SharePlay's, with whole participants in virtual time (`VirtualSessions`):
/// message routes by type and identifier, and activity changes that settle alike for everyone.
/// Deterministic, with no sleep and no poll. (`SharePlayParityIOTests` keeps what goes through
/// the activity center.)
@Suite struct SharePlayParityTests {
    @Test func typesOfTheSameNameNeverCollideAndIdentifiersRouteAcrossTypes() async throws {
        let sessions = VirtualSessions(activity: Quiz(topic: "rivers"))
        defer { sessions.shutdown() }
        let host = try sessions.join("host").session
        let guest = try sessions.join("ana").session
        sessions.run(for: 100)
        #expect(host.activeParticipants.count == 2)
        let receiving = GroupSessionMessenger(session: guest)
        let lefts = receiving.messages(of: Left.Ping.self)
        let rights = receiving.messages(of: Right.Ping.self)
        let salutations = receiving.messages(of: Salutation.self)
        sessions.run()
        let sending = GroupSessionMessenger(session: host)
        try await sending.send(Left.Ping(side: "left"))
        try await sending.send(Greeting(text: "hello"))
        try await sending.send(Right.Ping(side: "right"))
        sessions.run(for: 100)
        guest.leave()
        sessions.run(for: 100)
        #expect(await VirtualSessionTests.drained(lefts).map(\.0) == [Left.Ping(side: "left")])
        #expect(await VirtualSessionTests.drained(rights).map(\.0) == [Right.Ping(side: "right")])
        #expect(await VirtualSessionTests.drained(salutations).map(\.0.text) == ["hello"])
    }

    @Test func anActivityAssignedWhileJoinedReachesTheGroupAndLateJoiners() throws {
        let sessions = VirtualSessions(activity: Quiz(topic: "rivers"))
        defer { sessions.shutdown() }
        let host = try sessions.join("host").session
        let guest = try sessions.join("ana").session
        sessions.run(for: 100)
        host.activity = Quiz(topic: "lakes")
        #expect(host.activity.topic == "lakes")
        sessions.run(for: 100)
        #expect(guest.activity.topic == "lakes")
        guest.activity = Quiz(topic: "seas")
        sessions.run(for: 100)
        #expect(host.activity.topic == "seas")
        // A late joiner's history brings both changes.
        let late = try sessions.join("late", joining: false).session
        #expect(late.activity.topic == "seas")
    }

    @Test func concurrentActivityChangesSettleAlikeForEveryoneAndOwnChangesNeverFlipBack() async throws {
        let sessions = VirtualSessions(activity: Quiz(topic: "rivers"))
        defer { sessions.shutdown() }
        let host = try sessions.join("host").session
        let guest = try sessions.join("ana").session
        sessions.run(for: 100)
        #expect(host.activeParticipants.count == 2)
        let seen = host.$activity.values
        // The two change at once, as on two machines: the loop takes both sides' changes in
        // turns, a round at a time, before the relay has ordered any of them.
        for round in 0..<20 {
            host.activity = Quiz(topic: "host \(round)")
            guest.activity = Quiz(topic: "guest \(round)")
            if round % 5 == 4 { sessions.run(for: 1) }
        }
        host.activity = Quiz(topic: "host last")
        #expect(host.activity.topic == "host last")
        sessions.run(for: 500)
        // Everyone ends on the same activity: the last in the group's order.
        #expect(host.activity == guest.activity)
        #expect(["host last", "guest 19"].contains(guest.activity.topic))
        var shown: [String] = []
        host.leave()
        sessions.run()
        for await activity in seen { shown.append(activity.topic) }
        // Once the host showed its last change, nothing ordered before it was shown again.
        let last = try #require(shown.lastIndex(of: "host last"))
        #expect(shown[last...].allSatisfy { $0 == "host last" || $0 == "guest 19" })
        guest.leave()
    }
}
