import Foundation
import Synchronization
import Testing
import Tandem
import TandemClock
import TandemMedia
import TandemNet
import TandemPlayback
import TandemTestKit

/// Real players on one shared timeline: three participants, each with its own injected clock
/// offset and drift, each presenting the same clip with the built-in player; a relay in memory
/// (session clock read exactly) and a real one on loopback (session clock probed over UDP).
@Suite(.serialized) struct CoordinatedPlayersIOTests {
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
    }

    static let clocks: [(name: String, offset: Int64, drift: Double)] = [
        ("host", 3_700_000_000, 80), ("ana", -2_250_000_000, -120), ("ben", 41_000_000_000, 35),
    ]

    @Test(arguments: TransportKind.allCases)
    func playPauseSeekAndRateLandTogether(transport: TransportKind) async throws {
        let relay = try TestRelay(transport)
        defer { relay.shutdown() }
        let clip = SampleClip.h264BFrames
        var peers: [Peer] = []
        var invitation: Invitation?
        for (index, setup) in Self.clocks.enumerated() {
            let center = ActivityCenter()
            center.displayName = setup.name
            center.localClock = SkewedClock(base: SystemClock(), offset: setup.offset, driftPPM: setup.drift)
            center.configure(relay: relay.connector, host: relay.host, port: relay.port,
                             sessionClock: transport == .inMemory ? .derived(from: SystemClock()) : .probe)
            var sessions = center.sessions(for: Watching.self).makeAsyncIterator()
            if index == 0 {
                try await center.start(Watching(clip: clip.name))
            } else {
                try await center.accept(try #require(invitation))
            }
            let session = try #require(await sessions.next())
            invitation = session.invitation
            session.join()
            #expect(await awaitValue(session.$state.values) { if case .joined = $0 { true } else { false } })
            let recorder = Recorder()
            let player = try HeadlessPlayer(url: clip.path, videoSinks: [recorder])
            player.playbackCoordinator.coordinateWithSession(session)
            peers.append(Peer(session: session, player: player, recorder: recorder))
        }
        for peer in peers { #expect(await awaitValue(peer.session.$activeParticipants.values) { $0.count == 3 }) }

        let host = peers[0].player.playbackCoordinator
        let ana = peers[1].player.playbackCoordinator
        try host.transitionToItem(identifier: clip.name)
        try await Task.sleep(for: .milliseconds(200))
        host.coordinateRateChange(to: 1)
        try await Task.sleep(for: .milliseconds(1200))
        ana.coordinateRateChange(to: 0)
        try await Task.sleep(for: .milliseconds(400))
        ana.coordinateSeek(to: 2_000_000_000)
        host.coordinateRateChange(to: 1.5)
        #expect(await eventually(15) { peers.allSatisfy { $0.player.hasEnded } })

        // Every coordinator holds the same timeline, version and all.
        let timelines = peers.map { $0.player.playbackCoordinator.timeline }
        #expect(Set(timelines.map(\.version)).count == 1)
        #expect(timelines.allSatisfy { $0 == timelines[0] })
        #expect(timelines[0].rate == 1.5)

        // The same frame was scheduled for the same true instant everywhere: exactly, up to
        // rounding, when the session clock is read directly; within the probe's error otherwise.
        let records = peers.map { $0.recorder.frames.withLock { $0 } }
        let common = records.dropFirst().reduce(Set(records[0].keys)) { $0.intersection($1.keys) }
        #expect(common.count > 60, "frames presented by all three: \(common.count)")
        var scheduledSpread: [Int64] = []
        var presentedSpread: [Int64] = []
        for pts in common {
            let scheduled = records.map { $0[pts]!.scheduled }
            let presented = records.map { $0[pts]!.presented }
            scheduledSpread.append(scheduled.max()! - scheduled.min()!)
            presentedSpread.append(presented.max()! - presented.min()!)
        }
        scheduledSpread.sort()
        presentedSpread.sort()
        let bound: Int64 = transport == .inMemory ? 20_000 : 2_000_000
        #expect(scheduledSpread[scheduledSpread.count / 2] <= bound, "median scheduled spread \(scheduledSpread[scheduledSpread.count / 2]) ns")
        // Presentation adds each machine's wake-up jitter: loosely bounded, measured by the benchmark.
        #expect(presentedSpread[presentedSpread.count / 2] < 10_000_000)
        // After the seek, frames from 2 s on were shown, at 1.5 times the speed from where the
        // rate change took effect: the seek waits for everyone's pre-roll (the gate), so the
        // rate change, ordered just after it, may take effect after the seek's first frames.
        let afterSeek = common.filter { $0 >= 2_000_000_000 }.sorted()
        #expect(afterSeek.count > 40)
        let atRate = afterSeek.filter { $0 >= timelines[0].anchorMediaTime.nanoseconds }
        if atRate.count > 2, let first = records[0][atRate[0]], let second = records[0][atRate[1]] {
            let step = second.scheduled - first.scheduled
            #expect(abs(Double(step) - 33_333_333 / 1.5) < 50_000, "frame step \(step) ns")
        }
        for peer in peers { peer.player.close() }
    }
}
