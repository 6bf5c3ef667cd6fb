import Foundation
import Testing
import TandemClock
import TandemTestKit
@testable import TandemPlayback

/// The group half of the coordinated transport (`CoordinatedTransportTests`, `MpvTransportTests`)
/// and of waiting out a stall (`StallSuspensionTests`), in virtual time: real `PlaybackCoordinator`
/// shells on their loop schedulers over the in-memory relay (`VirtualCoordinatedGroup`), their
/// clocks off the session clock by seconds and tens of ppm, each driving a scripted player. One
/// participant's change reaches every player at one session instant; a stalled participant makes
/// the group wait and its recovery resumes it; a late joiner comes in on the timeline. No
/// thread, sleep or poll: the real-time tests keep only what the players themselves do.
@Suite struct CoordinatedGroupTests {
    static let second: Int64 = 1_000_000_000

    /// A host on the session clock and a guest 7 s ahead running 40 ppm fast, both on the film.
    static func pair() throws -> (VirtualCoordinatedGroup, VirtualCoordinatedGroup.Member, VirtualCoordinatedGroup.Member) {
        let group = VirtualCoordinatedGroup()
        let host = try group.join("host")
        let ana = try group.join("ana", clockOffset: 7 * second, driftPPM: 40)
        group.run(for: 200)
        return (group, host, ana)
    }

    /// Whether every member's last play or pause is on the shared timeline, playing or paused as
    /// the group is, whatever its instant: a player catching up alone is told a start of its own
    /// (and keeps it when a record changes nothing it sees) while the others, playing already,
    /// are re-issued theirs.
    static func transportOnTimeline(_ members: [VirtualCoordinatedGroup.Member]) -> Bool {
        let timeline = members[0].coordinator.timeline
        return members.allSatisfy { member in
            switch member.player.lastTransport {
            case .play(let play)?:
                timeline.rate > 0 && abs((timeline.mediaTime(atSessionTime: member.sessionTime(atHost: play.hostTime)) - play.itemTime).nanoseconds) <= 1_000
            case .pause(let pause)?:
                timeline.rate == 0 && pause.itemTime == timeline.anchorMediaTime
            default: false
            }
        }
    }

    /// Whether every member's last play or pause is the same change at one session instant, on
    /// the shared timeline (to the nanosecond the drift's rounding allows).
    static func transportInStep(_ members: [VirtualCoordinatedGroup.Member]) -> Bool {
        let instants = members.compactMap { member -> (SessionInstant, ItemTime, Double)? in
            switch member.player.lastTransport {
            case .play(let play)?: (member.sessionTime(atHost: play.hostTime), play.itemTime, play.rate)
            case .pause(let pause)?: (member.sessionTime(atHost: pause.hostTime), pause.itemTime, 0)
            default: nil
            }
        }
        guard instants.count == members.count, let first = instants.first else { return false }
        let timeline = members[0].coordinator.timeline
        return instants.allSatisfy { instant in
            abs((instant.0 - first.0).nanoseconds) <= 1 && instant.1 == first.1
                && abs((timeline.mediaTime(atSessionTime: instant.0) - instant.1).nanoseconds) <= 1_000
                && (instant.2 == 0) == (first.2 == 0)
        }
    }

