import Foundation
import TandemClock

/// Whether a player is playing, paused, or waiting to play, as AVFoundation's
/// `AVPlayer.TimeControlStatus`; both of Tandem's players publish it (`timeControlStatus`).
public enum TimeControlStatus: Sendable, Hashable, CustomStringConvertible {
    /// Not asked to play.
    case paused
    /// Asked to play, and waiting: for the group (`WaitingReason.waitingForCoordinatedPlayback`)
    /// or for its own frames (`.toMinimizeStalls`); `reasonForWaitingToPlay` says which.
    case waitingToPlayAtSpecifiedRate
    /// Playing.
    case playing

    /// The status in a word or three.
    public var description: String {
        switch self {
        case .paused: "paused"
        case .waitingToPlayAtSpecifiedRate: "waiting to play"
        case .playing: "playing"
        }
    }
}

/// Why a player waits to play, as AVFoundation's `AVPlayer.WaitingReason`.
public struct WaitingReason: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The reason's name, as AVFoundation's constants are named.
    public let rawValue: String
    /// A reason named `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The group waits: a suspension holds it, or a play waits for the others' pre-roll, or this
    /// participant's own suspension keeps its player out of the group's timeline for now.
    public static let waitingForCoordinatedPlayback = WaitingReason(rawValue: "AVPlayerWaitingForCoordinatedPlaybackReason")
    /// The player has run out of frames to present on time and is catching up.
    public static let toMinimizeStalls = WaitingReason(rawValue: "AVPlayerWaitingToMinimizeStallsReason")

    /// The reason's name.
    public var description: String { rawValue }
}

extension PlaybackCoordinator {
    /// A player's time-control status and its reason for waiting, as AVFoundation derives them:
    /// coordinated, from the group (paused when the group is asked to pause; waiting for
    /// coordinated playback while the group waits, or while a play waits for pre-roll, or while
    /// this participant is suspended; waiting to minimize stalls while the player stalls);
    /// uncoordinated, from `playerRate` (the rate the player was last asked for) and `stalled`.
    public func timeControl(playerRate: Double, stalled: Bool) -> (status: TimeControlStatus, reason: WaitingReason?) {
        guard isCoordinating else {
            guard playerRate > 0 else { return (.paused, nil) }
            return stalled ? (.waitingToPlayAtSpecifiedRate, .toMinimizeStalls) : (.playing, nil)
        }
        // The group as it stands now: a hold released, or an item ended, since the last record.
        let now = localClock.flatMap { sessionTime(atLocalTime: $0.instant()) }
        let core = now.map { self.core(at: $0) } ?? self.core
        guard core.intendedRate > 0 else { return (.paused, nil) }
        if stalled { return (.waitingToPlayAtSpecifiedRate, .toMinimizeStalls) }
        if isSuspended || core.isWaiting || core.waiting.gate != nil || core.timeline.rate == 0 {
            return (.waitingToPlayAtSpecifiedRate, .waitingForCoordinatedPlayback)
        }
        return (.playing, nil)
    }
}
