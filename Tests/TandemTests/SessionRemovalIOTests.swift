import Foundation
import Synchronization
import Tandem
import TandemNet
import TandemTestKit
import Testing

/// Removing someone through a real relay on loopback: the creator's kick ends the removed
/// participant's session with the reason, the relay drops it and admits by the new epoch's
/// verifier alone, so that the invite of before stops admitting while the new one admits a late
/// joiner that reads the chat from before and after the kick.
@Suite(.timeLimit(.minutes(1))) struct SessionRemovalIOTests {
    struct Slides: GroupActivity {
        var deck: String
    }

    private func center(_ name: String, port: UInt16) -> ActivityCenter {
        let center = ActivityCenter()
        center.displayName = name
        center.configure(relay: NetworkRelayConnector(host: "127.0.0.1", port: port), host: "127.0.0.1", port: port)
        return center
    }

    /// `name`'s session, joined with `invitation` (a new one when nil), once it sees `count` participants.
    private func joined(_ name: String, port: UInt16, invitation: Invitation?, count: Int) async throws -> GroupSession<Slides> {
        let center = center(name, port: port)
        var sessions = center.sessions(for: Slides.self).makeAsyncIterator()
        if let invitation { try await center.accept(invitation) } else { _ = try await center.start(Slides(deck: "q3")) }
        let session = try #require(await sessions.next())
        session.join()
        #expect(await awaitValue(session.$activeParticipants.values, within: 20) { $0.count == count }, "\(name) sees \(count)")
        return session
    }

    @Test func aKickEndsTheRemovedSessionAndTheOldInviteStopsAdmitting() async throws {
        let relay = try TestRelay(.network)
        defer { relay.shutdown() }
        let host = try await joined("host", port: relay.port, invitation: nil, count: 1)
        let ana = try await joined("ana", port: relay.port, invitation: host.invitation, count: 2)
        let ben = try await joined("ben", port: relay.port, invitation: host.invitation, count: 3)
        #expect(await awaitValue(host.$activeParticipants.values, within: 20) { $0.count == 3 })
        try host.sendChat("before")

        // A guest may not remove anyone: refused before anything is sent.
        #expect(throws: GroupSessionError.self) { try ana.remove(ben.localParticipant) }

        try host.remove(ben.localParticipant)
        #expect(await awaitValue(ben.$state.values, within: 20) { state in
            if case .invalidated(let reason) = state { reason.code == .removed } else { false }
        }, "ben's session: \(ben.state)")
        #expect("\(ben.state)".contains("removed by host"))
        let benID = ben.localParticipant.id
        #expect(await awaitValue(ana.$roles.values, within: 20) { $0.isRemoved(benID) && $0.epoch == 1 })
        #expect(await awaitValue(ana.$activeParticipants.values, within: 20) { $0.count == 2 })
        let invite = host.currentInvitation
        #expect(invite.epoch == 1)
        #expect(invite.secret != host.invitation.secret)
        try ana.sendChat("after")

        // The invite of before no longer admits: the relay checks the new epoch's verifier.
        let outsider = center("eve", port: relay.port)
        await #expect(throws: (any Error).self) { try await outsider.accept(host.invitation) }

        // The new one does, and its holder reads the chat of both epochs.
        let dan = try await joined("dan", port: relay.port, invitation: invite, count: 3)
        let lines = StreamRecording(dan.chatMessages())
        defer { lines.stop() }
        #expect(await lines.awaitCount(2))
        #expect(lines.elements.map(\.text) == ["before", "after"])
        #expect(dan.roles.isRemoved(benID))
        // Those still here carry on: Dan's line reaches the host.
        #expect({ if case .joined = host.state { true } else { false } }())
        #expect({ if case .joined = ana.state { true } else { false } }())
    }
}
