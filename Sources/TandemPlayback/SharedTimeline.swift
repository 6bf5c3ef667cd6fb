import TandemClock
import Foundation

/// The playback state every participant shares: which item, at what rate, and where in it at a
/// given session instant. `mediaTime(t) = anchorMediaTime + rate × (t − anchorSessionTime)`.
///
/// Each change is a proposal that the relay orders; every participant applies the same changes in
/// the same order at the same effective session instants, so all hold the same timeline.
public struct SharedTimeline: Sendable, Codable, Equatable, CustomStringConvertible {
    /// The item playing, as its identifier (nil before any is chosen).
    public var item: String?
    /// Media seconds per session second; 0 while paused or waiting.
    public var rate: Double
    /// The media time at `anchorSessionTime`, in nanoseconds.
    public var anchorMediaTime: Int64
    /// The session instant the timeline is anchored at (when its last change took effect), ns.
    public var anchorSessionTime: Int64
    /// How many changes have been applied: the relay's order number of the last one.
    public var version: UInt64

    /// A paused timeline at the start of no item.
    public static let initial = SharedTimeline(item: nil, rate: 0, anchorMediaTime: 0, anchorSessionTime: 0, version: 0)

    /// A timeline.
    public init(item: String?, rate: Double, anchorMediaTime: Int64, anchorSessionTime: Int64, version: UInt64) {
        self.item = item
        self.rate = rate
        self.anchorMediaTime = anchorMediaTime
        self.anchorSessionTime = anchorSessionTime
        self.version = version
    }

    /// The media time at session instant `sessionTime`. Saturates at the bounds of `Int64`
    /// rather than trapping, whatever the anchors and the rate (a NaN rate counts as paused).
    public func mediaTime(atSessionTime sessionTime: Int64) -> Int64 {
        anchorMediaTime.saturatingAdding(sessionTime.saturatingSubtracting(anchorSessionTime).saturatingScaled(by: rate))
    }

    /// The session instant at which media time `mediaTime` plays, or nil while paused.
    /// Saturates at the bounds of `Int64` rather than trapping.
    public func sessionTime(forMediaTime mediaTime: Int64) -> Int64? {
        guard rate > 0 else { return nil }
        return anchorSessionTime.saturatingAdding(mediaTime.saturatingSubtracting(anchorMediaTime).saturatingDivided(by: rate))
    }

    /// A line for people to read.
    public var description: String {
        String(format: "v%llu %@ rate %.2f at %.3f s (session %.3f s)", version, item ?? "no item", rate,
               Double(anchorMediaTime) / 1e9, Double(anchorSessionTime) / 1e9)
    }
}
