import Foundation
import Testing
import TandemClock
import TandemPlayback
@testable import TandemParty

/// Events as people read them (`EventSentence`), and the narrator that credits each change to
/// its proposer and sums a late joiner's history up in one line (`PartyNarrator`), on virtual time.
@Suite struct PartyNarratorTests {
    static let ana = UUID()
    static let ben = UUID()

    static func name(_ id: UUID) -> String { id == ana ? "Ana" : id == ben ? "Ben" : "Cy" }

    static func timeline(version: UInt64, rate: Double, at seconds: Double) -> SharedTimeline {
        SharedTimeline(item: "film.mp4", rate: rate, anchorMediaTime: ItemTime(nanoseconds: Int64(seconds * 1e9)),
                       anchorSessionTime: SessionInstant(nanoseconds: Int64(version) * 1_000_000_000), version: version)
    }

    /// A timeline event as the party reports the coordinator's, through its own wording.
    static func changed(_ version: UInt64, rate: Double, at seconds: Double, by originator: UUID, _ proposal: PlaybackProposal) -> WatchPartyEvent {
        WatchPartyEvent(.timelineChanged(timeline(version: version, rate: rate, at: seconds), originator: originator, proposal: proposal),
                        naming: name)
    }

    static func at(_ milliseconds: Int64) -> LocalInstant { LocalInstant(nanoseconds: milliseconds * 1_000_000) }

    @Test("each change reads as a sentence naming who made it", arguments: [
        (PlaybackProposal.pause(at: nil), 0.0, 723.4, 1.0, "Ana paused at 12:03"),
        (.seek(to: ItemTime(nanoseconds: 3_723_000_000_000)), 1.0, 3723.0, 1.0, "Ana seeked to 1:02:03"),
        (.setRate(1.5), 1.5, 10, 1.0, "Ana set the rate to 1.5×"),
        (.setRate(1.5), 1.5, 10, 0.0, "Ana played from 0:10 at 1.5×"),
        (.setRate(1), 1.0, 65, 0.0, "Ana played from 1:05"),
        (.setRate(1), 1.0, 65, 2.0, "Ana set the rate to 1×"),
        (.setRate(0.25), 0.25, 65, 1.0, "Ana set the rate to 0.25×"),
        (.setRateImmediately(1), 1.0, 5, 0.0, "Ana played from 0:05"),
        (.transition(item: "extras.mkv", at: .zero), 0.0, 0, 1.0, "Ana switched to extras.mkv"),
        (.queue(.next), 0.0, 0, 1.0, "Ana moved to the next item"),
    ] as [(PlaybackProposal, Double, Double, Double, String)])
    func changes(proposal: PlaybackProposal, rate: Double, seconds: Double, before: Double, sentence: String) {
        var narrator = PartyNarrator()
        _ = narrator.take(Self.changed(3, rate: before, at: 0, by: Self.ben, .setRate(before)), at: Self.at(0))
        let lines = narrator.take(Self.changed(4, rate: rate, at: seconds, by: Self.ana, proposal), at: Self.at(10))
        #expect(lines == [sentence])
        #expect(narrator.lastAction == sentence)
    }

