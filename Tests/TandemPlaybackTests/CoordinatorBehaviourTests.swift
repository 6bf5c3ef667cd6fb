import Foundation
import Synchronization
import Testing
import Tandem
import TandemClock
import TandemMedia
import TandemNet
import TandemPlayback
import TandemTestKit

/// The coordinator through the real session stack on the in-memory relay: late joiners,
/// waiting for a stalled participant, stale commands, and a participant dropping out.
@Suite(.serialized) struct CoordinatorBehaviourTests {
    /// A delegate that records every command and carries none out, for checking what is issued.
    final class CommandLog: PlaybackCoordinatorDelegate, @unchecked Sendable {
        let commands = Mutex<[PlaybackCommand]>([])
        let item: String?
        init(item: String?) { self.item = item }
        var currentItemIdentifier: String? { item }
        func playbackCoordinator(_ coordinator: PlaybackCoordinator, didIssue command: PlaybackCommand,
                                 completion: @escaping @Sendable () -> Void) {
            commands.withLock { $0.append(command) }
            completion()
        }
        var all: [PlaybackCommand] { commands.withLock { $0 } }
    }

    struct Member {
        let session: GroupSession<WatchTogether>
        let coordinator: PlaybackCoordinator
        /// Held here: the coordinator holds its delegate weakly.
        let delegate: any PlaybackCoordinatorDelegate
        /// The delegate, when it is a `CommandLog`.
        var log: CommandLog? { delegate as? CommandLog }
    }

    /// Joins `name` to the session of `invitation` (or starts one) with a coordinator.
    static func member(_ name: String, relay: TestRelay, invitation: Invitation?, delegate: any PlaybackCoordinatorDelegate,
                       coordinator: PlaybackCoordinator? = nil) async throws -> Member {
        let center = ActivityCenter()
        center.displayName = name
        center.configure(relay: relay.connector, host: relay.host, port: relay.port, sessionClock: .derived(from: SystemClock()))
        var sessions = center.sessions(for: WatchTogether.self).makeAsyncIterator()
        if let invitation {
            try await center.accept(invitation)
        } else {
            try await center.start(WatchTogether(item: "film"))
        }
        let session = try #require(await sessions.next())
        session.join()
        #expect(await eventually { if case .joined = session.state { true } else { false } })
        let coordinator = coordinator ?? PlaybackCoordinator(delegate: delegate)
        coordinator.coordinateWithSession(session)
        return Member(session: session, coordinator: coordinator, delegate: delegate)
    }

    /// A host and Ana, both playing at rate 1.
    static func playingPair(relay: TestRelay) async throws -> (host: Member, ana: Member) {
        let host = try await member("host", relay: relay, invitation: nil, delegate: CommandLog(item: "film"))
        let ana = try await member("ana", relay: relay, invitation: host.session.invitation, delegate: CommandLog(item: "film"))
        try host.coordinator.coordinateRateChange(to: 1)
        #expect(await eventually { ana.coordinator.timeline.rate == 1 })
        return (host, ana)
    }

    @Test func lateJoinerAdoptsTheTimelineAndComesInOnTime() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let hostLog = CommandLog(item: "film")
        let host = try await Self.member("host", relay: relay, invitation: nil, delegate: hostLog)
        try host.coordinator.transitionToItem(identifier: "film")
        try host.coordinator.coordinateRateChange(to: 1)
        try host.coordinator.coordinateSeek(to: 30_000_000_000)
        #expect(await eventually { host.coordinator.timeline.version >= 3 })
        try await Task.sleep(for: .milliseconds(300))

