import TandemClock
import Foundation

/// The playback state every participant shares: which item, at what rate, and where in it at a
/// given session instant. `mediaTime(t) = anchorMediaTime + rate × (t − anchorSessionTime)`.
///
/// Each change is a proposal that the relay orders; every participant applies the same changes in
/// the same order at the same effective session instants, so all hold the same timeline. Its
/// instants are typed: media time is `ItemTime`, its anchor a `SessionInstant`, so that neither
/// can be taken for a host or a local instant. It encodes its instants as bare nanoseconds.
public struct SharedTimeline: Sendable, Codable, Equatable, CustomStringConvertible {
    /// The item playing, as its identifier (nil before any is chosen).
    public var item: String?
    /// Media seconds per session second; 0 while paused or waiting.
    public var rate: Double
    /// The media time at `anchorSessionTime`.
    public var anchorMediaTime: ItemTime
    /// The session instant the timeline is anchored at (when its last change took effect).
    public var anchorSessionTime: SessionInstant
    /// How many changes have been applied: the relay's order number of the last one.
    public var version: UInt64

    /// A paused timeline at the start of no item.
    public static let initial = SharedTimeline(item: nil, rate: 0, anchorMediaTime: .zero, anchorSessionTime: .zero, version: 0)

    /// A timeline.
    public init(item: String?, rate: Double, anchorMediaTime: ItemTime, anchorSessionTime: SessionInstant, version: UInt64) {
        self.item = item
        self.rate = rate
        self.anchorMediaTime = anchorMediaTime
        self.anchorSessionTime = anchorSessionTime
        self.version = version
    }

    /// The media time at session instant `sessionTime`. Saturates at the bounds of `Int64`
    /// rather than trapping, whatever the anchors and the rate (a NaN rate counts as paused).
    public func mediaTime(atSessionTime sessionTime: SessionInstant) -> ItemTime {
        anchorMediaTime + (sessionTime - anchorSessionTime) * rate
    }

    /// The session instant at which media time `mediaTime` plays, or nil while paused.
    /// Saturates at the bounds of `Int64` rather than trapping.
    public func sessionTime(forMediaTime mediaTime: ItemTime) -> SessionInstant? {
        guard rate > 0 else { return nil }
        return anchorSessionTime + (mediaTime - anchorMediaTime) / rate
    }

    /// A line for people to read.
    public var description: String {
        "v\(version) \(item ?? "no item") " + String(format: "rate %.2f at %.3f s (session %.3f s)", rate,
                                                       Double(anchorMediaTime.nanoseconds) / 1e9, Double(anchorSessionTime.nanoseconds) / 1e9)
    }
}
