import Foundation
import Testing
import TandemClock
@testable import TandemPlayback
@testable import TandemMpv

/// `MpvMachine`'s decisions against a scripted mpv (`ScriptedMpv`) on virtual time: starts at the
/// group's instant, pauses, seeks, rates, items, corrections, a person's changes and keys, and
/// buffering. Nothing sleeps; each test runs a few virtual seconds in well under one real one.
@Suite struct MpvMachineTests {
    static let t0 = HostInstant(nanoseconds: 1_000_000_000)

    /// A rig playing from `itemTime` at `at` (version 1), run until `until`.
    static func playing(from itemTime: ItemTime = .seconds(2), at: HostInstant = t0 + .milliseconds(500),
                        until: HostInstant = t0 + .seconds(3), mpv: ScriptedMpv = ScriptedMpv()) -> MpvRig {
        var rig = MpvRig(mpv: mpv)
        rig.command(Commands.play(itemTime, at: at, version: 1))
        rig.run(until: until)
        return rig
    }

    @Test func aStartUnpausesOnTheLandedFrameAtTheGroupsInstant() {
        var rig = MpvRig()
        let host = Self.t0 + .milliseconds(500)
        rig.command(Commands.play(.seconds(2), at: host, version: 1))
        // Lined up and still until the instant: paused, at speed 1, seeked near 2 s.
        rig.run(until: host - .milliseconds(5))
        #expect(rig.mpv.paused)
        #expect(rig.mpv.received.contains { if case .seek = $0.1 { true } else { false } })
        #expect((rig.error(against: .seconds(2), at: host) - (host - rig.now)).magnitude < .milliseconds(35))
        // Moving from the instant, on the timeline to within the first start's latency guess.
        rig.run(until: host + .milliseconds(20))
        #expect(!rig.mpv.paused)
        #expect(rig.error(against: .seconds(2), at: host).magnitude < .milliseconds(1))
        // The start's error trimmed by one pulse: within the policy's deadband once it has run.
        rig.run(until: host + .seconds(2))
        #expect(rig.error(against: .seconds(2), at: host).magnitude <= .microseconds(500), "\(rig.error(against: .seconds(2), at: host))")
        #expect(rig.mpv.speed == 1)
        #expect(rig.machine.statistics.starts == 1)
    }

    @Test func aFarOffStartLetsMpvPlayOnUntilItMustBegin() {
        var rig = Self.playing()
        // The group's change (a seek to 10 s) takes effect a second from now.
        let host = rig.now + .seconds(1)
        rig.command(Commands.play(.seconds(10), at: host, version: 2))
        rig.run(until: host - .milliseconds(200))
        #expect(!rig.mpv.paused, "mpv stood still for a change a second away")
        rig.run(until: host + .seconds(2))
        #expect(rig.error(against: .seconds(10), at: host).magnitude <= .microseconds(500))
        #expect(rig.machine.statistics.starts == 2)
    }

    @Test func aPauseStopsMpvAtTheCommandsInstantOnItsFrame() {
        var rig = Self.playing()
        let host = rig.now + .milliseconds(300)
        let shown = ItemTime.zero + .seconds(2) + (host - (Self.t0 + .milliseconds(500)))
        rig.command(Commands.pause(shown, at: host, version: 2))
        rig.run(until: host - .milliseconds(1))
        #expect(!rig.mpv.paused, "paused before the pause's instant")
        rig.run(until: host + .milliseconds(200))
        #expect(rig.mpv.paused)
        #expect((rig.mpv.position(at: rig.now) - shown).magnitude <= .milliseconds(35))
        #expect(rig.machine.groupRate == 0)
        // No corrections of a paused mpv.
        let measured = rig.machine.statistics.measurements
        rig.run(for: .seconds(2))
        #expect(rig.machine.statistics.measurements == measured)
    }

    @Test func aRateChangeStartsAfreshAtTheNewRate() {
        var rig = Self.playing()
        let host = rig.now + .milliseconds(400)
        let at = ItemTime.zero + .seconds(2) + (host - (Self.t0 + .milliseconds(500)))
        rig.command(Commands.play(at, at: host, rate: 1.5, version: 2))
        rig.run(until: host + .seconds(3))
        #expect(rig.mpv.speed == 1.5)
        #expect(rig.error(against: at, at: host, rate: 1.5).magnitude <= .microseconds(750))
        #expect(rig.machine.statistics.starts == 2)
    }

