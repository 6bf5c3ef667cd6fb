import Foundation
import Testing
import TandemClock
@testable import TandemPlayback
@testable import TandemBench

/// The on-receipt baseline's decisions, without a player: each change once, at once; a timeline
/// already in force from where the group is when the command arrives; a switch on receipt.
@Suite struct ReceiptFollowerTests {
    /// A play of `item`, at `rate`, at `itemTime` at `hostTime`, of a timeline anchored at
    /// `anchor` (by default the command's own position), issued 300 ms before its anchor (a
    /// fresh change) or, `inForce`, just after it, or at `issuedAt` when given.
    static func play(_ itemTime: Int64, at hostTime: Int64, rate: Double = 1, version: UInt64, anchor: (media: Int64, host: Int64)? = nil,
                     inForce: Bool = false, issuedAt: Int64? = nil, item: String = "a") -> PlaybackCommand {
        let anchor = anchor ?? (itemTime, hostTime)
        let timeline = SharedTimeline(item: item, rate: rate, anchorMediaTime: ItemTime(nanoseconds: anchor.media),
                                      anchorSessionTime: SessionInstant(nanoseconds: anchor.host), version: version)
        return .play(PlayCommand(expectedCurrentItemIdentifier: item, originator: nil, rate: rate, itemTime: ItemTime(nanoseconds: itemTime),
                                 hostTime: HostInstant(nanoseconds: hostTime), completionDueDate: .distantFuture, version: version,
                                 timeline: timeline, issuedAt: SessionInstant(nanoseconds: issuedAt ?? (inForce ? anchor.host + 1 : anchor.host - 300_000_000))))
    }

    static func pause(_ itemTime: Int64, at hostTime: Int64, version: UInt64, item: String = "a") -> PlaybackCommand {
        let timeline = SharedTimeline(item: item, rate: 0, anchorMediaTime: ItemTime(nanoseconds: itemTime),
                                      anchorSessionTime: SessionInstant(nanoseconds: hostTime), version: version)
        return .pause(PauseCommand(expectedCurrentItemIdentifier: item, originator: nil, itemTime: ItemTime(nanoseconds: itemTime),
                                   hostTime: HostInstant(nanoseconds: hostTime), shouldBufferInAnticipationOfPlayback: false,
                                   anticipatedPlaybackRate: 0, completionDueDate: .distantFuture, version: version,
                                   timeline: timeline, issuedAt: SessionInstant(nanoseconds: hostTime - 300_000_000)))
    }

