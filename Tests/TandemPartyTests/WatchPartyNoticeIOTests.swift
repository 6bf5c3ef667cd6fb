import Foundation
import Testing
import Tandem
import TandemParty
import TandemTestKit

/// Notices in a real party (a relay on loopback, the built-in player on a sample clip, two
/// participants): what a participant's program shows with `GroupSession.showNotice(_:)` reaches
/// that participant's own events, as the terminal and mpv's screen show them, and nobody else's.
@Suite(.serialized) struct WatchPartyNoticeIOTests {
    @Test func aNoticeShownByAProgramIsItsOwnParticipantsEventAndIsNotForwarded() async throws {
        let relay = try TestRelay(.network)
        defer { relay.shutdown() }
        let host = try await WatchPartyIOTests.participant("host", relay: relay, invitation: nil)
        let ana = try await WatchPartyIOTests.participant("ana", relay: relay, invitation: host.party.session.invitation)
        #expect(await host.recorder.first { if case .participantJoined(let who) = $0, who.name == "ana" { true } else { nil } } == true)
        #expect(await awaitValue(ana.party.session.$activeParticipants.values) { $0.contains { $0.displayName == "host" } })
        let hostParticipant = try #require(ana.party.session.activeParticipants.first { $0.displayName == "host" })

        // Ana's program tells her the host queued a song, then that she played.
        ana.party.session.showNotice(GroupSessionEvent(originator: hostParticipant, action: .updatedQueue(.added(.song("Here comes the sun"))),
                                                       url: nil))
        ana.party.session.showNotice(.play)
        let queued = await ana.recorder.first { if case .notice(let notice) = $0, notice.by == "host" { notice } else { nil } }
        #expect(queued?.action == "added Here comes the sun to the queue" && queued?.participant == hostParticipant.id.uuidString,
                "\(String(describing: queued))")
        let own = await ana.recorder.first { if case .notice(let notice) = $0, notice.by == "ana" { notice } else { nil } }
        #expect(own?.action == "played", "\(String(describing: own))")
        #expect(queued.map { EventSentence.sentence(for: .notice($0)) } == "host added Here comes the sun to the queue")

        // Something Ana sends after them reaches the host; the notices never do.
        try ana.party.say("after the notices")
        #expect(await host.recorder.first { if case .chat(let chat) = $0, chat.text == "after the notices" { true } else { nil } } == true)
        #expect(!host.recorder.events.contains { if case .notice = $0 { true } else { false } })

        host.party.end()
        #expect(try await WatchPartyIOTests.ending(of: host) != nil)
        #expect(try await WatchPartyIOTests.ending(of: ana) != nil)
    }
}