    @Test func aPrerollCompletesOnceLandedAndThePlayUnpausesThereWithoutSeekingAgain() {
        var rig = MpvRig()
        let due = Self.t0 + .seconds(2)
        let seek = rig.command(Commands.seek(.seconds(5), version: 1, prerolls: true, due: due))
        #expect(!rig.completed.contains(seek), "a pre-roll completed before mpv landed")
        rig.run(for: .milliseconds(100))
        #expect(rig.completed.contains(seek))
        let seeks = rig.mpv.received.filter { if case .seek = $0.1 { true } else { false } }.count
        let host = rig.now + .milliseconds(300)
        rig.command(Commands.play(.seconds(5), at: host, version: 2))
        rig.run(until: host + .seconds(2))
        #expect(rig.mpv.received.filter { if case .seek = $0.1 { true } else { false } }.count == seeks)
        #expect(rig.machine.statistics.prerolledStarts == 1)
        #expect(rig.error(against: .seconds(5), at: host).magnitude <= .microseconds(500))
    }

    @Test func anItemChangeLoadsTheHeldItemThenCarriesOutTheCommand() {
        var rig = Self.playing()
        let b = MpvMachine.Item(identifier: "b", hasAudio: true, duration: .seconds(10))
        rig.items["b"] = b
        rig.machine.availableItems.insert("b")
        // Within a load's lead of the instant: loaded at once.
        let host = rig.now + .milliseconds(300)
        rig.command(Commands.play(.zero, at: host, version: 2, item: "b"))
        #expect(rig.mpv.received.contains { $0.1 == .load(identifier: "b") })
        rig.run(until: host + .seconds(2))
        #expect(rig.machine.item == b)
        #expect(!rig.mpv.paused)
        #expect(rig.error(against: .zero, at: host).magnitude <= .microseconds(500))
        // A newer command for an item being loaded waits for it in the older one's place: one load.
        let c = MpvMachine.Item(identifier: "c2", hasAudio: true, duration: .seconds(10))
        rig.items["c2"] = c
        rig.machine.availableItems.insert("c2")
        let loads = rig.mpv.received.filter { $0.1 == .load(identifier: "c2") }.count
        let older = rig.command(Commands.play(.zero, at: rig.now + .milliseconds(300), version: 3, item: "c2"))
        let newer = rig.command(Commands.play(.seconds(1), at: rig.now + .milliseconds(350), version: 4, item: "c2"))
        #expect(rig.completed.contains(older))
        #expect(rig.mpv.received.filter { $0.1 == .load(identifier: "c2") }.count == loads + 1)
        rig.run(for: .seconds(2))
        #expect(rig.completed.contains(newer))
        #expect(rig.machine.item == c)
        #expect(!rig.mpv.paused)
        // An item this participant does not hold: completed at once, mpv left alone.
        let sent = rig.mpv.received.count
        let stale = rig.command(Commands.play(.zero, at: rig.now + .milliseconds(500), version: 5, item: "c"))
        #expect(rig.completed.contains(stale))
        #expect(rig.mpv.received.count == sent)
    }

    @Test func theNextItemIsLoadedALoadsLeadBeforeItsInstantSoTheCurrentOnePlaysToItsEnd() {
        // Item a ends 4 s after it started at 2 s; the group pre-rolls b a second ahead of that.
        var mpv = ScriptedMpv()
        mpv.duration = .seconds(6)
        var rig = Self.playing(mpv: mpv)
        rig.machine.item.duration = .seconds(6)
        let b = MpvMachine.Item(identifier: "b", hasAudio: true, duration: .seconds(10))
        rig.items["b"] = b
        rig.machine.availableItems.insert("b")
        let end = Self.t0 + .milliseconds(500) + .seconds(4)
        rig.run(until: end - .seconds(1))
        let seek = rig.command(Commands.seek(.zero, version: 2, prerolls: true, item: "b", due: end))
        // mpv holds one item: its pre-roll is the load, made later; the command is done with.
        #expect(rig.completed.contains(seek))
        rig.command(Commands.play(.zero, at: end, version: 2, item: "b"))
        let lead = rig.machine.configuration.itemLoadLead
        rig.run(until: end - lead - .milliseconds(1))
        #expect(!rig.mpv.paused, "mpv stopped short of the item's end")
        #expect(!rig.mpv.received.contains { $0.1 == .load(identifier: "b") })
        #expect(rig.error(against: .seconds(2), at: Self.t0 + .milliseconds(500)).magnitude <= .microseconds(500))
        rig.run(until: end + .seconds(2))
        let loads = rig.mpv.received.filter { $0.1 == .load(identifier: "b") }.map(\.0)
        #expect(loads.count == 1)
        #expect(loads.allSatisfy { $0 >= end - lead })
        #expect(rig.machine.item == b)
        #expect(!rig.mpv.paused)
        #expect(rig.error(against: .zero, at: end).magnitude <= .microseconds(500))
    }

