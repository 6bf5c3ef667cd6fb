import Synchronization
import TandemClock
import TandemMedia
import TandemMpv
import TandemParty
import TandemPlayback

/// The benchmarks' baseline, "apply on receipt", driving a player from outside: its own
/// coordinator (`coordinator`, the session's commands) is the delegate path any program has, and
/// each command is carried out when it arrives on the player's own, uncoordinated transport
/// (`ImmediateTransport`), as `ReceiptFollower` decides. The player's own coordinator never joins
/// the session: the player knows only the coordinator's way.
///
/// ```swift
/// let follower = OnReceiptFollower(player: player)
/// follower.coordinator.coordinateWithSession(session)   // player follows on receipt
/// ```
/// Keep the follower for as long as it follows (the coordinator holds its delegate weakly).
public final class OnReceiptFollower: PlaybackCoordinatorDelegate, WatchPartyFollowing, Sendable {
    /// The coordinator to join to the session and propose through.
    public let coordinator: PlaybackCoordinator
    private weak let player: (any ImmediateTransport)?
    private let core = Mutex(ReceiptFollower())
    private let jobs: AsyncStream<Job>.Continuation

    /// A directive, in order.
    private struct Job: Sendable {
        var directive: ReceiptFollower.Directive
        var clock: (any MonotonicDerivedClock)?
    }

    /// A follower of `player`, with a coordinator of its own (not yet coordinating).
    public init(player: any ImmediateTransport) {
        self.player = player
        coordinator = PlaybackCoordinator()
        let (stream, continuation) = AsyncStream.makeStream(of: Job.self)
        jobs = continuation
        // One at a time, in order: mpv's transport is asynchronous. The task holds the player
        // weakly and ends when the follower goes (the stream finishes).
        Task { [weak player] in
            for await job in stream {
                await player?.applyNow(job.directive, clock: job.clock)
            }
        }
        coordinator.delegate = self
        player.drivenBy(coordinator)
    }

    deinit {
        jobs.finish()
    }

    /// The player's current item (`PlaybackCoordinatorDelegate`).
    public var currentItemIdentifier: String? { player?.currentItemIdentifier }

    /// The player's current item's identity (`PlaybackCoordinatorDelegate`).
    public var currentItemIdentity: String? { player?.currentItemIdentity }

    /// Decides about `command` at once (`ReceiptFollower`), queues what is to be done and
    /// completes the command: the baseline never makes the coordinator wait.
    public func playbackCoordinator(_ coordinator: PlaybackCoordinator, didIssue command: PlaybackCommand,
                                    completion: @escaping @Sendable () -> Void) {
        defer { completion() }
        guard let player else { return }
        let paused = player.isPausedNow, item = player.currentItemIdentifier
        let directive = core.withLock { $0.receive(command, now: HostInstant.now().nanoseconds, paused: paused, currentItem: item) }
        if let directive { jobs.yield(Job(directive: directive, clock: coordinator.localClock)) }
    }
}

/// `--follow on-receipt` for a watch party (`WatchParty.Configuration.follower`).
public struct OnReceipt: WatchPartyFollower {
    /// The baseline's name, as `--follow` takes it.
    public var name: String { "on-receipt" }

    /// The baseline.
    public init() {}

    /// Follows on receipt with the built-in player.
    public func follow(_ player: HeadlessPlayer) -> any WatchPartyFollowing { OnReceiptFollower(player: player) }

    /// Follows on receipt with mpv.
    public func follow(_ player: MpvPlayer) -> any WatchPartyFollowing { OnReceiptFollower(player: player) }
}
