import TandemClock
import TandemPlayback

/// The mapping from host time to item time that a player follows:
/// `itemTime(t) = anchorItemTime + rate × (t − anchorHostTime)`.
///
/// The timeline is in force from `anchorHostTime` on; a timeline whose anchor lies in the
/// future is a change scheduled for that instant.
public struct PresentationTimeline: Sendable, Equatable, CustomStringConvertible {
    /// The slowest playing rate the player accepts.
    public static let minimumRate = 0.25
    /// The fastest playing rate the player accepts.
    public static let maximumRate = 4.0

    /// Media seconds per host second: 0 when paused, otherwise between 0.25 and 4.
    public var rate: Double
    /// The item time at `anchorHostTime`.
    public var anchorItemTime: ItemTime
    /// The host instant at which the timeline takes effect.
    public var anchorHostTime: HostInstant
    /// The group's timeline this one carries out, when it carries one out: the same for every
    /// participant, where `rate` and the anchors carry this participant's clock (and a change
    /// that reached it late is anchored where it picked it up). The sound's time stretch cuts
    /// its pieces from it, so that every participant plays the same ones.
    public var group: GroupAnchor?

    /// A group's timeline, as every participant has it.
    public struct GroupAnchor: Sendable, Equatable {
        /// The item time at the group's anchor.
        public var itemTime: ItemTime
        /// The group's rate, in the session's time.
        public var rate: Double

        /// The group's timeline anchored at `itemTime`, playing at `rate`.
        public init(itemTime: ItemTime, rate: Double) {
            self.itemTime = itemTime
            self.rate = rate
        }
    }

    /// A timeline that plays at `rate` from `anchorItemTime` at `anchorHostTime`.
    public init(rate: Double, anchorItemTime: ItemTime, anchorHostTime: HostInstant) {
        self.rate = rate
        self.anchorItemTime = anchorItemTime
        self.anchorHostTime = anchorHostTime
    }

    /// A timeline paused at `itemTime` from `hostTime` on.
    public static func paused(at itemTime: ItemTime, from hostTime: HostInstant) -> PresentationTimeline {
        PresentationTimeline(rate: 0, anchorItemTime: itemTime, anchorHostTime: hostTime)
    }

    /// Whether the rate is 0 or within the range the player supports.
    public var isValid: Bool {
        rate == 0 || (rate >= PresentationTimeline.minimumRate && rate <= PresentationTimeline.maximumRate)
    }

    /// The item time at host instant `hostTime`; saturates at the bounds of time rather than
    /// trapping.
    public func itemTime(atHostTime hostTime: HostInstant) -> ItemTime {
        anchorItemTime + (hostTime - anchorHostTime) * rate
    }

    /// The host instant at which item time `itemTime` plays, or nil while paused; saturates at
    /// the bounds of time rather than trapping.
    public func hostTime(forItemTime itemTime: ItemTime) -> HostInstant? {
        guard rate > 0 else { return nil }
        return anchorHostTime + (itemTime - anchorItemTime) / rate
    }

    /// The same item position, continuing at another rate from `hostTime` on.
    public func changingRate(to newRate: Double, at hostTime: HostInstant) -> PresentationTimeline {
        PresentationTimeline(rate: newRate, anchorItemTime: itemTime(atHostTime: hostTime), anchorHostTime: hostTime)
    }

    /// A line for people to read.
    public var description: String {
        "rate \(rate) from item \(anchorItemTime) at host \(anchorHostTime.nanoseconds) ns"
    }
}

extension PresentationTimeline {
    /// `anchorItemTime` in bare nanoseconds.
    @available(*, deprecated, renamed: "anchorItemTime", message: "read anchorItemTime, an ItemTime")
    public var anchorMediaTime: Int64 {
        get { anchorItemTime.nanoseconds }
        set { anchorItemTime = ItemTime(nanoseconds: newValue) }
    }

    /// `anchorHostTime` in bare nanoseconds.
    @available(*, deprecated, renamed: "anchorHostTime", message: "read anchorHostTime, a HostInstant")
    public var anchorLocalTime: Int64 {
        get { anchorHostTime.nanoseconds }
        set { anchorHostTime = HostInstant(nanoseconds: newValue) }
    }

    /// A timeline whose anchors are in bare nanoseconds of item and host time.
    @available(*, deprecated, message: "pass anchorItemTime: ItemTime and anchorHostTime: HostInstant")
    public init(rate: Double, anchorMediaTime: Int64, anchorLocalTime: Int64) {
        self.init(rate: rate, anchorItemTime: ItemTime(nanoseconds: anchorMediaTime),
                  anchorHostTime: HostInstant(nanoseconds: anchorLocalTime))
    }

    /// A timeline paused at item time `mediaTime` from host instant `localTime`, in bare
    /// nanoseconds.
    @available(*, deprecated, message: "pass an ItemTime and a HostInstant")
    public static func paused(at mediaTime: Int64, from localTime: Int64) -> PresentationTimeline {
        .paused(at: ItemTime(nanoseconds: mediaTime), from: HostInstant(nanoseconds: localTime))
    }

    /// `itemTime(atHostTime:)` in bare nanoseconds.
    @available(*, deprecated, renamed: "itemTime(atHostTime:)", message: "pass a HostInstant; the result is an ItemTime")
    public func mediaTime(atLocalTime localTime: Int64) -> Int64 {
        itemTime(atHostTime: HostInstant(nanoseconds: localTime)).nanoseconds
    }

    /// `hostTime(forItemTime:)` in bare nanoseconds.
    @available(*, deprecated, renamed: "hostTime(forItemTime:)", message: "pass an ItemTime; the result is a HostInstant")
    public func localTime(forMediaTime mediaTime: Int64) -> Int64? {
        hostTime(forItemTime: ItemTime(nanoseconds: mediaTime))?.nanoseconds
    }

    /// `changingRate(to:at:)` at a host instant in bare nanoseconds.
    @available(*, deprecated, message: "pass a HostInstant")
    public func changingRate(to newRate: Double, at localTime: Int64) -> PresentationTimeline {
        changingRate(to: newRate, at: HostInstant(nanoseconds: localTime))
    }
}

extension PresentationTimeline.GroupAnchor {
    /// The group's timeline anchored at item time `mediaTime`, in bare nanoseconds.
    @available(*, deprecated, message: "pass itemTime: ItemTime")
    public init(mediaTime: Int64, rate: Double) {
        self.init(itemTime: ItemTime(nanoseconds: mediaTime), rate: rate)
    }

    /// `itemTime` in bare nanoseconds.
    @available(*, deprecated, renamed: "itemTime")
    public var mediaTime: Int64 {
        get { itemTime.nanoseconds }
        set { itemTime = ItemTime(nanoseconds: newValue) }
    }
}