    @Test func aDeferredLoadGivesWayToTheGroupStayingOnTheCurrentItem() {
        var mpv = ScriptedMpv()
        mpv.duration = .seconds(6)
        var rig = Self.playing(mpv: mpv)
        rig.machine.item.duration = .seconds(6)
        rig.items["b"] = MpvMachine.Item(identifier: "b", hasAudio: true, duration: .seconds(10))
        rig.machine.availableItems.insert("b")
        let end = Self.t0 + .milliseconds(500) + .seconds(4)
        rig.run(until: end - .seconds(1))
        rig.command(Commands.play(.zero, at: end, version: 2, item: "b"))
        // The group goes back: a's 1 s, a little later, before the load was due.
        let host = rig.now + .milliseconds(200)
        rig.command(Commands.play(.seconds(1), at: host, version: 3))
        rig.run(until: end + .seconds(1))
        #expect(!rig.mpv.received.contains { $0.1 == .load(identifier: "b") })
        #expect(rig.machine.item.identifier == "a")
        #expect(rig.error(against: .seconds(1), at: host).magnitude <= .microseconds(500))
    }

    @Test func smallErrorsAreNudgedAwayAndLargeOnesStartAfresh() {
        var rig = Self.playing()
        let anchor = (ItemTime.seconds(2), Self.t0 + .milliseconds(500))
        // A small error: nudged, not seeked, back within the deadband.
        rig.mpv.jump(by: .milliseconds(8), at: rig.now)
        rig.run(for: .seconds(4))
        #expect(rig.machine.statistics.nudges >= 2)
        #expect(rig.machine.statistics.correctiveSeeks == 0)
        #expect(rig.error(against: anchor.0, at: anchor.1).magnitude <= .microseconds(600), "\(rig.error(against: anchor.0, at: anchor.1))")
        // A large one: a start afresh, landing exactly.
        rig.mpv.jump(by: .milliseconds(400), at: rig.now)
        rig.run(for: .seconds(3))
        #expect(rig.machine.statistics.correctiveSeeks == 1)
        #expect(rig.error(against: anchor.0, at: anchor.1).magnitude <= .microseconds(600))
        #expect(rig.mpv.speed == 1)
    }

