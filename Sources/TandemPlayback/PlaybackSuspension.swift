import Foundation
import TandemClock

/// A participant's suspension of coordinated playback (buffering, scrubbing, an interstitial),
/// from `PlaybackCoordinator.beginSuspension(for:)`. End it when the reason is gone.
public final class PlaybackSuspension: Sendable {
    /// Why playback is suspended.
    public let reason: SuspensionReason
    /// The suspension's identity.
    public let id: UUID
    /// When it began, by the wall clock, as AVFoundation's `beginDate`: a label for people (how
    /// long someone has been buffering); the group's own instants are in its events.
    public let beginDate: Date
    private let finish: @Sendable (ItemTime?) -> Void

    init(reason: SuspensionReason, id: UUID, beginDate: Date, end finish: @escaping @Sendable (ItemTime?) -> Void) {
        self.reason = reason
        self.id = id
        self.beginDate = beginDate
        self.finish = finish
    }

    /// Ends the suspension; if it held the group, playback resumes where the group paused. Only
    /// the first call (of either `end`) counts.
    public func end() { finish(nil) }

    /// Ends the suspension, proposing that the group go on at media time `time`, taken within
    /// the item (0 to its duration) so that the end is never refused. The group moves there
    /// whether it waited or not, as AVFoundation's (scrubbing: a `.userIsChangingCurrentTime`
    /// suspension, then this).
    public func end(proposingNewTime time: ItemTime) { finish(time) }
}
