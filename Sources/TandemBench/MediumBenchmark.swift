import Foundation
import Tandem
import TandemClock
import TandemMedia
import TandemMediaTypes
import TandemNet
import TandemPlayback
import Synchronization

/// Three built-in players in this process coordinated by a `PlaybackCoordinationMedium`, against
/// three players of one session on a relay on the loopback, in the same run: how far apart each
/// group presents the same frame, read back from their presentation logs.
///
/// Each run plays both groups in turn through one script (the group's item, a play, a seek back
/// to half a second, a pause), video only. The session's participants read the relay's clock
/// directly (`SessionClockSetting.derived`: the relay is in this process), so the session is
/// measured at its best, with no clock estimate's error; what is left is each group's ordering
/// and its players' own timing.
public struct MediumBenchmark: Sendable {
    /// One group's figures over every run.
    public struct Row: Sendable, Codable {
        /// How the three players were coordinated.
        public var group: String
        /// Frames every player of the group presented (their spreads' count).
        public var frames: Int
        /// Showings that some players of the group presented and others did not.
        public var unpaired: Int
        /// Max − min of the presented instants of each frame all three showed (ms).
        public var spreadMilliseconds: Percentiles?
    }

    /// The file to play (video is used; its sound is not decoded).
    public var file: String
    /// Runs; each plays both groups once.
    public var runs: Int
    /// Seconds of play before the seek, and again after it.
    public var seconds: Double

    /// A benchmark of `file`, `runs` runs each playing `seconds` s before and after the seek.
    public init(file: String, runs: Int, seconds: Double = 3) {
        self.file = file
        self.runs = max(1, runs)
        self.seconds = max(0.5, seconds)
    }