    @Test func aKeyInMpvsWindowIsProposedAndMovesMpvOnlyAtTheGroupsInstant() {
        var rig = Self.playing()
        let sent = rig.mpv.received.count
        rig.press(.togglePause)
        #expect(rig.proposals == [.rate(0)])
        rig.run(for: .milliseconds(50))
        // mpv itself untouched: the group's answer moves it, at the group's instant.
        #expect(!rig.mpv.paused)
        #expect(!rig.mpv.received.dropFirst(sent).contains { $0.1 == .pause(true) })
        let host = rig.now + .milliseconds(100)
        rig.command(Commands.pause(ItemTime.zero + .seconds(2) + (host - (Self.t0 + .milliseconds(500))), at: host, version: 2))
        rig.run(until: host - .milliseconds(1))
        #expect(!rig.mpv.paused)
        rig.run(until: host + .milliseconds(5))
        #expect(rig.mpv.paused)
        // The seek and rate keys, with the terminal's meanings.
        rig.press(.seek(by: .seconds(5)))
        rig.press(.faster)
        #expect(Array(rig.proposals.suffix(2)) == [.seek(ItemTime.zero + .seconds(2) + (host - (Self.t0 + .milliseconds(500))) + .seconds(5)),
                                                         .rate(1.1)])
    }

    @Test func aPausePressedDuringThePlayersOwnStartOfAChangeIsAPause() {
        var rig = Self.playing()
        // The group's change: a rate of 1.1 a moment from now, which mpv starts on (a pause, a seek, a resume).
        let host = rig.now + .milliseconds(100)
        rig.command(Commands.play(.seconds(5), at: host, rate: 1.1, version: 2))
        rig.run(for: .milliseconds(10))
        #expect(rig.mpv.paused, "the start has mpv paused while it lines up")
        // The person, seeing mpv play a moment ago, presses pause in its window.
        rig.press(.togglePause)
        #expect(rig.proposals.last == .rate(0))
        #expect(rig.mpv.paused)
        // mpv's own pause toggled meanwhile (mpv's `cycle pause`, by another tool over its IPC)
        // reads as an unpause of the still mpv: the person saw it play, so it is a pause too.
        var other = Self.playing()
        let instant = other.now + .milliseconds(100)
        other.command(Commands.play(.seconds(5), at: instant, rate: 1.1, version: 2))
        other.run(for: .milliseconds(10))
        other.personSetsPause(false)
        other.run(for: .milliseconds(10))
        #expect(other.proposals.last == .rate(0), "\(other.proposals)")
        other.run(until: instant + .milliseconds(50))
        #expect(other.mpv.paused, "the start went on and played")
        // So is one toggled while mpv stands on a pre-roll's frame for the group's play.
        var third = Self.playing()
        third.command(Commands.seek(.seconds(8), version: 2, prerolls: true, due: third.now + .seconds(2)))
        third.run(for: .milliseconds(60))
        third.personSetsPause(false)
        third.run(for: .milliseconds(10))
        #expect(third.proposals.last == .rate(0), "\(third.proposals)")
    }

    @Test func aPersonsSeekInMpvIsProposedAndPlaysOnUnansweredUntilTheGroupMovesIt() {
        var rig = Self.playing()
        rig.personSeeks(to: .seconds(12))
        rig.run(for: .milliseconds(60))
        // Where it landed: the frame at 12 s, taken back to when playback restarted.
        guard case .seek(let target)? = rig.proposals.first, rig.proposals.count == 1 else {
            Issue.record("proposals: \(rig.proposals)")
            return
        }
        #expect((target - .seconds(12)).magnitude < .milliseconds(1))
        #expect(rig.mpv.paused, "mpv stands on the person's seek for the group's answer")
        // Unanswered after `answerWait`: plays on from where the person put it.
        rig.run(for: .milliseconds(200))
        #expect(!rig.mpv.paused)
        // An older command meanwhile is stale.
        let sent = rig.mpv.received.count
        rig.command(Commands.play(.seconds(2), at: Self.t0 + .milliseconds(500), version: 1))
        rig.run(for: .milliseconds(100))
        #expect(!rig.mpv.received.dropFirst(sent).contains { if case .seek = $0.1 { true } else { false } })
        // The group's answer, half a second on: everyone, this mpv too, starts there then.
        let host = rig.now + .milliseconds(500)
        rig.command(Commands.play(.seconds(12), at: host, version: 2))
        rig.run(until: host + .seconds(2))
        #expect(rig.error(against: .seconds(12), at: host).magnitude <= .microseconds(500))
        #expect(rig.machine.statistics.userProposals == 1)
    }

    /// The relay's lead follows the slowest participant's round trip, up to a second on a busy
    /// machine: an answer heard at once but due far off lets mpv play on from the person's seek
    /// (stopped, it would show one frame all that time) until its start must begin.
    @Test func aPersonsSeekPlaysOnWhileTheGroupsAnswerIsFarOff() {
        var rig = Self.playing()
        rig.personSeeks(to: .seconds(12))
        rig.run(for: .milliseconds(60))
        #expect(rig.mpv.paused, "mpv stands on the person's seek for the group's answer")
        // The answer comes at once, due 0.9 s on.
        let host = rig.now + .milliseconds(900)
        rig.command(Commands.play(.seconds(12), at: host, version: 2))
        rig.run(for: .milliseconds(100))
        let first = rig.mpv.position(at: rig.now)
        #expect(!rig.mpv.paused)
        rig.run(for: .milliseconds(400))
        let second = rig.mpv.position(at: rig.now)
        #expect(first > .seconds(12) - .milliseconds(50), "mpv at \(first) after a seek to 12 s")
        #expect(second - first > .milliseconds(350), "mpv moved \(second - first) in 400 ms while the answer was due")
        // Once the answer is in force, mpv is on the group's timeline.
        rig.run(until: host + .seconds(2))
        #expect(rig.error(against: .seconds(12), at: host).magnitude <= .microseconds(500))
        #expect(rig.machine.statistics.userProposals == 1)
    }

    @Test func aRefusedSeekRejoinsTheGroupsTimeline() {
        var rig = Self.playing()
        rig.personSeeks(to: .seconds(12))
        rig.run(for: .milliseconds(60))
        rig.refuse(1)
        rig.run(for: .seconds(2))
        #expect(!rig.mpv.paused)
        #expect(rig.error(against: .seconds(2), at: Self.t0 + .milliseconds(500)).magnitude <= .microseconds(500))
        #expect(rig.machine.statistics.userProposals == 0)
    }

    @Test func buffersWhileTheGroupPlaysIsAStallSuspensionEndedWhenTheCacheIsBack() {
        var rig = Self.playing()
        rig.cache(waiting: true)
        rig.run(for: .milliseconds(10))
        #expect(rig.stalls == [true])
        #expect(rig.shown.last == ["Buffering: the group waits"])
        // No corrections of a buffering mpv, and no second suspension for the same stall.
        let measured = rig.machine.statistics.measurements
        rig.cache(waiting: true)
        rig.run(for: .seconds(1))
        #expect(rig.machine.statistics.measurements == measured)
        #expect(rig.stalls == [true])
        rig.cache(waiting: false)
        rig.run(for: .milliseconds(10))
        #expect(rig.stalls == [true, false])
        // The coordinator hands the group's timeline back a pre-roll ahead: mpv starts on it.
        let host = rig.now + .milliseconds(300)
        rig.command(Commands.play(.seconds(4), at: host, version: 2))
        rig.run(until: host + .seconds(2))
        #expect(rig.error(against: .seconds(4), at: host).magnitude <= .microseconds(500))
    }

    @Test func bufferingWhileTheGroupIsPausedSuspendsNothing() {
        var rig = MpvRig()
        rig.command(Commands.pause(.seconds(1), at: Self.t0, version: 1))
        rig.run(for: .milliseconds(100))
        rig.cache(waiting: true)
        rig.run(for: .milliseconds(100))
        #expect(rig.stalls.isEmpty)
    }

    @Test func strangeInputIsIgnoredAndNeverTraps() {
        var rig = Self.playing()
        let sent = rig.mpv.received.count
        // A reading nobody asked for, and one at the ends of time.
        rig.carryOut(rig.machine.onReading(999, MpvMachine.Reading(position: .distantFuture, at: .distantPast), now: rig.now))
        #expect(rig.mpv.received.count == sent)
        // Commands at the ends of time, at extreme rates, before the start: nothing traps.
        rig.command(Commands.play(.distantFuture, at: .distantPast, rate: 1, version: 2))
        rig.run(for: .milliseconds(100))
        rig.command(Commands.play(ItemTime(nanoseconds: -5_000_000_000), at: .distantFuture, rate: 1e300, version: 3))
        rig.run(for: .milliseconds(100))
        rig.command(Commands.pause(.distantPast, at: rig.now, version: 4))
        rig.run(for: .milliseconds(100))
        #expect(rig.mpv.paused)
        // A person's speed that is not a number, a key seeking by the largest span: within the item.
        rig.carryOut(rig.machine.onReport(.speed(.nan), now: rig.now))
        rig.press(.seek(by: TimeSpan(nanoseconds: .max)))
        if case .seek(let target)? = rig.proposals.last {
            #expect((ItemTime.zero...ItemTime.seconds(20)).contains(target), "\(target)")
        } else {
            Issue.record("no seek proposed: \(rig.proposals)")
        }
        // And the machine still follows a sane command afterwards.
        let host = rig.now + .milliseconds(400)
        rig.command(Commands.play(.seconds(3), at: host, version: 5))
        rig.run(until: host + .seconds(2))
        #expect(rig.error(against: .seconds(3), at: host).magnitude <= .microseconds(500))
    }

    @Test func startsWhereMpvHasNoAudioClockSeekOnToAFrameWithOne() {
        var mpv = ScriptedMpv()
        // No audio clock on the frames before 0.85 s, as on the sample clip's start.
        mpv.hasAudioClock = { $0 >= .milliseconds(850) }
        var rig = MpvRig(mpv: mpv)
        let host = Self.t0 + .milliseconds(500)
        rig.command(Commands.play(.milliseconds(700), at: host, version: 1))
        rig.run(until: host + .seconds(2))
        #expect(rig.machine.statistics.audioClockSkips >= 1)
        #expect(rig.machine.statistics.clocklessStarts == 0)
        #expect(rig.error(against: .milliseconds(700), at: host).magnitude <= .microseconds(500))
    }
}

extension TimePoint where Kind == ItemTimeKind {
    /// The media time `seconds` into the item.
    static func seconds(_ seconds: Double) -> ItemTime { .zero + .seconds(seconds) }
    /// The media time `milliseconds` into the item.
    static func milliseconds(_ milliseconds: Int64) -> ItemTime { .zero + .milliseconds(milliseconds) }
}
