import Foundation
import Synchronization
import Testing
import Tandem
import TandemClock
import TandemMedia
import TandemNet
import TandemPlayback
import TandemBench
import TandemTestKit

/// The benchmarking baseline against the coordinator's way: built-in players on the in-memory
/// relay, each with an injected clock, following the group `.onReceipt` (driven from outside by
/// an `OnReceiptFollower`) or `.scheduled` (the player's own coordinator). The
/// session clock is the raw monotonic clock, read exactly, so a change's effective instant and
/// the players' presentation instants are directly comparable.
@Suite(.serialized) struct OnReceiptFollowingIOTests {
    /// How a peer follows the group.
    enum TimelineFollowing: CaseIterable, Sendable {
        /// The player's own coordinator, each change at its effective instant.
        case scheduled
        /// The baseline, `OnReceiptFollower`.
        case onReceipt
    }

    struct Watching: GroupActivity {
        var clip: String
        var metadata: GroupActivityMetadata { GroupActivityMetadata() }
    }

    /// Each frame's scheduled and presented raw monotonic instants, by media time.
    final class Recorder: VideoSink {
        let frames = Mutex<[Int64: (scheduled: Int64, presented: Int64)]>([:])
        func present(_ frame: VideoFrame, _ presentation: Presentation) {
            guard !presentation.isStill else { return }
            frames.withLock { $0[frame.presentationTime] = (presentation.scheduled, presentation.presented) }
        }
    }

    struct Peer {
        let session: GroupSession<Watching>
        let player: HeadlessPlayer
        let recorder: Recorder
        /// The baseline driving the player, on receipt.
        let follower: OnReceiptFollower?
        var coordinator: PlaybackCoordinator { follower?.coordinator ?? player.playbackCoordinator }
    }

    static let clip = SampleClip.h264BFrames

    /// Starts (without `invitation`) or joins a session as `name`, on a clock `offset` ns off the
    /// raw one and drifting `drift` ppm, with a built-in player that follows as `following` says.
    static func peer(_ name: String, offset: Int64, drift: Double, relay: TestRelay, invitation: Invitation?,
                     following: TimelineFollowing) async throws -> Peer {
        let center = ActivityCenter()
        center.displayName = name
        center.localClock = SkewedClock(base: SystemClock(), offset: offset, driftPPM: drift)
        center.configure(relay: relay.connector, host: relay.host, port: relay.port, sessionClock: .derived(from: SystemClock()))
        var sessions = center.sessions(for: Watching.self).makeAsyncIterator()
        if let invitation {
            try await center.accept(invitation)
        } else {
            try await center.start(Watching(clip: clip.name))
        }
        let session = try #require(await sessions.next())
        session.join()
        #expect(await awaitValue(session.$state.values) { if case .joined = $0 { true } else { false } })
        let recorder = Recorder()
        let player = try HeadlessPlayer(url: clip.path, videoSinks: [recorder])
        let follower = following == .onReceipt ? OnReceiptFollower(player: player) : nil
        let peer = Peer(session: session, player: player, recorder: recorder, follower: follower)
        peer.coordinator.coordinateWithSession(session)
        return peer
    }

    /// A host and Ana, both following as `following`, playing the clip from its start.
    static func playingPair(relay: TestRelay, following: TimelineFollowing) async throws -> (host: Peer, ana: Peer) {
        let host = try await peer("host", offset: 3_700_000_000, drift: 80, relay: relay, invitation: nil, following: following)
        let ana = try await peer("ana", offset: -2_250_000_000, drift: -120, relay: relay, invitation: host.session.invitation,
                                 following: following)
        #expect(await awaitValue(ana.session.$activeParticipants.values) { $0.count == 2 })
        try host.coordinator.transitionToItem(identifier: clip.name)
        #expect(await awaitTimeline(of: ana.coordinator) { $0.item == clip.name })
        host.coordinator.coordinateRateChange(to: 1)
        #expect(await eventually { abs(host.player.timeline.rate - 1) < 0.001 && abs(ana.player.timeline.rate - 1) < 0.001 })
        return (host, ana)
    }