    @Test func oneParticipantsTransportMovesEveryPlayerAtOneSessionInstant() throws {
        let (group, host, ana) = try Self.pair()
        defer { group.shutdown() }
        let both = [host, ana]
        // The first report chose the item: the group is on the film, paused at its start.
        for member in both { #expect(member.coordinator.timeline.item == "film" && member.coordinator.timeline.rate == 0) }

        ana.coordinator.coordinateRateChange(to: 1)
        group.run(for: 300)
        #expect(both.allSatisfy { $0.coordinator.timeline.rate == 1 })
        #expect(host.coordinator.timeline == ana.coordinator.timeline)
        #expect(Self.transportInStep(both), "\(both.map { String(describing: $0.player.lastTransport) })")
        // The guest's command is in its own host time: 7 s ahead of the host's.
        let hostPlay = try #require(host.player.plays.last), anaPlay = try #require(ana.player.plays.last)
        #expect(abs((anaPlay.hostTime - hostPlay.hostTime).nanoseconds - 7 * Self.second) < Self.second / 100)
        // The guest's rate is in media seconds per second of its own clock: the drift enters there.
        #expect(anaPlay.rate < 1 && anaPlay.rate > 0.9999)

        host.coordinator.coordinateSeek(to: ItemTime(nanoseconds: 12 * Self.second))
        group.run(for: 300)
        #expect(both.allSatisfy { $0.coordinator.timeline.anchorMediaTime.nanoseconds == 12 * Self.second && $0.coordinator.timeline.rate == 1 })
        #expect(Self.transportInStep(both))

        host.coordinator.coordinateRateChange(to: 1.25)
        group.run(for: 300)
        #expect(both.allSatisfy { $0.coordinator.timeline.rate == 1.25 })
        #expect(Self.transportInStep(both))

        ana.coordinator.coordinateRateChange(to: 0)
        group.run(for: 300)
        #expect(both.allSatisfy { $0.coordinator.timeline.rate == 0 })
        guard case .pause(let hostPause)? = host.player.lastTransport, case .pause(let anaPause)? = ana.player.lastTransport else {
            Issue.record("not paused: \(String(describing: host.player.lastTransport)), \(String(describing: ana.player.lastTransport))")
            return
        }
        // Both on one frame: where the originator saw the timeline.
        #expect(hostPause.itemTime == anaPause.itemTime && hostPause.itemTime == host.coordinator.timeline.anchorMediaTime)

        // Bad input is refused before it reaches the group, which goes on.
        let version = host.coordinator.timeline.version
        #expect(throws: ProposalRejection.self) { try host.coordinator.proposeRateChange(to: .nan) }
        #expect(throws: ProposalRejection.self) { try ana.coordinator.proposeSeek(to: ItemTime(nanoseconds: 3_600 * Self.second)) }
        group.run(for: 100)
        #expect(host.coordinator.timeline.version == version)
        try host.coordinator.transitionToItem(identifier: "film", at: ItemTime(nanoseconds: 5 * Self.second))
        host.coordinator.coordinateRateChange(to: 1)
        group.run(for: 300)
        #expect(both.allSatisfy { $0.coordinator.timeline.rate == 1 && $0.coordinator.timeline.anchorMediaTime.nanoseconds == 5 * Self.second })
        #expect(Self.transportInStep(both))
        #expect(host.coordinator.core == ana.coordinator.core)
    }

    @Test func aStalledParticipantMakesTheGroupWaitAndItsRecoveryResumesIt() throws {
        let (group, host, ana) = try Self.pair()
        defer { group.shutdown() }
        host.coordinator.coordinateRateChange(to: 1)
        group.run(for: 300)
        #expect(Self.transportInStep([host, ana]))

        // What the built-in player does when it cannot present on time.
        let stall = ana.coordinator.beginSuspension(for: .stallRecovery)
        let anaIssued = ana.player.commands.count
        group.run(for: 200)
        for member in [host, ana] {
            #expect(member.coordinator.core.isWaiting)
            #expect(member.coordinator.timeline.rate == 0)
            #expect(member.coordinator.core.suspensions.map(\.reason) == [.stallRecovery])
            #expect(member.coordinator.core.suspensions.first?.participant == ana.id)
        }
        // The host's player waits; the stalled one is driven by nothing meanwhile.
        guard case .pause? = host.player.lastTransport else {
            Issue.record("the host's player was not paused: \(String(describing: host.player.lastTransport))")
            return
        }
        #expect(ana.player.commands.count == anaIssued)

        // Recovered: the group plays on together, from where it waited.
        let waitedAt = host.coordinator.timeline.anchorMediaTime
        stall.end()
        group.run(for: 400)
        for member in [host, ana] {
            #expect(!member.coordinator.core.isWaiting)
            #expect(member.coordinator.timeline.rate == 1)
            #expect(member.coordinator.timeline.anchorMediaTime == waitedAt)
        }
        #expect(ana.player.commands.count > anaIssued)
        #expect(Self.transportInStep([host, ana]), "\([host, ana].map { String(describing: $0.player.lastTransport) })")
        #expect(host.coordinator.core == ana.coordinator.core)
    }

    @Test func aSuspensionOfAReasonThatDoesNotTriggerWaitingLetsTheGroupPlayOn() throws {
        let (group, host, ana) = try Self.pair()
        defer { group.shutdown() }
        ana.coordinator.suspensionReasonsThatTriggerWaiting = []
        host.coordinator.coordinateRateChange(to: 1)
        group.run(for: 300)
        let stall = ana.coordinator.beginSuspension(for: .stallRecovery)
        group.run(for: 200)
        #expect(!host.coordinator.core.isWaiting && host.coordinator.timeline.rate == 1)
        #expect(host.coordinator.core.suspensions.map(\.participant) == [ana.id])
        stall.end()
        group.run(for: 300)
        #expect(host.coordinator.core.suspensions.isEmpty)
        // Ana catches up alone, on the group's timeline.
        #expect(Self.transportOnTimeline([host, ana]))
    }

    @Test func aSuspensionBegunNotHoldingTheGroupLetsItPlayOnWhateverTheReasons() throws {
        let (group, host, ana) = try Self.pair()
        defer { group.shutdown() }
        host.coordinator.coordinateRateChange(to: 1)
        group.run(for: 300)
        // `.coordinatedPlaybackNotPossible` triggers waiting by default; begun not holding, it does not.
        #expect(ana.coordinator.suspensionReasonsThatTriggerWaiting.contains(.coordinatedPlaybackNotPossible))
        let cannot = ana.coordinator.beginSuspension(for: .coordinatedPlaybackNotPossible, holdingGroup: false)
        group.run(for: 200)
        #expect(!host.coordinator.core.isWaiting && host.coordinator.timeline.rate == 1)
        #expect(host.coordinator.core.suspensions.map(\.participant) == [ana.id])
        // The setting others read is untouched.
        #expect(ana.coordinator.suspensionReasonsThatTriggerWaiting.contains(.coordinatedPlaybackNotPossible))
        cannot.end()
        group.run(for: 300)
        #expect(host.coordinator.core.suspensions.isEmpty)
        #expect(Self.transportOnTimeline([host, ana]))
    }

    @Test func aLateJoinerOnAnotherClockComesInOnTheTimelineAndEveryoneKeepsTheOrder() throws {
        let (group, host, ana) = try Self.pair()
        defer { group.shutdown() }
        host.coordinator.coordinateRateChange(to: 1)
        group.run(for: 300)
        // A storm of changes from both, interleaved: everyone applies them in the relay's order.
        for step in 0..<40 {
            let member = step.isMultiple(of: 2) ? host : ana
            member.coordinator.coordinateSeek(to: ItemTime(nanoseconds: Int64(step) * Self.second / 4))
            group.run(for: 2)
        }
        ana.coordinator.coordinateRateChange(to: 1)
        group.run(for: 400)
        #expect(host.coordinator.core == ana.coordinator.core)
        #expect(Self.transportInStep([host, ana]))

        let cleo = try group.join("cleo", clockOffset: -3 * Self.second, driftPPM: -25)
        group.run(for: 600)
        #expect(cleo.coordinator.core == host.coordinator.core)
        #expect(cleo.coordinator.timeline.rate == 1)
        let play = try #require(cleo.player.plays.last)
        // Told to be on the timeline a join lead ahead, in its own host time; the others, who
        // play already, go on (re-issued a pre-roll ahead, at another instant of the same timeline).
        let at = cleo.sessionTime(atHost: play.hostTime)
        #expect(abs((cleo.coordinator.timeline.mediaTime(atSessionTime: at) - play.itemTime).nanoseconds) <= 1_000)
        #expect(Self.transportOnTimeline([host, ana, cleo]))
    }
}

/// What a reader of the timeline sees of the pre-roll gate (`waitsForPreroll`, on in these groups),
/// shown in virtual time: a gated play publishes a provisional timeline anchored at the gate's
/// deadline (the play's ordering instant + 1 s), then, once everyone has pre-rolled, a later
/// version anchored at the gate's start, earlier than that deadline. A reader that takes each
/// published timeline as in force from its anchor finds the provisional one again after the
/// deadline: the bench's readers drop it (`ScenarioAnalysis.inForce`, `completing`), and the
/// article's tests take the completed play (`CoordinatingPlaybackArticleIOTests.completedPlay`).
@Suite struct PrerollGateTimelineTests {
    /// Apple's options to play at once (`.playImmediately`, `.resumeImmediately`) open no gate,
    /// with the gate on: the play takes effect at its effective instant, without waiting for a
    /// slow participant's pre-roll; the same requests without them wait for it.
    @Test func playImmediatelyAndResumeImmediatelyDoNotWaitForASlowPreroll() throws {
        let group = VirtualCoordinatedGroup()
        defer { group.shutdown() }
        let host = try group.join("host")
        let ana = try group.join("ana", completionDelay: .milliseconds(400))
        group.run(for: 200)
        #expect(host.coordinator.waitsForPreroll && ana.coordinator.waitsForPreroll)
        host.coordinator.coordinateRateChange(to: 1, options: .playImmediately)
        group.run(for: 100)
        let played = host.coordinator.timeline
        #expect(played.rate == 1 && host.coordinator.core.waiting.gate == nil)
        // In force already, a few tens of ms after it was asked for (a gated one: 1 s).
        #expect(played.anchorSessionTime <= host.sessionTime(atHost: host.scheduler.now))
        group.run(for: 1_000)
        #expect(host.coordinator.timeline == played, "no later version re-anchored it")
        #expect(ana.coordinator.timeline == played)

        ana.coordinator.coordinateSeek(to: .zero + .seconds(10), options: .resumeImmediately)
        group.run(for: 100)
        let resumed = host.coordinator.timeline
        #expect(resumed.anchorMediaTime == .zero + .seconds(10) && resumed.rate == 1 && host.coordinator.core.waiting.gate == nil)
        #expect(resumed.anchorSessionTime <= host.sessionTime(atHost: host.scheduler.now))

        // Without the option, the same seek waits for Ana's pre-roll (400 ms): a gate, and the
        // provisional anchor a second after the seek was ordered.
        ana.coordinator.coordinateSeek(to: .zero + .seconds(20))
        group.run(for: 100)
        let gate = try #require(host.coordinator.core.waiting.gate)
        #expect(gate.pending.contains(ana.id))
        #expect(host.coordinator.timeline.anchorSessionTime == gate.deadline)
        group.run(for: 1_000)
        #expect(host.coordinator.core.timeline.anchorSessionTime < gate.deadline, "started once Ana pre-rolled")
        #expect(host.coordinator.core == ana.coordinator.core)
    }

