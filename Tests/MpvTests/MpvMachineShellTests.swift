import Foundation
import Testing
import TandemClock
@testable import TandemPlayback
@testable import TandemMpv

/// The decisions `MpvPlayer` hands its machine beyond the group's: pitch correction switched in
/// a start, the program's own requests (its transport, uncoordinated) kept from echoing, a
/// person's change forwarded to a program's own coordinator, and a stall counted. On virtual
/// time against a scripted mpv; nothing sleeps.
@Suite struct MpvMachineShellTests {
    static let t0 = MpvMachineTests.t0

    static func pitchRig() -> MpvRig {
        var configuration = MpvMachine.Configuration()
        configuration.pitchCorrection = .followingRate
        var rig = MpvRig(configuration: configuration)
        rig.machine.correctsPitch = false
        return rig
    }

    static func requests(_ rig: MpvRig, after count: Int = 0) -> [MpvMachine.Request] { rig.mpv.received.dropFirst(count).map(\.1) }

    @Test func pitchCorrectionIsSwitchedInAStartWhilePausedBeforeItsSeek() {
        var rig = Self.pitchRig()
        // At rate 1 it stays off: nothing is sent.
        rig.command(Commands.play(.seconds(2), at: Self.t0 + .milliseconds(500), version: 1))
        rig.run(until: Self.t0 + .seconds(2))
        #expect(!Self.requests(rig).contains(.pitchCorrection(true)) && !Self.requests(rig).contains(.pitchCorrection(false)))
        // A rate of 1.5: on, after the pause and before the seek that flushes the chain.
        let sent = rig.mpv.received.count
        let host = rig.now + .milliseconds(400)
        rig.command(Commands.play(.seconds(4), at: host, rate: 1.5, version: 2))
        rig.run(until: host + .seconds(2))
        let requests = Self.requests(rig, after: sent)
        guard let pause = requests.firstIndex(of: .pause(true)), let pitch = requests.firstIndex(of: .pitchCorrection(true)),
              let seek = requests.firstIndex(where: { if case .seek = $0 { true } else { false } }) else {
            Issue.record("requests: \(requests)")
            return
        }
        #expect(pause < pitch && pitch < seek)
        #expect(rig.mpv.correctsPitch == true)
        #expect(rig.error(against: .seconds(4), at: host, rate: 1.5).magnitude <= .microseconds(750))
        // Back to 1: off again, once.
        let again = rig.mpv.received.count
        let back = rig.now + .milliseconds(400)
        rig.command(Commands.play(.seconds(8), at: back, version: 3))
        rig.run(until: back + .seconds(2))
        #expect(Self.requests(rig, after: again).filter { $0 == .pitchCorrection(false) }.count == 1)
        #expect(rig.mpv.correctsPitch == false)
    }

    @Test func aPrerolledFrameIsNotStartedFromOnceThePitchSettingChanged() {
        var rig = Self.pitchRig()
        let due = Self.t0 + .milliseconds(300)
        let id = rig.command(Commands.seek(.seconds(5), version: 1, prerolls: true, due: due))
        rig.run(for: .milliseconds(200))
        #expect(rig.completed == [id])
        let sent = rig.mpv.received.count
        // The play at 1.5 switches pitch correction on: mpv seeks again rather than start from
        // a frame whose sound was filtered the other way.
        let host = rig.now + .milliseconds(300)
        rig.command(Commands.play(.seconds(5), at: host, rate: 1.5, version: 2))
        rig.run(until: host + .seconds(2))
        #expect(Self.requests(rig, after: sent).contains { if case .seek = $0 { true } else { false } })
        #expect(rig.machine.statistics.prerolledStarts == 0)
        #expect(rig.error(against: .seconds(5), at: host, rate: 1.5).magnitude <= .microseconds(750))
    }

    @Test func aPrerollCompletesAtItsLandingAndAPlayRightAfterStartsOnTheFrameOnceRead() {
        var mpv = ScriptedMpv()
        // Slow replies: the landing's reading comes 20 ms after `playback-restart`.
        mpv.replyDelay = .milliseconds(20)
        var rig = MpvRig(mpv: mpv)
        let due = Self.t0 + .seconds(1)
        let id = rig.command(Commands.seek(.seconds(5), version: 1, prerolls: true, due: due))
        // The position read (20 ms), the seek's landing (25 ms): complete then, not a reading later.
        rig.run(for: .milliseconds(50))
        #expect(rig.completed == [id])
        // The group's play, which waited for the completion, comes at once: before the landed
        // frame is read, and it starts there once it is, without seeking again.
        let seeks = Self.requests(rig).filter { if case .seek = $0 { true } else { false } }.count
        let host = rig.now + .milliseconds(300)
        rig.command(Commands.play(.seconds(5), at: host, version: 2))
        rig.run(until: host + .seconds(2))
        #expect(Self.requests(rig).filter { if case .seek = $0 { true } else { false } }.count == seeks, "the play seeked again")
        #expect(rig.machine.statistics.prerolledStarts == 1)
        // Slow replies teach no start latency: within the first start's guess of it.
        #expect(rig.error(against: .seconds(5), at: host).magnitude <= .milliseconds(1))
    }

