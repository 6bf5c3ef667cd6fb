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
@Suite(.serialized) struct CoordinatorBehaviourIOTests {
    /// A delegate that records every command and carries none out, for checking what is issued.
    final class CommandLog: PlaybackCoordinatorDelegate, @unchecked Sendable {
        let commands = Mutex<[PlaybackCommand]>([])
        /// Every command so far, published: a test awaits what it needs
        /// (`awaitValue(log.$issued.values)`) instead of polling.
        @Published private(set) var issued: [PlaybackCommand] = []
        let item: String?
        init(item: String?) { self.item = item }
        var currentItemIdentifier: String? { item }
        func playbackCoordinator(_ coordinator: PlaybackCoordinator, didIssue command: PlaybackCommand,
                                 completion: @escaping @Sendable () -> Void) {
            // Published under the lock, so that a later list never precedes an earlier one.
            commands.withLock { commands in
                commands.append(command)
                issued = commands
            }
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
        #expect(await awaitValue(session.$state.values) { if case .joined = $0 { true } else { false } })
        let coordinator = coordinator ?? PlaybackCoordinator(delegate: delegate)
        coordinator.coordinateWithSession(session)
        return Member(session: session, coordinator: coordinator, delegate: delegate)
    }

    // The late joiner, waiting for a stall and resuming, a suspension that does not trigger
    // waiting, a suspended participant driven by nothing, buffering in anticipation of playback
    // and a departure mid-suspension are the machine's: `WaitingBehaviourTests` runs them through
    // the in-memory relay in virtual time, without polls or sleeps.

    @Test func staleCommandsForAnotherItemAreCompletedNotApplied() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let clip = SampleClip.h264
        let player = try HeadlessPlayer(url: clip.path)
        let host = try await Self.member("host", relay: relay, invitation: nil, delegate: CommandLog(item: nil),
                                         coordinator: player.playbackCoordinator)
        // The group moves to an item this player does not have: its commands are stale here.
        try host.coordinator.transitionToItem(identifier: "another-film.mkv")
        host.coordinator.coordinateRateChange(to: 1)
        #expect(await eventually { host.coordinator.lastCommand?.version == 2 })
        try await Task.sleep(for: .milliseconds(300))
        #expect(player.timeline.rate == 0)
        #expect(player.statistics.presentedFrames == 0)
        // Back on this player's item, it plays.
        try host.coordinator.transitionToItem(identifier: clip.name)
        host.coordinator.coordinateRateChange(to: 1)
        #expect(await eventually { player.statistics.presentedFrames > 5 })
        player.close()
    }
}