    @Test func aGatedPlayPublishesAProvisionalAnchorAtTheDeadlineThenTheStartBeforeIt() throws {
        let group = VirtualCoordinatedGroup()
        defer { group.shutdown() }
        let host = try group.join("host", waitsForPreroll: true)
        let ana = try group.join("ana", waitsForPreroll: true, completionDelay: .milliseconds(150))
        group.run(for: 200)
        host.coordinator.coordinateRateChange(to: 1)
        var published: [SharedTimeline] = []
        for _ in 0..<1_500 {
            group.run(for: 1)
            let timeline = host.coordinator.timeline
            if timeline.rate > 0, published.last != timeline { published.append(timeline) }
        }
        let provisional = try #require(published.first)
        let started = try #require(published.last)
        let gateDeadline = provisional.anchorSessionTime
        // Provisional: a second after the play was ordered (within the relay's lead of it).
        #expect(started.version > provisional.version)
        #expect(started.anchorSessionTime < gateDeadline)
        #expect((gateDeadline - started.anchorSessionTime) > .milliseconds(500))
        // Every player is issued the provisional play too, then the start's, which supersedes it
        // before its instant: the player starts at the start.
        for member in [host, ana] {
            let starts = member.player.plays.filter { $0.itemTime == .zero }.map { member.sessionTime(atHost: $0.hostTime) }
            #expect(starts.last == started.anchorSessionTime)
            #expect(starts.dropLast().allSatisfy { $0 == gateDeadline } && starts.count > 1, "\(starts), deadline \(gateDeadline)")
        }
        // A reader that keeps each version's anchor as in force from it takes the provisional
        // timeline for the one in force after its deadline: the bench's and the CLI's readers do.
        let byAnchor = published.filter { $0.anchorSessionTime <= gateDeadline + .milliseconds(1) }
            .max { $0.anchorSessionTime < $1.anchorSessionTime }
        #expect(byAnchor?.version == provisional.version)
    }
}