    @Test func theProgramsOwnRequestsAreCarriedOutAndNeverProposed() {
        var rig = MpvRig()
        rig.ownRequest(.speed(1.25))
        rig.ownRequest(.pause(false))
        rig.run(for: .milliseconds(100))
        #expect(!rig.mpv.paused)
        #expect(rig.mpv.speed == 1.25)
        rig.ownRequest(.seek(.seconds(30)))
        rig.run(for: .milliseconds(100))
        // Clamped to the item's last frame (20 s less one), and its landing is Tandem's own.
        #expect(Self.requests(rig).contains(.seek(.seconds(20) - rig.machine.item.frameDuration)))
        rig.ownRequest(.pause(true))
        rig.run(for: .milliseconds(100))
        #expect(rig.mpv.paused)
        #expect(rig.proposals.isEmpty)
        #expect(rig.machine.statistics.userProposals == 0)
        // Asked again for what mpv was last asked: nothing is sent.
        let sent = rig.mpv.received.count
        rig.ownRequest(.pause(true))
        rig.ownRequest(.speed(1.25))
        #expect(rig.mpv.received.count == sent)
    }

    @Test func theProgramsOwnSeekEndsOnceMpvShowsTheFrameItLandedOn() {
        // mpv answers a seek as it queues it, and lands much later (a loaded machine): until
        // then `time-pos` is where mpv was, so the seek has not ended.
        var mpv = ScriptedMpv()
        mpv.seekDelay = .milliseconds(400)
        var rig = MpvRig(mpv: mpv)
        rig.run(for: .milliseconds(100))
        let sentAt = rig.now
        let id = rig.ownSeek(to: .seconds(4))
        rig.run(for: .milliseconds(350))
        #expect(rig.seeksEnded.isEmpty, "ended before mpv landed")
        rig.run(for: .milliseconds(100))
        guard rig.seeksEnded.count == 1, let ended = rig.seeksEnded.first else {
            Issue.record("ended: \(rig.seeksEnded.map { ($0.id, $0.landed) })")
            return
        }
        #expect(ended.id == id && ended.landed)
        #expect(ended.at >= sentAt + .milliseconds(400))
        // Where the program finds mpv once its seek returns: the frame at 4 s.
        #expect((rig.mpv.position(at: ended.at) - .seconds(4)).magnitude < .milliseconds(5))
        #expect(rig.proposals.isEmpty && rig.machine.statistics.userProposals == 0)

        // A restart of an earlier seek's, come while the next seek is still queued in mpv (which
        // reads where it was, not seeking): not that seek's landing.
        var queued = ScriptedMpv()
        queued.seekQueueDelay = .milliseconds(100)
        queued.seekDelay = .milliseconds(300)
        var late = MpvRig(mpv: queued)
        late.run(for: .milliseconds(100))
        late.ownSeek(to: .seconds(7))
        late.run(for: .milliseconds(400))
        let second = late.ownSeek(to: .seconds(15))
        late.strayRestart()
        late.run(for: .milliseconds(250))
        #expect(late.seeksEnded.count == 1, "ended on the stray restart: \(late.seeksEnded.map { ($0.id, $0.landed) })")
        late.run(for: .milliseconds(100))
        #expect(late.seeksEnded.last.map { $0.id == second && $0.landed } == true)
        #expect(late.seeksEnded.last.map { (late.mpv.position(at: $0.at) - .seconds(15)).magnitude < .milliseconds(5) } == true)

        // A seek mpv never lands within the landing time-out ends, not landed.
        var stuck = ScriptedMpv()
        stuck.seekDelay = .seconds(5)
        var slow = MpvRig(mpv: stuck)
        let start = slow.now
        let never = slow.ownSeek(to: .seconds(6))
        slow.run(for: .seconds(3))
        #expect(slow.seeksEnded.map(\.id) == [never] && slow.seeksEnded.map(\.landed) == [false])
        #expect(slow.seeksEnded.first?.at == start + slow.machine.configuration.landingTimeout)
    }

    @Test func aPersonsChangeIsForwardedAsItIsToAProgramsOwnCoordinator() {
        var rig = MpvRig()
        rig.machine.forwardsPersonChanges = true
        rig.ownRequest(.pause(false))
        rig.run(for: .milliseconds(100))
        rig.personSeeks(to: .seconds(12))
        rig.run(for: .milliseconds(100))
        rig.personSetsPause(true)
        rig.run(for: .milliseconds(100))
        guard rig.forwarded.count == 2, case .seek(let target) = rig.forwarded[0] else {
            Issue.record("forwarded: \(rig.forwarded)")
            return
        }
        #expect((ItemTime(nanoseconds: target) - .seconds(12)).magnitude < .milliseconds(1))
        #expect(rig.forwarded[1] == .setPaused(true))
        // mpv is left where the person put it, nothing held, nothing proposed to the group.
        #expect(rig.proposals.isEmpty)
        #expect(rig.mpv.paused)
        #expect((rig.mpv.position(at: rig.now) - .seconds(12)).magnitude < .milliseconds(150))
    }

    @Test func aPersonsSpeedAloneSwitchesPitchCorrectionWithIt() {
        var rig = Self.pitchRig()
        rig.ownRequest(.pause(false))
        rig.run(for: .milliseconds(100))
        rig.carryOut(rig.machine.onReport(.speed(1.5), now: rig.now))
        #expect(rig.mpv.correctsPitch == true)
        #expect(rig.proposals.isEmpty, "no group: a speed while the group is unknown is not proposed")
    }

    @Test func aStallIsCounted() {
        var rig = MpvMachineTests.playing()
        rig.cache(waiting: true)
        rig.run(for: .milliseconds(10))
        rig.cache(waiting: false)
        rig.run(for: .milliseconds(10))
        #expect(rig.machine.statistics.stalls == 1)
    }
}