    /// Where the group's timeline is at raw monotonic instant `instant` (the session clock).
    static func groupPosition(_ coordinator: PlaybackCoordinator, at instant: Int64) -> Int64 {
        coordinator.timeline.mediaTime(atSessionTime: SessionInstant(nanoseconds: instant)).nanoseconds
    }

    @Test(arguments: TimelineFollowing.allCases)
    func aSeekLandsAtItsEffectiveInstantOrOnReceipt(following: TimelineFollowing) async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let (host, ana) = try await Self.playingPair(relay: relay, following: following)
        defer { [host, ana].forEach { $0.player.close() } }
        try await Task.sleep(for: .milliseconds(500))
        let target: Int64 = 2_000_000_000
        let before = host.coordinator.timeline.version
        ana.coordinator.coordinateSeek(to: ItemTime(nanoseconds: target))
        // The seek's timeline in force: once its pre-roll gate closed (the first version after
        // the seek is provisional, anchored at the gate's deadline; the completing one is earlier).
        let inForce = { @Sendable (coordinator: PlaybackCoordinator) -> SharedTimeline? in
            let core = coordinator.core
            return core.timeline.version > before && core.waiting.gate == nil ? core.timeline : nil
        }
        for peer in [host, ana] { #expect(await awaitTimeline(of: peer.coordinator) { _ in inForce(peer.coordinator) != nil }) }
        let seekTimeline = try #require(inForce(host.coordinator))
        let effective = seekTimeline.anchorSessionTime.nanoseconds
        #expect(seekTimeline.anchorMediaTime.nanoseconds == target)
        #expect(await eventually { [host, ana].allSatisfy { $0.recorder.frames.withLock { $0.keys.contains { $0 > target + 200_000_000 } } } })

        for peer in [host, ana] {
            // The instant the timeline gave the seek's target: the first frame from it, less the
            // media time from the target to that frame (frames after a seek can be dropped late).
            let frames = peer.recorder.frames.withLock { $0 }
            let first = try #require(frames.keys.filter { $0 >= target }.min())
            let anchor = frames[first]!.scheduled - (first - target)
            switch following {
            case .scheduled:
                #expect(abs(anchor - effective) < 1_000_000, "\(peer.session.localParticipant.displayName): \(anchor - effective) ns")
            case .onReceipt:
                // At receipt: before the effective instant, by up to the relay's lead.
                #expect(anchor < effective - 1_000_000, "\(peer.session.localParticipant.displayName): \(anchor - effective) ns")
                #expect(anchor > effective - RelayCoreConfiguration().maximumLead)
            }
        }
    }

