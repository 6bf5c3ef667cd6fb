import Foundation

/// A participant's suspension of coordinated playback (buffering, scrubbing, an interstitial),
/// from `PlaybackCoordinator.beginSuspension(for:)`. End it when the reason is gone.
public final class PlaybackSuspension: Sendable {
    /// Why playback is suspended.
    public let reason: SuspensionReason
    /// The suspension's identity.
    public let id: UUID
    private let finish: @Sendable (Int64?) -> Void

    init(reason: SuspensionReason, id: UUID, end finish: @escaping @Sendable (Int64?) -> Void) {
        self.reason = reason
        self.id = id
        self.finish = finish
    }

    /// Ends the suspension; if it held the group, playback resumes where the group paused. Only
    /// the first call (of either `end`) counts.
    public func end() { finish(nil) }

    /// Ends the suspension, proposing that the group resume at media time `time` (ns), taken
    /// within the item (0 to its duration) so that the end is never refused.
    public func end(proposingNewTime time: Int64) { finish(time) }
}
