/// Start or keep playing: be at `itemTime` at local instant `hostTime`, advancing at `rate`.
public struct PlayCommand: Sendable, Equatable {
    /// The item the coordinator expects the player to have; a player on another item completes
    /// the command without applying it.
    public var expectedCurrentItemIdentifier: String?
    /// Media seconds per second of the session clock.
    public var rate: Double
    /// The media time (ns) to be at, at `hostTime`.
    public var itemTime: Int64
    /// The instant (the participant's local clock, ns) at which `itemTime` should be playing.
    public var hostTime: Int64
    /// The timeline version the command carries out.
    public var version: UInt64
}

/// Pause at `itemTime`, from local instant `hostTime` on.
public struct PauseCommand: Sendable, Equatable {
    /// The item the coordinator expects the player to have.
    public var expectedCurrentItemIdentifier: String?
    /// The media time (ns) to show while paused.
    public var itemTime: Int64
    /// The instant (local clock, ns) at which the pause takes effect.
    public var hostTime: Int64
    /// The timeline version the command carries out.
    public var version: UInt64
}

/// Move to `itemTime` (while paused, or ahead of a play command).
public struct SeekCommand: Sendable, Equatable {
    /// The item the coordinator expects the player to have.
    public var expectedCurrentItemIdentifier: String?
    /// The media time (ns) to move to.
    public var itemTime: Int64
    /// Whether the player should buffer, since playback will resume soon.
    public var shouldBufferInAnticipationOfPlayback: Bool
    /// The timeline version the command carries out.
    public var version: UInt64
}

/// Get ready to play `itemTime` (decode ahead), for example while the group waits.
public struct BufferingCommand: Sendable, Equatable {
    /// The item the coordinator expects the player to have.
    public var expectedCurrentItemIdentifier: String?
    /// Where playback will resume (ns).
    public var itemTime: Int64
    /// The rate playback will resume at.
    public var anticipatedPlaybackRate: Double
    /// The timeline version the command belongs to.
    public var version: UInt64
}

/// A command from the coordinator to a player.
public enum PlaybackCommand: Sendable, Equatable {
    /// Play.
    case play(PlayCommand)
    /// Pause.
    case pause(PauseCommand)
    /// Seek.
    case seek(SeekCommand)
    /// Buffer.
    case buffer(BufferingCommand)

    /// The item the command expects.
    public var expectedCurrentItemIdentifier: String? {
        switch self {
        case .play(let command): command.expectedCurrentItemIdentifier
        case .pause(let command): command.expectedCurrentItemIdentifier
        case .seek(let command): command.expectedCurrentItemIdentifier
        case .buffer(let command): command.expectedCurrentItemIdentifier
        }
    }

    /// The timeline version it carries out.
    public var version: UInt64 {
        switch self {
        case .play(let command): command.version
        case .pause(let command): command.version
        case .seek(let command): command.version
        case .buffer(let command): command.version
        }
    }
}

/// A player that a `PlaybackCoordinator` drives, in the manner of
/// `AVPlaybackCoordinatorPlaybackControlDelegate`: each command comes with a completion that the
/// player must call once it has carried the command out (or decided not to, when the command
/// expects another item than the one it has: stale commands are completed, not applied).
public protocol PlaybackCoordinatorDelegate: AnyObject, Sendable {
    /// Carry out `command`, then call `completion`.
    func playbackCoordinator(_ coordinator: PlaybackCoordinator, didIssue command: PlaybackCommand,
                             completion: @escaping @Sendable () -> Void)
    /// The item the player has now (its identifier), to check commands against.
    var currentItemIdentifier: String? { get }
}
