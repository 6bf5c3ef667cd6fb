import Foundation
import Testing
import Tandem
import TandemClock
@testable import TandemPlayback
@testable import TandemParty

/// Notices (`GroupSession.showNotice(_:)`) and the hold limits' releases as people read them: who
/// did what in words, the same sentence on the terminal and mpv's screen, and the JSON kinds.
@Suite struct NoticeWordingTests {
    static let ben = UUID()

    @Test func aNoticeReadsAsItsOriginatorsNameAndTheActionInWords() throws {
        let originator = Participant(id: Self.ben, displayName: "Ben")
        let queued = GroupSessionEvent(originator: originator, action: .updatedQueue(.added(.song("Here comes the sun"))), url: nil)
        let notice = WatchPartyEvent.Notice(queued, name: "Ben")
        #expect(notice.participant == Self.ben.uuidString && notice.url == nil)
        #expect(EventSentence.sentence(for: .notice(notice)) == "Ben added Here comes the sun to the queue")
        let played = WatchPartyEvent.Notice(GroupSessionEvent(originator: originator, action: .play, url: URL(string: "https://example.com/film")),
                                            name: "Ben [ab12]")
        #expect(EventSentence.sentence(for: .notice(played)) == "Ben [ab12] played")
        #expect(played.url == "https://example.com/film")
        let setUpNext = WatchPartyEvent.Notice(GroupSessionEvent(originator: originator, action: .updatedQueue(.setUpNext(.song("Let it be"))), url: nil),
                                               name: "Ben")
        #expect(EventSentence.sentence(for: .notice(setUpNext)) == "Ben set up next Let it be")
    }

    @Test func aNoticeIsWhoDidWhatLastOnTheStatusLine() {
        var narrator = PartyNarrator(catchesUp: false)
        _ = narrator.take(.joined(.init(session: "s", participant: "Ana", item: "film")), at: LocalInstant(nanoseconds: 0))
        let notice = WatchPartyEvent.notice(.init(by: "Ana", participant: UUID().uuidString, action: "paused"))
        #expect(narrator.take(notice, at: LocalInstant(nanoseconds: 1_000_000)) == ["Ana paused"])
        #expect(narrator.lastAction == "Ana paused")
    }

    @Test func aNoticeAndAnExpiredHoldAreJSONEventsOfTheirOwnKinds() throws {
        let notice = WatchPartyEvent.notice(.init(by: "Ana", participant: UUID().uuidString, action: "played"))
        let noticeLine = try #require(notice.jsonLine)
        #expect(noticeLine.contains("\"event\":\"notice\"") && noticeLine.contains("\"by\":\"Ana\"") && noticeLine.contains("\"action\":\"played\""))
        #expect(WatchPartyEvent(line: noticeLine) == notice)

        let timeline = SharedTimeline(item: "film", rate: 1, anchorMediaTime: ItemTime(nanoseconds: 64_000_000_000),
                                      anchorSessionTime: SessionInstant(nanoseconds: 20_000_000_000), version: 7)
        let suspension = CoordinationCore.Suspension(id: UUID(), participant: Self.ben, reason: .stallRecovery, holdsGroup: false,
                                                     began: SessionInstant(nanoseconds: 5_000_000_000))
        let expired = WatchPartyEvent(.holdExpired(timeline, suspension: suspension, limit: .seconds(15), stillWaiting: false)) { _ in "Ben" }
        let line = try #require(expired.jsonLine)
        #expect(line.contains("\"event\":\"hold-expired\"") && line.contains("\"participant\":\"Ben\"") && line.contains("\"still_waiting\":false"))
        #expect(WatchPartyEvent(line: line) == expired)
        #expect(EventSentence.sentence(for: expired) == "stopped waiting for Ben (catching up) after 15 s: playing on from 1:04")

        let stillWaiting = WatchPartyEvent(.holdExpired(timeline.paused, suspension: suspension, limit: .seconds(15), stillWaiting: true)) { _ in "Ben" }
        #expect(EventSentence.sentence(for: stillWaiting) == "stopped waiting for Ben (catching up) after 15 s: still waiting for others")
        let paused = WatchPartyEvent(.holdExpired(timeline.paused, suspension: suspension, limit: .seconds(15), stillWaiting: false)) { _ in "Ben" }
        #expect(EventSentence.sentence(for: paused) == "stopped waiting for Ben (catching up) after 15 s")
    }
}

extension SharedTimeline {
    fileprivate var paused: SharedTimeline {
        var paused = self
        paused.rate = 0
        return paused
    }
}