    @Test func eachChangeIsAppliedOnceWhenItArrivesNotAtItsInstant() {
        var follower = ReceiptFollower()
        #expect(follower.receive(Self.pause(0, at: 1_000, version: 1), now: 1_000, paused: true, currentItem: "a")
            == .pause(at: 0, now: 1_000, item: nil))
        // Play from 0, half a second ahead: from 0 now, with no seek (the player is there, paused).
        #expect(follower.receive(Self.play(0, at: 10_500_000_000, version: 2), now: 10_000_000_000, paused: true, currentItem: "a")
            == .play(from: 0, rate: 1, now: 10_000_000_000, seek: false, item: nil))
        // The coordinator re-maps the same timeline every second, in force by then: ignored.
        let again = Self.play(1_050_000_000, at: 11_550_000_000, version: 2, anchor: (0, 10_500_000_000), inForce: true)
        #expect(follower.receive(again, now: 11_500_000_000, paused: false, currentItem: "a") == nil)
        // The relay numbered a proposal that left the timeline as it was: the same change, ignored.
        let renumbered = Self.play(1_050_000_000, at: 11_550_000_000, version: 3, anchor: (0, 10_500_000_000), inForce: true)
        #expect(follower.receive(renumbered, now: 11_500_000_000, paused: false, currentItem: "a") == nil)
        // The player frozen meanwhile (its own suspension): caught up where the group is, plus the
        // 300 ms lead the last fresh change had, with a seek.
        #expect(follower.receive(renumbered, now: 11_500_000_000, paused: true, currentItem: "a")
            == .play(from: 1_050_000_000 + 250_000_000, rate: 1, now: 11_500_000_000, seek: true, item: nil))
        // A seek or buffering command for the current item: the play or pause that follows carries it.
        #expect(follower.receive(.seek(SeekCommand(expectedCurrentItemIdentifier: "a", originator: nil, itemTime: .zero,
                                                   shouldBufferInAnticipationOfPlayback: true, anticipatedPlaybackRate: 1,
                                                   completionDueDate: .distantFuture, version: 4)),
                                 now: 12_000_000_000, paused: false, currentItem: "a") == nil)
    }

    @Test func aGatedPlayIsAppliedOnceAndItsLeadIsLearnedFromItsCompletion() {
        var follower = ReceiptFollower()
        _ = follower.receive(Self.pause(5_000_000_000, at: 1_000, version: 1), now: 1_000, paused: true, currentItem: "a")
        // The gate's provisional play, issued at 10 s, anchored at its deadline 1 s ahead: from 5 s now.
        #expect(follower.receive(Self.play(5_000_000_000, at: 11_000_000_000, version: 2, issuedAt: 10_000_000_000),
                                 now: 10_000_000_000, paused: true, currentItem: "a")
            == .play(from: 5_000_000_000, rate: 1, now: 10_000_000_000, seek: false, item: nil))
        // Everyone pre-rolled: the completion, issued at 10.2 s and anchored 50 ms after it, earlier,
        // at the same item, media time and rate: the same change, not applied again.
        let completion = Self.play(5_000_000_000, at: 10_250_000_000, version: 3, issuedAt: 10_200_000_000)
        #expect(follower.receive(completion, now: 10_200_000_000, paused: false, currentItem: "a") == nil)
        // Its re-issues, in force by then: ignored too.
        let again = Self.play(6_000_000_000, at: 11_250_000_000, version: 3, anchor: (5_000_000_000, 10_250_000_000), inForce: true)
        #expect(follower.receive(again, now: 11_200_000_000, paused: false, currentItem: "a") == nil)
        // A catch-up after a freeze takes the completion's 50 ms lead, not the gate's 1 s.
        #expect(follower.receive(again, now: 11_200_000_000, paused: true, currentItem: "a")
            == .play(from: 6_000_000_000, rate: 1, now: 11_200_000_000, seek: true, item: nil))
        // A completion no longer fresh when issued: the lead from before the provisional play (the relay's shortest).
        var late = ReceiptFollower()
        _ = late.receive(Self.play(0, at: 2_000_000_000, version: 1, issuedAt: 1_000_000_000), now: 1_000_000_000, paused: true, currentItem: "a")
        #expect(late.receive(Self.play(500_000_000, at: 1_500_000_000, version: 2, anchor: (0, 1_400_000_000), issuedAt: 1_450_000_000),
                             now: 1_450_000_000, paused: false, currentItem: "a") == nil)
        #expect(late.lead == ReceiptFollower.shortestRelayLead)
    }

    @Test func aSeekSeeksAndARateChangeCarriesOn() {
        var follower = ReceiptFollower()
        _ = follower.receive(Self.play(0, at: 1_000_000_000, version: 1), now: 900_000_000, paused: true, currentItem: "a")
        // Playing; at 3 s the group changes rate, carrying on from 2 s of media: no seek.
        #expect(follower.receive(Self.play(2_000_000_000, at: 3_000_000_000, rate: 1.5, version: 2), now: 2_700_000_000,
                                 paused: false, currentItem: "a") == .play(from: 2_000_000_000, rate: 1.5, now: 2_700_000_000, seek: false, item: nil))
        // At 5 s it jumps to 60 s: a seek.
        #expect(follower.receive(Self.play(60_000_000_000, at: 5_000_000_000, rate: 1.5, version: 3), now: 4_800_000_000,
                                 paused: false, currentItem: "a") == .play(from: 60_000_000_000, rate: 1.5, now: 4_800_000_000, seek: true, item: nil))
        // A pause, at once, showing the group's frame.
        #expect(follower.receive(Self.pause(61_000_000_000, at: 6_000_000_000, version: 4), now: 5_700_000_000, paused: false, currentItem: "a")
            == .pause(at: 61_000_000_000, now: 5_700_000_000, item: nil))
        // Resuming from the pause's frame: no seek; from elsewhere (a seek while paused, then play): a seek.
        #expect(follower.receive(Self.play(61_000_000_000, at: 8_000_000_000, version: 5), now: 7_700_000_000, paused: true, currentItem: "a")
            == .play(from: 61_000_000_000, rate: 1, now: 7_700_000_000, seek: false, item: nil))
        _ = follower.receive(Self.pause(62_000_000_000, at: 9_000_000_000, version: 6), now: 8_900_000_000, paused: false, currentItem: "a")
        #expect(follower.receive(Self.play(30_000_000_000, at: 10_000_000_000, version: 7), now: 9_900_000_000, paused: true, currentItem: "a")
            == .play(from: 30_000_000_000, rate: 1, now: 9_900_000_000, seek: true, item: nil))
    }

    @Test(arguments: [1.0, 2.0, 0.5])
    func aTimelineAlreadyInForceIsTakenUpWhereTheGroupIsWhenTheCommandArrives(rate: Double) {
        // A late joiner's command, its timeline in force: be at 40 s of media 300 ms from now, at
        // `rate`; no fresh change seen yet, so the lead is the relay's shortest, 30 ms.
        var follower = ReceiptFollower()
        let directive = follower.receive(Self.play(40_000_000_000, at: 20_300_000_000, rate: rate, version: 9, anchor: (30_000_000_000, 10_000_000_000),
                                                   inForce: true), now: 20_000_000_000, paused: true, currentItem: "a")
        #expect(directive == .play(from: 40_000_000_000 - Int64(270_000_000 * rate), rate: rate, now: 20_000_000_000, seek: true, item: nil))
        // Before the start of the media: from the start.
        var early = ReceiptFollower()
        #expect(early.receive(Self.play(100_000_000, at: 1_000_000_000, rate: rate, version: 3, anchor: (0, 900_000_000), inForce: true),
                              now: 0, paused: true, currentItem: "a") == .play(from: 0, rate: rate, now: 0, seek: true, item: nil))
        // The same command still to come: from its own position, at once.
        var coming = ReceiptFollower()
        #expect(coming.receive(Self.play(40_000_000_000, at: 20_300_000_000, rate: rate, version: 9), now: 20_000_000_000, paused: true,
                               currentItem: "a") == .play(from: 40_000_000_000, rate: rate, now: 20_000_000_000, seek: true, item: nil))
    }

    @Test func anItemSwitchesOnReceiptFromTheCommandsPosition() {
        var follower = ReceiptFollower()
        _ = follower.receive(Self.play(0, at: 1_000_000_000, version: 1), now: 900_000_000, paused: true, currentItem: "a")
        // A seek for the next item prepares it; the play for it switches now, from its start.
        let seek = PlaybackCommand.seek(SeekCommand(expectedCurrentItemIdentifier: "b", originator: nil, itemTime: .zero,
                                                    shouldBufferInAnticipationOfPlayback: true, anticipatedPlaybackRate: 1,
                                                    completionDueDate: .distantFuture, version: 2))
        #expect(follower.receive(seek, now: 5_000_000_000, paused: false, currentItem: "a") == .prepare(item: "b", at: 0))
        #expect(follower.receive(Self.play(0, at: 5_300_000_000, version: 2, item: "b"), now: 5_010_000_000, paused: false, currentItem: "a")
            == .play(from: 0, rate: 1, now: 5_010_000_000, seek: false, item: "b"))
        // Its re-issue, on the item: ignored.
        #expect(follower.receive(Self.play(1_000_000_000, at: 6_300_000_000, version: 2, anchor: (0, 5_300_000_000), inForce: true, item: "b"),
                                 now: 6_200_000_000, paused: false, currentItem: "b") == nil)
    }
}
