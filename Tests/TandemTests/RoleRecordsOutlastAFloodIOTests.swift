import Foundation
import Tandem
import TandemNet
import TandemTestKit
import Testing

/// The role records a session's operators make reach the relay with their makers' statements, on
/// the in-memory and the real relay alike, and the relay keeps them apart from the history's
/// caps: a guest who floods the history past its caps does not push them out, and a late joiner
/// holds the roles everyone else holds.
@Suite(.timeLimit(.minutes(1))) struct RoleRecordsOutlastAFloodIOTests {
    struct Slides: GroupActivity {
        var deck: String
    }

    /// `name`'s session, joined with `invitation` (a new one when nil), once it sees `count` participants.
    private func joined(_ name: String, _ relay: TestRelay, invitation: Invitation?, count: Int) async throws -> GroupSession<Slides> {
        let center = ActivityCenter()
        center.displayName = name
        center.configure(relay: relay.connector, host: relay.host, port: relay.port)
        var sessions = center.sessions(for: Slides.self).makeAsyncIterator()
        if let invitation { try await center.accept(invitation) } else { _ = try await center.start(Slides(deck: "q3")) }
        let session = try #require(await sessions.next())
        session.join()
        #expect(await awaitValue(session.$activeParticipants.values, within: 20) { $0.count == count }, "\(name) sees \(count)")
        return session
    }

    @Test(arguments: TransportKind.allCases)
    func aLateJoinerHoldsTheRolesAfterAGuestFloodedTheHistory(_ kind: TransportKind) async throws {
        var configuration = RelayCoreConfiguration()
        configuration.maximumOrderedHistory = 16
        let relay = try TestRelay(kind, configuration: configuration)
        defer { relay.shutdown() }
        let host = try await joined("host", relay, invitation: nil, count: 1)
        let ana = try await joined("ana", relay, invitation: host.invitation, count: 2)
        let ben = try await joined("ben", relay, invitation: host.invitation, count: 3)
        let anaID = ana.localParticipant.id
        try host.makeOperator(ana.localParticipant)
        try host.setPolicy(SessionPolicy(playback: .operators, ending: .operators))
        #expect(await awaitValue(ben.$roles.values, within: 20) { $0.isOperator(anaID) && $0.policy.playback == .operators })
        let expected = ben.roles

        // Ben floods the history with chat, four times its caps; the last line is the marker.
        let lines = ben.chatMessages()
        for index in 0..<64 { try ben.sendChat("line \(index)") }
        #expect(await awaitValue(lines, within: 20) { $0.text == "line 63" })

        let dan = try await joined("dan", relay, invitation: host.invitation, count: 4)
        #expect(await awaitValue(dan.$roles.values, within: 20) { $0 == expected }, "dan holds \(dan.roles), the others \(expected)")
    }
}
