import Foundation
import Testing
import TandemClock
import TandemNet
import TandemTestKit
@testable import TandemPlayback

/// The coordinator's group behaviour through the in-memory relay in virtual time (machines on a
/// `VirtualRelayWorld`, `MachinePeer`): what `CoordinatorBehaviourIOTests` checked in real time
/// with `eventually` polls and sleeps, now with neither. A late joiner, waiting for a stall and
/// resuming, a suspension that does not trigger waiting, a suspended participant driven by
/// nothing, the buffering in anticipation of playback, a departure mid-suspension.
@Suite struct WaitingBehaviourTests {
    static let ms: Int64 = 1_000_000

    /// Host and Ana, playing (past the pre-roll gate).
    static func playingPair(_ world: VirtualRelayWorld) throws -> (MachinePeer, MachinePeer) {
        let peers = try WaitingRelayTests.group(world, [20 * ms, 20 * ms])
        try peers[0].request(.rate(1, []))
        WaitingRelayTests.run(world, peers, for: 1_200 * ms)
        #expect(peers[1].core.timeline.rate == 1)
        #expect(peers[0].core.waiting.gate == nil)
        return (peers[0], peers[1])
    }

    @Test func aLateJoinerAdoptsTheTimelineAndComesInOnTime() throws {
        let world = VirtualRelayWorld()
        defer { world.shutdown() }
        let host = try WaitingRelayTests.group(world, [20 * Self.ms])[0]
        try host.request(.rate(1, []))
        WaitingRelayTests.run(world, [host], for: 100 * Self.ms)
        try host.request(.seek(itemNS(30_000_000_000), []))
        WaitingRelayTests.run(world, [host], for: 300 * Self.ms)
        #expect(host.core.timeline.version >= 4)
        let hostCommandsBefore = host.commands.count
        let ana = MachinePeer(try world.join("ana"), world: world)
        let joined = ana.now
        try ana.request(.report(item: "film", identity: WaitingRelayTests.identity, ready: true))
        WaitingRelayTests.run(world, [host, ana], for: 100 * Self.ms)
        #expect(ana.core == host.core)
        // In the future (to pre-roll), on the shared timeline, at the group's rate.
        let play = try #require(ana.lastPlay)
        #expect(play.hostTime > joined)
        #expect(play.hostTime < joined + .seconds(1))
        #expect(play.itemTime == host.core.timeline.mediaTime(atSessionTime: sessionNS(play.hostTime.nanoseconds)))
        #expect(play.rate == 1)
        // Nobody else was paused or moved by the join.
        #expect(host.commands.dropFirst(hostCommandsBefore).allSatisfy { if case .play = $0 { true } else { false } })
    }

    @Test func theGroupWaitsForAStalledParticipantAndResumesTogether() throws {
        let world = VirtualRelayWorld()
        defer { world.shutdown() }
        let (host, ana) = try Self.playingPair(world)
        let stall = UUID()
        ana.beginSuspension(stall, .stallRecovery)
        WaitingRelayTests.run(world, [host, ana], for: 100 * Self.ms)
        #expect(host.core.timeline.rate == 0 && ana.core.timeline.rate == 0)
        #expect(host.core.isWaiting)
        ana.endSuspension(stall)
        WaitingRelayTests.run(world, [host, ana], for: 1_200 * Self.ms)
        #expect(host.core.timeline.rate == 1 && ana.core.timeline.rate == 1)
        #expect(host.core == ana.core)
        let kinds = host.events.compactMap { event -> String? in
            switch event {
            case .groupWaiting: "waiting"
            case .groupResumed(_, let originator): originator == ana.id ? "resumed by ana" : "resumed"
            default: nil
            }
        }
        #expect(kinds == ["waiting", "resumed by ana"])
    }

    @Test func aSuspensionThatDoesNotTriggerWaitingLetsTheGroupPlayOn() throws {
        let world = VirtualRelayWorld()
        defer { world.shutdown() }
        let (host, ana) = try Self.playingPair(world)
        ana.beginSuspension(UUID(), .userActionRequired)
        WaitingRelayTests.run(world, [host, ana], for: 100 * Self.ms)
        #expect(host.core.suspensions.count == 1)
        #expect(!host.core.isWaiting)
        #expect(host.core.timeline.rate == 1)
    }

