import Foundation

/// Another participant as the coordinator sees it, as AVFoundation's
/// `AVCoordinatedPlaybackParticipant`: whether it is ready to play and why it is suspended
/// (`PlaybackCoordinator.otherParticipants`).
public struct CoordinatedPlaybackParticipant: Sendable, Hashable, Identifiable {
    /// The participant's identity (its `Participant.id`), as Apple's `identifier`.
    public let identifier: UUID
    /// The reasons of the suspensions it holds, in the order they began.
    public let suspensionReasons: [SuspensionReason]
    /// Whether it reported the group's item loaded and ready, and the play the group is about to
    /// start waits for no pre-roll of its.
    public let isReadyToPlay: Bool

    /// `identifier`, for `Identifiable`.
    public var id: UUID { identifier }
}