        // Ana comes late: she replays the history and is told where to be a pre-roll ahead.
        let hostCommandsBefore = hostLog.all.count
        let anaLog = CommandLog(item: "film")
        let ana = try await Self.member("ana", relay: relay, invitation: host.session.invitation, delegate: anaLog)
        #expect(await eventually { ana.coordinator.timeline == host.coordinator.timeline })
        // A late join is a jump: a seek, then the play once the seek completes.
        #expect(await eventually { if case .play = anaLog.all.last { true } else { false } })
        guard case .play(let play) = anaLog.all.last else {
            Issue.record("the late joiner was not told to play: \(anaLog.all)")
            return
        }
        let now = hostNS(SystemClock().now())
        // In the future (to pre-roll), on the shared timeline, at the group's rate.
        #expect(play.hostTime > now)
        #expect(play.hostTime < now + .seconds(1))
        let timeline = host.coordinator.timeline
        #expect((play.itemTime - timeline.mediaTime(atSessionTime: sessionNS(play.hostTime.nanoseconds))).magnitude < .microseconds(1))
        #expect(play.rate == 1)
        // Nobody else was paused or moved by the join.
        #expect(hostLog.all.dropFirst(hostCommandsBefore).allSatisfy { if case .play = $0 { true } else { false } })
    }

    @Test func groupWaitsForAStalledParticipantAndResumesTogether() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let (host, ana) = try await Self.playingPair(relay: relay)
        let events = host.coordinator.events
        let stall = ana.coordinator.beginSuspension(for: .stallRecovery)
        #expect(await eventually { host.coordinator.timeline.rate == 0 && ana.coordinator.timeline.rate == 0 })
        #expect(host.coordinator.core.isWaiting)
        stall.end()
        #expect(await eventually { host.coordinator.timeline.rate == 1 && ana.coordinator.timeline.rate == 1 })
        #expect(host.coordinator.timeline == ana.coordinator.timeline)
        var iterator = events.makeAsyncIterator()
        var kinds: [String] = []
        while kinds.count < 2, let event = await iterator.next() {
            switch event {
            case .groupWaiting: kinds.append("waiting")
            case .groupResumed(_, let originator): kinds.append(originator == ana.session.localParticipant.id ? "resumed by ana" : "resumed")
            default: break
            }
        }
        #expect(kinds == ["waiting", "resumed by ana"])
    }

    @Test func aSuspensionThatDoesNotTriggerWaitingLetsTheGroupPlayOn() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let (host, ana) = try await Self.playingPair(relay: relay)
        _ = ana.coordinator.beginSuspension(for: .userActionRequired)
        #expect(await eventually { host.coordinator.core.suspensions.count == 1 })
        #expect(host.coordinator.timeline.rate == 1)
    }

    @Test func aSuspendedParticipantIsIssuedNoCommandsAndCatchesUpWhenItEnds() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let (host, ana) = try await Self.playingPair(relay: relay)
        let hostLog = try #require(host.log)
        let anaLog = try #require(ana.log)
        #expect(await eventually { !anaLog.all.isEmpty })
        // A stall the group does not wait for: the others play on.
        ana.coordinator.suspensionReasonsThatTriggerWaiting = []
        let stall = ana.coordinator.beginSuspension(for: .stallRecovery)
        #expect(ana.coordinator.isSuspended)
        #expect(!host.coordinator.isSuspended)
        let anaBefore = anaLog.all.count
        let hostBefore = hostLog.all.count
        // A change while suspended, and the re-issue of the playing timeline every second.
        try host.coordinator.coordinateSeek(to: 10_000_000_000)
        #expect(await eventually { ana.coordinator.timeline.anchorMediaTime == 10_000_000_000 })
        try await Task.sleep(for: .milliseconds(1_300))
        #expect(anaLog.all.count == anaBefore, "commands while suspended: \(anaLog.all.dropFirst(anaBefore))")
        #expect(hostLog.all.count >= hostBefore + 2)
        #expect(ana.coordinator.timeline.rate == 1)

        let timeline = ana.coordinator.timeline
        let ended = hostNS(SystemClock().now())
        stall.end()
        #expect(!ana.coordinator.isSuspended)
        // A seek to where the group is (the player stood still), then the play.
        func catchUp() -> PlayCommand? {
            anaLog.all.dropFirst(anaBefore).lazy.compactMap { if case .play(let play) = $0 { play } else { nil } }.first
        }
        #expect(await eventually { catchUp() != nil })
        if case .seek(let seek)? = anaLog.all.dropFirst(anaBefore).first {
            #expect(seek.shouldBufferInAnticipationOfPlayback && seek.anticipatedPlaybackRate == 1)
        } else {
            Issue.record("the catch-up does not begin with a seek: \(anaLog.all.dropFirst(anaBefore))")
        }
        guard let play = catchUp() else {
            Issue.record("the catch-up is not a play command: \(anaLog.all.dropFirst(anaBefore))")
            return
        }
        // The current timeline (or the next version, which only records that the suspension
        // ended), a pre-roll ahead, as for a late joiner.
        #expect(play.version >= timeline.version)
        #expect(play.hostTime >= ended + ana.coordinator.prerollLead)
        #expect(play.hostTime < ended + ana.coordinator.prerollLead + .milliseconds(200))
        #expect((play.itemTime - timeline.mediaTime(atSessionTime: sessionNS(play.hostTime.nanoseconds))).magnitude < .microseconds(1))
        // Ending it again proposes nothing.
        #expect(await eventually { host.coordinator.core.suspensions.isEmpty })
        let version = host.coordinator.timeline.version
        stall.end()
        try await Task.sleep(for: .milliseconds(200))
        #expect(host.coordinator.timeline.version == version)
    }

    @Test func aStalledParticipantTheGroupWaitsForIsDrivenAgainWhenItEnds() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let (host, ana) = try await Self.playingPair(relay: relay)
        let hostLog = try #require(host.log)
        let anaLog = try #require(ana.log)
        #expect(await eventually { !anaLog.all.isEmpty })
        let anaBefore = anaLog.all.count
        let stall = ana.coordinator.beginSuspension(for: .stallRecovery)
        // The group waits: the host is told to pause; Ana, who is suspended, is told nothing.
        #expect(await eventually { ana.coordinator.timeline.rate == 0 && host.coordinator.timeline.rate == 0 })
        let waiting = host.coordinator.timeline.version
        // The group waits in anticipation of playback: a pause that says so, then a buffering
        // command, as Apple's coordinator issues them.
        #expect(await eventually { if case .buffer(let buffer) = hostLog.all.last { buffer.version == waiting } else { false } })
        let pause = hostLog.all.reversed().lazy.compactMap { if case .pause(let pause) = $0 { pause } else { nil } }.first
        #expect(pause?.version == waiting && pause?.shouldBufferInAnticipationOfPlayback == true && pause?.anticipatedPlaybackRate == 1)
        if case .buffer(let buffer) = hostLog.all.last { #expect(buffer.anticipatedPlaybackRate == 1) }
        try await Task.sleep(for: .milliseconds(300))
        #expect(anaLog.all.count == anaBefore)

        stall.end()
        #expect(await eventually { host.coordinator.timeline.rate == 1 && ana.coordinator.timeline.rate == 1 })
        let resumed = ana.coordinator.timeline.version
        #expect(resumed > waiting)
        #expect(await eventually { if case .play(let play) = anaLog.all.last { play.version == resumed } else { false } })
        // Only the catch-up (for the timeline current when the suspension ended) and the resumption.
        #expect(anaLog.all.dropFirst(anaBefore).allSatisfy { $0.version >= waiting })
    }

    @Test func participantDroppingOutMidSuspensionReleasesTheGroup() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let (host, ana) = try await Self.playingPair(relay: relay)
        _ = ana.coordinator.beginSuspension(for: .stallRecovery)
        #expect(await eventually { host.coordinator.timeline.rate == 0 })
        // Ana leaves while holding everyone up: the host notices, and playback goes on.
        ana.session.leave()
        #expect(await eventually { host.coordinator.timeline.rate == 1 })
        #expect(host.coordinator.core.suspensions.isEmpty)
    }

    @Test func staleCommandsForAnotherItemAreCompletedNotApplied() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let clip = SampleClip.h264
        let player = try HeadlessPlayer(url: clip.path)
        let host = try await Self.member("host", relay: relay, invitation: nil, delegate: CommandLog(item: nil),
                                         coordinator: player.playbackCoordinator)
        // The group moves to an item this player does not have: its commands are stale here.
        try host.coordinator.transitionToItem(identifier: "another-film.mkv")
        try host.coordinator.coordinateRateChange(to: 1)
        #expect(await eventually { host.coordinator.lastCommand?.version == 2 })
        try await Task.sleep(for: .milliseconds(300))
        #expect(player.timeline.rate == 0)
        #expect(player.statistics.presentedFrames == 0)
        // Back on this player's item, it plays.
        try host.coordinator.transitionToItem(identifier: clip.name)
        try host.coordinator.coordinateRateChange(to: 1)
        #expect(await eventually { player.statistics.presentedFrames > 5 })
        player.close()
    }

    @Test func mismatchedContentIsReportedToEveryone() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let host = try await Self.member("host", relay: relay, invitation: nil, delegate: CommandLog(item: "film"))
        let ana = try await Self.member("ana", relay: relay, invitation: host.session.invitation, delegate: CommandLog(item: "film"))
        let events = ana.coordinator.events
        try host.coordinator.transitionToItem(identifier: "film")
        try host.coordinator.reportItem("film", identity: try MediaIdentity.of(file: SampleClip.h264.path), ready: true)
        try ana.coordinator.reportItem("film", identity: try MediaIdentity.of(file: SampleClip.vp9.path), ready: true)
        var iterator = events.makeAsyncIterator()
        var mismatch: [UUID: String]?
        while mismatch == nil, let event = await iterator.next() {
            if case .itemMismatch(let item, let identities) = event, item == "film" { mismatch = identities }
        }
        #expect(mismatch?.count == 2)
        #expect(Set(mismatch?.values.map { $0 } ?? []).count == 2)
    }
}
