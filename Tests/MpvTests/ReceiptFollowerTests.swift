import Foundation
import Testing
import TandemClock
@testable import TandemPlayback
@testable import TandemMpv

/// The on-receipt baseline's decisions, without mpv: each version once, at once; a timeline
/// already in force from where the group is when the command arrives.
@Suite struct ReceiptFollowerTests {
    static let frame: Int64 = 33_333_333

    /// A timeline at `rate` anchored after the command's issue: a change still to come, unless
    /// the case says `inForce`.
    static func timeline(rate: Double, version: UInt64) -> SharedTimeline {
        SharedTimeline(item: "a", rate: rate, anchorMediaTime: .zero, anchorSessionTime: SessionInstant(nanoseconds: 1), version: version)
    }

    static func play(_ itemTime: Int64, at hostTime: Int64, rate: Double = 1, version: UInt64) -> PlaybackCommand {
        .play(PlayCommand(expectedCurrentItemIdentifier: "a", originator: nil, rate: rate, itemTime: ItemTime(nanoseconds: itemTime),
                          hostTime: HostInstant(nanoseconds: hostTime), completionDueDate: .distantFuture, version: version,
                          timeline: timeline(rate: rate, version: version), issuedAt: .zero))
    }

    static func pause(_ itemTime: Int64, at hostTime: Int64, version: UInt64) -> PlaybackCommand {
        .pause(PauseCommand(expectedCurrentItemIdentifier: "a", originator: nil, itemTime: ItemTime(nanoseconds: itemTime),
                            hostTime: HostInstant(nanoseconds: hostTime), shouldBufferInAnticipationOfPlayback: false,
                            anticipatedPlaybackRate: 0, completionDueDate: .distantFuture, version: version,
                            timeline: timeline(rate: 0, version: version), issuedAt: .zero))
    }

    @Test func aCommandTellsWhetherItsTimelineWasInForceWhenIssued() {
        #expect(!ReceiptFollower.inForce(Self.play(0, at: 0, version: 1)))
        guard case .play(var play) = Self.play(0, at: 0, version: 1) else { return }
        play.issuedAt = SessionInstant(nanoseconds: 1)
        #expect(ReceiptFollower.inForce(.play(play)))
    }

    @Test func eachVersionIsAppliedOnceWhenItArrivesNotAtItsInstant() {
        var follower = ReceiptFollower(frameDuration: Self.frame)
        #expect(follower.receive(Self.pause(0, at: 1_000, version: 1), now: 1_000) == .pause(at: 0))
        // Play from 0, half a second ahead: from 0 now, with no seek (mpv is there, paused).
        #expect(follower.receive(Self.play(0, at: 10_500_000_000, version: 2), now: 10_000_000_000) ==
            .play(from: 0, rate: 1, seek: false))
        // The coordinator re-maps the same version every second, in force by then: ignored.
        #expect(follower.receive(Self.play(1_050_000_000, at: 11_550_000_000, version: 2), now: 11_500_000_000, inForce: true) == nil)
        // An older version, late: ignored.
        #expect(follower.receive(Self.pause(0, at: 0, version: 1), now: 11_600_000_000) == nil)
    }

    @Test func aSeekAlwaysSeeksAndARateChangeCarriesOn() {
        var follower = ReceiptFollower(frameDuration: Self.frame)
        _ = follower.receive(Self.play(0, at: 1_000_000_000, version: 1), now: 900_000_000)
        // Playing; at 3 s the group changes rate, carrying on from 2 s of media: no forced seek.
        #expect(follower.receive(Self.play(2_000_000_000, at: 3_000_000_000, rate: 1.5, version: 2), now: 2_700_000_000) ==
            .play(from: 2_000_000_000, rate: 1.5, seek: false))
        // At 5 s it jumps to 60 s: a seek, whatever mpv's position.
        #expect(follower.receive(Self.play(60_000_000_000, at: 5_000_000_000, rate: 1.5, version: 3), now: 4_800_000_000) ==
            .play(from: 60_000_000_000, rate: 1.5, seek: true))
        // A pause, at once, showing the group's frame.
        #expect(follower.receive(Self.pause(61_000_000_000, at: 6_000_000_000, version: 4), now: 5_700_000_000) ==
            .pause(at: 61_000_000_000))
        // Resuming from the pause's frame: no forced seek; from elsewhere (a seek while paused, then play): a seek.
        #expect(follower.receive(Self.play(61_000_000_000, at: 8_000_000_000, version: 5), now: 7_700_000_000) ==
            .play(from: 61_000_000_000, rate: 1, seek: false))
        _ = follower.receive(Self.pause(62_000_000_000, at: 9_000_000_000, version: 6), now: 8_900_000_000)
        #expect(follower.receive(Self.play(30_000_000_000, at: 10_000_000_000, version: 7), now: 9_900_000_000) ==
            .play(from: 30_000_000_000, rate: 1, seek: true))
    }

    @Test(arguments: [1.0, 2.0, 0.5])
    func aTimelineAlreadyInForceStartsWhereTheGroupIsWhenTheCommandArrives(rate: Double) {
        // A late joiner's command, its timeline in force: be at 40 s of media 300 ms from now, at `rate`.
        var follower = ReceiptFollower(frameDuration: Self.frame)
        let directive = follower.receive(Self.play(40_000_000_000, at: 20_300_000_000, rate: rate, version: 9), now: 20_000_000_000,
                                         inForce: true)
        #expect(directive == .play(from: 40_000_000_000 - Int64(300_000_000 * rate), rate: rate, seek: false))
        // A rejoin (mpv played on past the end) takes the same version up again, from where the group is.
        let rejoin = follower.receive(Self.play(40_000_000_000, at: 20_300_000_000, rate: rate, version: 9), now: 25_000_000_000,
                                      rejoin: true)
        #expect(rejoin == .play(from: 40_000_000_000 + Int64(4_700_000_000 * rate), rate: rate, seek: false))
        // Before the start of the media: from the start.
        var early = ReceiptFollower(frameDuration: Self.frame)
        #expect(early.receive(Self.play(100_000_000, at: 1_000_000_000, rate: rate, version: 3), now: 0, inForce: true) ==
            .play(from: 0, rate: rate, seek: false))
        // The same command still to come: from its own position, at once.
        var coming = ReceiptFollower(frameDuration: Self.frame)
        #expect(coming.receive(Self.play(40_000_000_000, at: 20_300_000_000, rate: rate, version: 9), now: 20_000_000_000) ==
            .play(from: 40_000_000_000, rate: rate, seek: false))
    }
}

extension ReceiptFollower {
    /// `receive(_:now:inForce:rejoin:)` at host instant `now` ns.
    mutating func receive(_ command: PlaybackCommand, now: Int64, inForce: Bool? = nil, rejoin: Bool = false) -> Directive? {
        receive(command, now: HostInstant(nanoseconds: now), inForce: inForce, rejoin: rejoin)
    }
}