    @Test func aSuspendedParticipantIsIssuedNoCommandsAndCatchesUpWhenItEnds() throws {
        let world = VirtualRelayWorld()
        defer { world.shutdown() }
        let (host, ana) = try Self.playingPair(world)
        // A stall the group does not wait for: the others play on.
        ana.machine.configuration.suspensionReasonsThatTriggerWaiting = []
        let stall = UUID()
        ana.beginSuspension(stall, .stallRecovery)
        #expect(ana.machine.isSuspended)
        let anaBefore = ana.commands.count
        let hostBefore = host.commands.count
        // A change while suspended, and the re-issue of the playing timeline every second.
        try host.request(.seek(itemNS(10_000_000_000), []))
        WaitingRelayTests.run(world, [host, ana], for: 1_300 * Self.ms)
        #expect(ana.core.timeline.anchorMediaTime == itemNS(10_000_000_000))
        #expect(ana.commands.count == anaBefore, "commands while suspended: \(ana.commands.dropFirst(anaBefore))")
        #expect(host.commands.count >= hostBefore + 2)
        #expect(ana.core.timeline.rate == 1)

        let timeline = ana.core.timeline
        let ended = ana.now
        ana.endSuspension(stall)
        #expect(!ana.machine.isSuspended)
        // A seek to where the group is (the player stood still), then the play.
        guard case .seek(let seek)? = ana.commands.dropFirst(anaBefore).first else {
            Issue.record("the catch-up does not begin with a seek: \(ana.commands.dropFirst(anaBefore))")
            return
        }
        #expect(seek.shouldBufferInAnticipationOfPlayback && seek.anticipatedPlaybackRate == 1)
        WaitingRelayTests.run(world, [host, ana], for: 100 * Self.ms)
        let catchUp = ana.commands.dropFirst(anaBefore).lazy.compactMap { if case .play(let play) = $0 { play } else { nil } }.first
        let play = try #require(catchUp)
        // The current timeline, a pre-roll ahead, as for a late joiner.
        #expect(play.version >= timeline.version)
        #expect(play.hostTime >= ended + ana.machine.configuration.prerollLead)
        #expect(play.hostTime < ended + ana.machine.configuration.prerollLead + .milliseconds(200))
        #expect(play.itemTime == timeline.mediaTime(atSessionTime: sessionNS(play.hostTime.nanoseconds)))
        #expect(host.core.suspensions.isEmpty)
        // Ending it again proposes nothing.
        let version = host.core.timeline.version
        ana.endSuspension(stall)
        WaitingRelayTests.run(world, [host, ana], for: 200 * Self.ms)
        #expect(host.core.timeline.version == version)
    }

    @Test func aStalledParticipantTheGroupWaitsForIsDrivenAgainWhenItEnds() throws {
        let world = VirtualRelayWorld()
        defer { world.shutdown() }
        let (host, ana) = try Self.playingPair(world)
        let anaBefore = ana.commands.count
        let stall = UUID()
        ana.beginSuspension(stall, .stallRecovery)
        WaitingRelayTests.run(world, [host, ana], for: 300 * Self.ms)
        // The group waits: the host is told to pause; Ana, who is suspended, is told nothing.
        #expect(ana.core.timeline.rate == 0 && host.core.timeline.rate == 0)
        let waiting = host.core.timeline.version
        // In anticipation of playback: a pause that says so, then a buffering command, as
        // Apple's coordinator issues them.
        guard case .buffer(let buffer)? = host.commands.last else {
            Issue.record("the host was not told to buffer: \(host.commands.suffix(3))")
            return
        }
        #expect(buffer.version == waiting && buffer.anticipatedPlaybackRate == 1)
        let pause = host.commands.reversed().lazy.compactMap { if case .pause(let pause) = $0 { pause } else { nil } }.first
        #expect(pause?.version == waiting && pause?.shouldBufferInAnticipationOfPlayback == true && pause?.anticipatedPlaybackRate == 1)
        #expect(ana.commands.count == anaBefore)

        ana.endSuspension(stall)
        WaitingRelayTests.run(world, [host, ana], for: 1_200 * Self.ms)
        #expect(host.core.timeline.rate == 1 && ana.core.timeline.rate == 1)
        #expect(host.core.waiting.gate == nil)
        let resumed = ana.core.timeline.version
        #expect(resumed > waiting)
        #expect(ana.lastPlay?.version == resumed)
        #expect(ana.playsFollowTheTimeline && host.playsFollowTheTimeline)
        // Only the catch-up (for the timeline current when the suspension ended) and the resumption.
        #expect(ana.commands.dropFirst(anaBefore).allSatisfy { $0.version >= waiting })
    }

    @Test func aParticipantDroppingOutMidSuspensionReleasesTheGroup() throws {
        let world = VirtualRelayWorld()
        defer { world.shutdown() }
        let (host, ana) = try Self.playingPair(world)
        ana.beginSuspension(UUID(), .stallRecovery)
        WaitingRelayTests.run(world, [host, ana], for: 100 * Self.ms)
        #expect(host.core.timeline.rate == 0)
        // Ana leaves while holding everyone up: the host notices, and playback goes on.
        #expect(world.leave(ana.participant))
        WaitingRelayTests.run(world, [host], for: 200 * Self.ms)
        #expect(host.core.timeline.rate == 1)
        #expect(host.core.suspensions.isEmpty)
        #expect(!host.core.isWaiting)
    }
}
