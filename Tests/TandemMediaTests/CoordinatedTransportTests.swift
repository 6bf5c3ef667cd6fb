import Foundation
import Testing
import Tandem
import TandemClock
import TandemMedia
import TandemPlayback
import TandemTestKit
import TandemMediaTypes

/// The SharePlay pattern on the built-in player: after `coordinateWithSession(_:)`, its own
/// `play()`, `pause()`, `seek(to:)`, `setRate(_:)` and `replaceCurrentItem(with:)` go to the group
/// and reach every participant's player; the calls that name a local instant throw. Two real
/// players in a session on the in-memory relay; waits follow the coordinators' published
/// timelines and the players' presentations (no polling), each bounded in time.
@Suite(.serialized) struct CoordinatedTransportIOTests {
    struct Watching: GroupActivity {
        var clip: String
        var metadata: GroupActivityMetadata { GroupActivityMetadata() }
    }

    struct Peer {
        let session: GroupSession<Watching>
        let player: HeadlessPlayer
        let recorder: ItemRecorder
        var coordinator: PlaybackCoordinator { player.playbackCoordinator }
    }

    struct TimedOut: Error, CustomStringConvertible {
        let description: String
    }

    static let clip = SampleClip.h264BFrames

    /// Runs `body`, failing after `seconds`.
    static func within<T: Sendable>(_ seconds: Double, _ what: String, _ body: @escaping @Sendable () async -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { await body() }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else { throw TimedOut(description: "timed out: \(what)") }
            return value
        }
    }

    /// Waits until the coordinator's timeline satisfies `predicate`.
    static func timeline(of coordinator: PlaybackCoordinator, _ what: String,
                         _ predicate: @escaping @Sendable (SharedTimeline) -> Bool) async throws {
        try await within(10, what) {
            for await timeline in coordinator.$timeline.values where predicate(timeline) { return }
        }
    }

    static func peer(_ name: String, relay: TestRelay, invitation: Invitation?) async throws -> Peer {
        let center = ActivityCenter()
        center.displayName = name
        center.configure(relay: relay.connector, host: relay.host, port: relay.port, sessionClock: .derived(from: SystemClock()))
        var sessions = center.sessions(for: Watching.self).makeAsyncIterator()
        if let invitation {
            try await center.accept(invitation)
        } else {
            try await center.start(Watching(clip: clip.name))
        }
        let session = try #require(await sessions.next())
        session.join()
        try await within(10, "\(name) joins") {
            for await state in session.$state.values { if case .joined = state { return } }
        }
        let recorder = ItemRecorder()
        var options = HeadlessPlayer.Options()
        options.decodeAudio = false
        let player = try HeadlessPlayer(item: PlaybackItem(file: clip.path), options: options, videoSinks: [recorder])
        player.playbackCoordinator.coordinateWithSession(session)
        return Peer(session: session, player: player, recorder: recorder)
    }

    @Test func theSharePlayPatternDrivesEveryPlayer() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let host = try await Self.peer("host", relay: relay, invitation: nil)
        let ana = try await Self.peer("ana", relay: relay, invitation: host.session.invitation)
        defer { [host, ana].forEach { $0.player.close() } }
        try await Self.within(10, "both present") {
            for await participants in host.session.$activeParticipants.values where participants.count == 2 { return }
        }
        #expect(host.coordinator.isCoordinating)

        // The item, by the player's own replaceCurrentItem(with:).
        let item = PlaybackItem(file: Self.clip.path)
        try host.player.replaceCurrentItem(with: item)
        #expect(host.player.item(withIdentifier: Self.clip.name)?.identifier == Self.clip.name)
        for peer in [host, ana] {
            try await Self.timeline(of: peer.coordinator, "the item reaches \(peer.session.localParticipant)") { $0.item == Self.clip.name }
        }

        // play(): both players present frames playing.
        ana.player.play()
        for peer in [host, ana] {
            try await Self.timeline(of: peer.coordinator, "play") { $0.rate == 1 }
            #expect(peer.recorder.wait(timeout: 10) { $0.contains { !$0.presentation.isStill } }, "a player did not start")
        }

        // seek(to:): both present the target frame.
        let target = Self.clip.time(ofFrame: 60)
        host.player.seek(to: target)
        for peer in [host, ana] {
            try await Self.timeline(of: peer.coordinator, "seek") { $0.anchorMediaTime.nanoseconds == target }
            #expect(peer.recorder.wait(timeout: 10) { $0.contains { $0.number >= 60 } }, "a player did not seek")
        }

        // setRate(_:) and pause().
        try host.player.setRate(2)
        for peer in [host, ana] { try await Self.timeline(of: peer.coordinator, "rate 2") { $0.rate == 2 } }
        ana.player.pause()
        for peer in [host, ana] { try await Self.timeline(of: peer.coordinator, "pause") { $0.rate == 0 } }

        // Bad input is refused with a clear error, and the group goes on.
        let refused = #expect(throws: MediaError.self) { try host.player.setRate(.nan) }
        #expect(refused?.isProposalRefused == true, "\(String(describing: refused))")
        host.player.play()
        for peer in [host, ana] { try await Self.timeline(of: peer.coordinator, "play again") { $0.rate == 1 } }
    }

    @Test func callsThatNameALocalInstantThrowWhileCoordinated() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let host = try await Self.peer("host", relay: relay, invitation: nil)
        defer { host.player.close() }
        let at = HostInstant.now().nanoseconds + 100_000_000
        let calls: [(String, () throws(MediaError) -> Void)] = [
            ("play(at:)", { () throws(MediaError) in try host.player.play(at: at) }),
            ("pause(at:)", { () throws(MediaError) in try host.player.pause(at: at) }),
            ("setRate(_:at:)", { () throws(MediaError) in try host.player.setRate(2, at: at) }),
            ("seek(to:at:)", { () throws(MediaError) in try host.player.seek(to: 0, at: at) }),
        ]
        for (name, call) in calls {
            let error = #expect(throws: MediaError.self) { try call() }
            #expect(error?.isNotWhileCoordinated == true, "\(name): \(String(describing: error))")
            #expect(error?.description.contains(name) == true, "\(String(describing: error))")
        }
        // Nothing changed locally.
        #expect(host.player.timeline.rate == 0)
        // The low-level path stays open to the coordinator's delegate.
        try host.player.setTimeline(.paused(at: 0, from: HostInstant.now().nanoseconds))
    }

    @Test func anUncoordinatedPlayerTakesInstants() throws {
        let player = try HeadlessPlayer(item: PlaybackItem(file: Self.clip.path))
        defer { player.close() }
        #expect(!player.playbackCoordinator.isCoordinating)
        let at = HostInstant.now().nanoseconds + 1_000_000_000
        try player.play(rate: 2, at: at)
        #expect(player.timeline.rate == 2 && player.timeline.anchorLocalTime == at)
        try player.pause(at: at + 500_000_000)
        #expect(player.timeline.rate == 0 && player.timeline.anchorLocalTime == at + 500_000_000)
    }
}