    @Test(arguments: TimelineFollowing.allCases)
    func onReceiptAppliesEachVersionOnce(following: TimelineFollowing) async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let (host, ana) = try await Self.playingPair(relay: relay, following: following)
        defer { [host, ana].forEach { $0.player.close() } }
        let applied = ana.player.timeline
        // The coordinator re-issues the playing timeline every second: scheduled players take it
        // up again (re-anchored on the session clock's estimate), on-receipt ones ignore it.
        try await Task.sleep(for: .milliseconds(2_300))
        #expect(ana.coordinator.timeline.version == host.coordinator.timeline.version)
        switch following {
        case .scheduled: #expect(ana.player.timeline.anchorLocalTime != applied.anchorLocalTime)
        case .onReceipt: #expect(ana.player.timeline == applied)
        }
        // A new version is applied, once more.
        host.coordinator.coordinateRateChange(to: 0)
        #expect(await eventually { ana.player.timeline.rate == 0 })
    }

    @Test func aLateJoinerOnReceiptTakesUpThePositionTheOthersShow() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let host = try await Self.peer("host", offset: 3_700_000_000, drift: 80, relay: relay, invitation: nil, following: .onReceipt)
        defer { host.player.close() }
        try host.coordinator.transitionToItem(identifier: Self.clip.name)
        host.coordinator.coordinateRateChange(to: 1)
        #expect(await eventually { abs(host.player.timeline.rate - 1) < 0.001 })
        try await Task.sleep(for: .milliseconds(800))

        let joined = HostInstant.now().nanoseconds
        let ana = try await Self.peer("ana", offset: -2_250_000_000, drift: -120, relay: relay, invitation: host.session.invitation,
                                      following: .onReceipt)
        defer { ana.player.close() }
        #expect(await eventually { abs(ana.player.timeline.rate - 1) < 0.001 })
        let taken = ana.player.timeline
        // From the instant it arrived (not a pre-roll ahead, as scheduled), at the position the
        // group's timeline had then, at the group's rate.
        #expect(taken.anchorLocalTime > joined && taken.anchorLocalTime <= HostInstant.now().nanoseconds)
        // Where the host's player (on receipt too, so ahead of the shared timeline by the relay's
        // lead) shows it, not where the shared timeline is.
        let expected = host.player.mediaTime(atLocalTime: taken.anchorLocalTime)
        // The joiner, having seen no change of its own, takes the relay's shortest lead as the
        // others'; the host ran ahead by that lead less its own delivery delay: a few ms, more on
        // a loaded machine (5.4 ms seen in CI), and still far from the shared timeline, 30 ms behind.
        #expect(abs(taken.anchorMediaTime - expected) < 10_000_000, "\(taken.anchorMediaTime - expected) ns off the host")
        let shared = Self.groupPosition(host.coordinator, at: taken.anchorLocalTime)
        #expect(taken.anchorMediaTime - shared > 10_000_000, "on the shared timeline, not where the others are")
        // Well into the clip, not at its start.
        #expect(expected > 600_000_000)
        // At rate 1 of ana's own clock, 120 ppm slow: its drift is nobody's to correct.
        #expect(abs(taken.rate - (1 - 120e-6)) < 1e-9)
    }

    @Test func onReceiptCatchesUpAfterItsOwnSuspensionWhereTheOthersAre() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let (host, ana) = try await Self.playingPair(relay: relay, following: .onReceipt)
        defer { [host, ana].forEach { $0.player.close() } }
        // A stall the group does not wait for: Ana freezes while the others play on.
        ana.coordinator.suspensionReasonsThatTriggerWaiting = []
        let suspension = ana.coordinator.beginSuspension(for: .stallRecovery)
        let frozenAt = HostInstant.now().nanoseconds
        try ana.player.setTimeline(.paused(at: ana.player.mediaTime(atLocalTime: frozenAt), from: frozenAt))
        try await Task.sleep(for: .milliseconds(1_200))
        #expect(ana.player.timeline.rate == 0)
        #expect(abs(host.player.timeline.rate - 1) < 0.001)

        let ended = HostInstant.now().nanoseconds
        suspension.end()
        #expect(await eventually { abs(ana.player.timeline.rate - 1) < 0.001 })
        let taken = ana.player.timeline
        #expect(taken.anchorLocalTime > ended && taken.anchorLocalTime <= HostInstant.now().nanoseconds)
        // Where the host's player (on receipt too, so ahead of the shared timeline by the relay's
        // lead) shows it, not where the shared timeline is: within the host's own delivery delay,
        // as for a late joiner above (a few ms; 3.7 ms seen in a full run), and far from the
        // shared timeline, which the next check bounds.
        let expected = host.player.mediaTime(atLocalTime: taken.anchorLocalTime)
        #expect(abs(taken.anchorMediaTime - expected) < 10_000_000, "\(taken.anchorMediaTime - expected) ns off the host")
        let shared = Self.groupPosition(host.coordinator, at: taken.anchorLocalTime)
        #expect(taken.anchorMediaTime - shared > 10_000_000, "on the shared timeline, not where the others are")
        // The suspension's end is a record of its own: both coordinators reach the same version
        // once it has come back to each.
        #expect(await eventually { ana.coordinator.timeline == host.coordinator.timeline },
                "\(ana.coordinator.timeline) against \(host.coordinator.timeline)")
    }
}
