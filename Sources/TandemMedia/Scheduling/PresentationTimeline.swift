import TandemClock
import TandemPlayback

/// The mapping from local monotonic time to media time that a player follows:
/// `mediaTime(t) = anchorMediaTime + rate × (t − anchorLocalTime)`.
///
/// The timeline is in force from `anchorLocalTime` on; a timeline whose anchor lies in the
/// future is a change scheduled for that instant.
public struct PresentationTimeline: Sendable, Equatable, CustomStringConvertible {
    /// The slowest playing rate the player accepts.
    public static let minimumRate = 0.25
    /// The fastest playing rate the player accepts.
    public static let maximumRate = 4.0

    /// Media seconds per local second: 0 when paused, otherwise between 0.25 and 4.
    public var rate: Double
    /// The media time at `anchorLocalTime`, in nanoseconds.
    public var anchorMediaTime: Nanoseconds
    /// The local monotonic instant at which the timeline takes effect, in nanoseconds.
    public var anchorLocalTime: Nanoseconds
    /// The group's timeline this one carries out, when it carries one out: the same for every
    /// participant, where `rate` and the anchors carry this participant's clock (and a change
    /// that reached it late is anchored where it picked it up). The sound's time stretch cuts
    /// its pieces from it, so that every participant plays the same ones.
    public var group: GroupAnchor?

    /// A group's timeline, as every participant has it.
    public struct GroupAnchor: Sendable, Equatable {
        /// The media time at the group's anchor, in nanoseconds.
        public var mediaTime: Nanoseconds
        /// The group's rate, in the session's time.
        public var rate: Double

        /// The group's timeline anchored at `mediaTime`, playing at `rate`.
        public init(mediaTime: Nanoseconds, rate: Double) {
            self.mediaTime = mediaTime
            self.rate = rate
        }
    }

    /// A timeline that plays at `rate` from `anchorMediaTime` at `anchorLocalTime`.
    public init(rate: Double, anchorMediaTime: Nanoseconds, anchorLocalTime: Nanoseconds) {
        self.rate = rate
        self.anchorMediaTime = anchorMediaTime
        self.anchorLocalTime = anchorLocalTime
    }

    /// A timeline paused at `mediaTime` from `localTime` on.
    public static func paused(at mediaTime: Nanoseconds, from localTime: Nanoseconds) -> PresentationTimeline {
        PresentationTimeline(rate: 0, anchorMediaTime: mediaTime, anchorLocalTime: localTime)
    }

    /// Whether the rate is 0 or within the range the player supports.
    public var isValid: Bool {
        rate == 0 || (rate >= PresentationTimeline.minimumRate && rate <= PresentationTimeline.maximumRate)
    }

    /// The media time at local instant `localTime`; saturates at the bounds of `Int64` rather
    /// than trapping.
    public func mediaTime(atLocalTime localTime: Nanoseconds) -> Nanoseconds {
        anchorMediaTime.saturatingAdding(localTime.saturatingSubtracting(anchorLocalTime).saturatingScaled(by: rate))
    }

    /// The local instant at which media time `mediaTime` plays, or nil while paused; saturates
    /// at the bounds of `Int64` rather than trapping.
    public func localTime(forMediaTime mediaTime: Nanoseconds) -> Nanoseconds? {
        guard rate > 0 else { return nil }
        return anchorLocalTime.saturatingAdding(mediaTime.saturatingSubtracting(anchorMediaTime).saturatingDivided(by: rate))
    }

    /// The same media position, continuing at another rate from `localTime` on.
    public func changingRate(to newRate: Double, at localTime: Nanoseconds) -> PresentationTimeline {
        PresentationTimeline(rate: newRate, anchorMediaTime: mediaTime(atLocalTime: localTime), anchorLocalTime: localTime)
    }

    /// A line for people to read.
    public var description: String {
        "rate \(rate) from media \(MediaTime.seconds(anchorMediaTime)) s at local \(anchorLocalTime) ns"
    }
}