    /// Runs both groups `runs` times, the session first in each run, and reports each group.
    public func run() async throws -> [Row] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-bench-medium-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var rows = [Row(group: "session (relay on the loopback)", frames: 0, unpaired: 0),
                    Row(group: "coordination medium (no relay)", frames: 0, unpaired: 0)]
        var samples: [[Double]] = [[], []]
        for run in 0..<runs {
            for index in rows.indices {
                let prefix = directory.appendingPathComponent("run-\(run)-\(index)").path
                let spread = index == 0 ? try await sessionTrial(logs: prefix) : try await mediumTrial(logs: prefix)
                samples[index] += spread.presented
                rows[index].unpaired += spread.unpaired
            }
        }
        for index in rows.indices {
            rows[index].frames = samples[index].count
            rows[index].spreadMilliseconds = Percentiles(samples[index])
        }
        return rows
    }

    /// A failure of the benchmark's own setup, said in a line.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        public let description: String
    }

    private struct Screen {
        let player: HeadlessPlayer
        let log: PresentationLog
        let path: String
    }

    private func screens(logs prefix: String) throws -> [Screen] {
        try (0..<3).map { index in
            let path = "\(prefix)-\(index).jsonl"
            let log = try PresentationLog(path: path)
            var options = HeadlessPlayer.Options()
            options.decodeAudio = false
            return Screen(player: try HeadlessPlayer(item: PlaybackItem(file: file), options: options, videoSinks: [log]), log: log, path: path)
        }
    }

    private func mediumTrial(logs prefix: String) async throws -> SyncLogAnalysis.Spread {
        let screens = try screens(logs: prefix)
        let medium = PlaybackCoordinationMedium()
        for screen in screens { try screen.player.playbackCoordinator.coordinate(using: medium) }
        return try await script(screens)
    }

    private func sessionTrial(logs prefix: String) async throws -> SyncLogAnalysis.Spread {
        let server = try RelayServer(address: try SocketAddress(host: "127.0.0.1", port: 0))
        server.start()
        defer { server.stop() }
        var sessions: [GroupSession<MediumBenchActivity>] = []
        for index in 0..<3 {
            let center = ActivityCenter()
            center.displayName = "screen \(index)"
            center.configure(relay: NetworkRelayConnector(host: "127.0.0.1", port: server.port), host: "127.0.0.1", port: server.port,
                             sessionClock: .derived(from: SystemClock()))
            var incoming = center.sessions(for: MediumBenchActivity.self).makeAsyncIterator()
            if let first = sessions.first {
                _ = try await center.accept(first.invitation)
            } else {
                _ = try await center.start(MediumBenchActivity())
            }
            guard let session = await incoming.next() else { throw Failure(description: "screen \(index) got no session") }
            session.join()
            try await Self.within(10, "screen \(index) joins") {
                for await state in session.$state.values { if case .joined = state { return } }
            }
            sessions.append(session)
        }
        defer { for session in sessions { session.leave() } }
        let first = sessions[0]
        try await Self.within(10, "three participants") {
            for await participants in first.$activeParticipants.values where participants.count == 3 { return }
        }
        let screens = try screens(logs: prefix)
        for (screen, session) in zip(screens, sessions) { screen.player.playbackCoordinator.coordinateWithSession(session) }
        return try await script(screens)
    }

    /// The group's item, a play, a seek back to half a second, a pause; then the logs read back
    /// against the timeline's changes.
    private func script(_ screens: [Screen]) async throws -> SyncLogAnalysis.Spread {
        defer {
            for screen in screens {
                screen.player.close()
                screen.log.close()
            }
        }
        let coordinators = screens.map(\.player.playbackCoordinator)
        let changes = ChangeRecorder()
        // The first coordinator's changes are recorded by a child task for as long as the script runs.
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [coordinator = coordinators[0]] in await changes.record(coordinator) }
            defer { group.cancelAll() }
            try await play(screens, coordinators)
        }
        let peers = try screens.enumerated().map { index, screen in try SyncLogAnalysis.moving(log: screen.path, of: "screen \(index)") }
        return SyncLogAnalysis.spread(peers, changes: changes.instants)
    }

    /// The script itself: the item, a play, a seek back to half a second, a pause, each waited
    /// for on every coordinator; then the players closed.
    private func play(_ screens: [Screen], _ coordinators: [PlaybackCoordinator]) async throws {
        try screens[0].player.replaceCurrentItem(with: PlaybackItem(file: file))
        let item = PlaybackItem(file: file).identifier
        for coordinator in coordinators { try await Self.timeline(of: coordinator, "the item") { $0.item == item } }
        screens[0].player.play()
        for coordinator in coordinators { try await Self.timeline(of: coordinator, "play") { $0.rate == 1 } }
        try await Task.sleep(for: .seconds(seconds))
        screens[1].player.seek(to: ItemTime.zero + .milliseconds(500))
        for coordinator in coordinators {
            try await Self.timeline(of: coordinator, "seek") { $0.anchorMediaTime.nanoseconds == 500_000_000 && $0.rate == 1 }
        }
        try await Task.sleep(for: .seconds(seconds))
        screens[2].player.pause()
        for coordinator in coordinators { try await Self.timeline(of: coordinator, "pause") { $0.rate == 0 } }
        try await Task.sleep(for: .milliseconds(300))
        for screen in screens {
            screen.player.close()
            screen.log.close()
        }
    }

    /// The effective instants (raw monotonic ns) of a coordinator's timeline changes, as it
    /// publishes them.
    private final class ChangeRecorder: Sendable {
        private let seen = Mutex<Set<Int64>>([])

        /// Records `coordinator`'s changes until the calling task is cancelled.
        func record(_ coordinator: PlaybackCoordinator) async {
            for await timeline in coordinator.$timeline.values {
                guard let host = coordinator.hostTime(atSessionTime: timeline.anchorSessionTime) else { continue }
                _ = seen.withLock { $0.insert(host.nanoseconds) }
            }
        }

        var instants: [Int64] { seen.withLock { $0.sorted() } }
    }

    /// Runs `body`, failing after `seconds`.
    private static func within(_ seconds: Double, _ what: String, _ body: @escaping @Sendable () async -> Void) async throws {
        let finished = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                await body()
                return true
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return false
            }
            defer { group.cancelAll() }
            return try await group.next() ?? false
        }
        if !finished { throw Failure(description: "timed out: \(what)") }
    }

    private static func timeline(of coordinator: PlaybackCoordinator, _ what: String,
                                 _ predicate: @escaping @Sendable (SharedTimeline) -> Bool) async throws {
        try await within(10, what) {
            for await timeline in coordinator.$timeline.values where predicate(timeline) { return }
        }
    }
}

/// The activity of the benchmark's session: three screens watching one file.
struct MediumBenchActivity: GroupActivity {
    var metadata: GroupActivityMetadata { GroupActivityMetadata() }
}