    @Test func otherEventsReadAsSentencesAndTheTechnicalOnesSayNothing() {
        typealias E = WatchPartyEvent
        let timeline = E.Timeline(version: 7, rate: 1, mediaTime: 83, effectiveSessionNanoseconds: 2_463_433_178_511_374, item: "film.mp4")
        #expect(EventSentence.sentence(for: .participantJoined(.init(name: "Ben"))) == "Ben joined")
        #expect(EventSentence.sentence(for: .participantLeft(.init(name: "Ben"))) == "Ben left")
        #expect(EventSentence.sentence(for: .waiting(timeline, .init(waitingFor: ["Cy: stallRecovery", "Ben: custom"])))
                == "waiting for Cy (catching up) and Ben (custom)")
        #expect(EventSentence.sentence(for: .resumed(timeline, .init(by: "Cy"))) == "Cy is ready: playing on from 1:23")
        #expect(EventSentence.sentence(for: .streaming(.init(item: "film.mp4", identity: "x", holders: ["Ana", "Ben"])))
                == "streaming film.mp4 from Ana and Ben")
        #expect(EventSentence.sentence(for: .item(.init(identifier: "ep2.mp4", index: 1, count: 3))) == "now on ep2.mp4 (item 2 of 3)")
        #expect(EventSentence.sentence(for: .chat(.init(from: "Ana", participant: UUID().uuidString, text: "hi"))) == "Ana: hi")
        #expect(EventSentence.sentence(for: .proposalRejected(.init(by: "Ben", order: 9, reason: "other-item",
                                                                    message: "skipped a change: it names another item")))
                == "Ben's change was not made: it names another item")
        // For programs only: the clock, the counts, the history's bookkeeping.
        #expect(EventSentence.sentence(for: .sync(.init(clockOffsetNanoseconds: 1, clockErrorBoundNanoseconds: 2, version: 3,
                                                        syncErrorNanoseconds: nil, presented: 4, dropped: 0))) == nil)
        #expect(EventSentence.sentence(for: .statistics(.init(presented: 1, dropped: 0, stills: 0))) == nil)
        #expect(EventSentence.sentence(for: .history(.init(message: "restored from the snapshot at order 9"))) == nil)
        #expect(EventSentence.sentence(for: .timeline(timeline, .init(by: "Ana", change: "pause"))) == nil)
        for event: E in [.participantJoined(.init(name: "Ben")), .waiting(timeline, .init(waitingFor: ["Cy: stallRecovery"]))] {
            #expect(!(EventSentence.sentence(for: event) ?? "").contains("effective_session_ns"))
        }
    }

    @Test func clocksRatesAndListsReadAsPeopleWriteThem() {
        #expect(EventSentence.clock(0) == "0:00")
        #expect(EventSentence.clock(59.99) == "0:59")
        #expect(EventSentence.clock(723.4) == "12:03")
        #expect(EventSentence.clock(3723) == "1:02:03")
        #expect(EventSentence.clock(-3) == "0:00")
        #expect(EventSentence.clock(.nan) == "0:00")
        #expect(EventSentence.rate(1) == "1×")
        #expect(EventSentence.rate(1.1) == "1.1×")
        #expect(EventSentence.rate(0.25) == "0.25×")
        #expect(EventSentence.list(["Ana"]) == "Ana")
        #expect(EventSentence.list(["Ana", "Ben", "Cy"]) == "Ana, Ben and Cy")
    }

    /// A gated play starts when the last pre-roll report completes it: that report is Ben's,
    /// but the play is Ana's, and stays hers on the status line; the completion says nothing.
    @Test func aPlayCompletedByAnotherPrerollStaysItsProposers() {
        var narrator = PartyNarrator()
        #expect(narrator.take(Self.changed(4, rate: 1, at: 723, by: Self.ana, .setRate(1)), at: Self.at(0)) == ["Ana played from 12:03"])
        let completion = Self.changed(5, rate: 1, at: 723, by: Self.ben, .prerolled(version: 4))
        guard case .timeline(_, let change) = completion else { Issue.record("not a timeline event"); return }
        #expect(change.by == "Ben" && change.completes == 4)
        #expect(narrator.take(completion, at: Self.at(300)) == [])
        #expect(narrator.lastAction == "Ana played from 12:03")
        // A departure or a suspension that completes a gate is no one's change either.
        #expect(narrator.take(Self.changed(6, rate: 1, at: 723, by: Self.ben, .departed(Self.ben)), at: Self.at(400)) == [])
        #expect(narrator.lastAction == "Ana played from 12:03")
    }

    /// A late joiner is told where the group is in one line, once the coordinator has handed
    /// over the history and nothing more came for `settle`; then changes are told as they come.
    @Test func aLateJoinerGetsOneLineNotTheHistory() {
        var narrator = PartyNarrator()
        #expect(narrator.take(.joined(.init(session: "s", participant: "Cy", item: "film.mp4")), at: Self.at(0)).isEmpty)
        #expect(narrator.nextWake == Self.at(0) + PartyNarrator.catchUpLimit)
        var printed: [String] = []
        // Named in alphabetical order, whatever order they are reported in.
        printed += narrator.take(.participantJoined(.init(name: "Ben")), at: Self.at(10))
        printed += narrator.take(.participantJoined(.init(name: "Ana")), at: Self.at(10))
        narrator.coordinationBegan(at: Self.at(50))
        for (version, proposal, rate) in [(3, PlaybackProposal.setRate(1), 1.0), (4, .seek(to: .zero), 1.0),
                                          (5, .pause(at: nil), 0.0)] {
            printed += narrator.take(Self.changed(UInt64(version), rate: rate, at: 723.4, by: Self.ana, proposal), at: Self.at(60))
        }
        // Chat is people's words: told even while catching up.
        printed += narrator.take(.chat(.init(from: "Ben", participant: "b", text: "welcome")), at: Self.at(61))
        #expect(printed == ["Ben: welcome"])
        #expect(narrator.nextWake == Self.at(60) + PartyNarrator.settle)
        #expect(narrator.tick(at: Self.at(300), position: nil).isEmpty, "not yet due")
        #expect(narrator.tick(at: Self.at(460), position: nil) == ["Ana and Ben are here; paused at 12:03 (Ana paused it)"])
        #expect(narrator.nextWake == nil)
        #expect(narrator.take(.participantLeft(.init(name: "Ben")), at: Self.at(900)) == ["Ben left"])
        #expect(narrator.take(Self.changed(6, rate: 1, at: 723.4, by: Self.ana, .setRate(1)), at: Self.at(950)) == ["Ana played from 12:03"])
    }

    @Test func aJoinerOfAPlayingGroupIsToldWhereItPlaysNowAndAWaitingOneWhomItWaitsFor() {
        var narrator = PartyNarrator()
        _ = narrator.take(.joined(.init(session: "s", participant: "Cy", item: "film.mp4")), at: Self.at(0))
        _ = narrator.take(.participantJoined(.init(name: "Ana")), at: Self.at(5))
        _ = narrator.take(Self.changed(3, rate: 1.5, at: 10, by: Self.ana, .setRate(1.5)), at: Self.at(5))
        // The coordinator never said it began (a player that never opened): the limit ends it.
        #expect(narrator.tick(at: Self.at(-1) + PartyNarrator.catchUpLimit, position: 72.5).isEmpty)
        #expect(narrator.tick(at: Self.at(0) + PartyNarrator.catchUpLimit, position: 72.5)
                == ["Ana is here; playing at 1:12, 1.5× (Ana set the rate to 1.5×)"])

        var waiting = PartyNarrator()
        _ = waiting.take(.joined(.init(session: "s", participant: "Cy", item: "film.mp4")), at: Self.at(0))
        waiting.coordinationBegan(at: Self.at(1))
        let timeline = WatchPartyEvent.Timeline(version: 4, rate: 0, mediaTime: 30, effectiveSessionNanoseconds: 0, item: "film.mp4")
        _ = waiting.take(.waiting(timeline, .init(waitingFor: ["Ben: stallRecovery"])), at: Self.at(2))
        #expect(waiting.tick(at: Self.at(2) + PartyNarrator.settle, position: 30)
                == ["nobody else is here yet; waiting for Ben (catching up)"])
    }

    /// A joiner whose group's history says nothing is told soon after the coordinator began,
    /// not at the limit.
    @Test func aJoinerOfAQuietGroupIsToldSoon() {
        var narrator = PartyNarrator()
        _ = narrator.take(.joined(.init(session: "s", participant: "Ana", item: "film.mp4")), at: Self.at(0))
        narrator.coordinationBegan(at: Self.at(20))
        #expect(narrator.nextWake == Self.at(20) + PartyNarrator.settle)
        #expect(narrator.tick(at: Self.at(420), position: 0) == ["nobody else is here yet; paused at 0:00"])
    }
}

extension PartyNarratorTests {
    /// The host started the session: nothing to catch up on, where the group is is said at once,
    /// and whoever comes and goes after is told as it happens.
    @Test func theHostIsToldAtOnce() {
        var narrator = PartyNarrator(catchesUp: false)
        #expect(narrator.take(.joined(.init(session: "s", participant: "Ana", item: "film.mp4")), at: Self.at(0))
                == ["nobody else is here yet; paused at 0:00"])
        #expect(narrator.nextWake == nil && !narrator.isCatchingUp)
        #expect(narrator.take(.participantJoined(.init(name: "Ben")), at: Self.at(5)) == ["Ben joined"])
        #expect(narrator.take(.participantLeft(.init(name: "Ben")), at: Self.at(6)) == ["Ben left"])
    }
}
