/// One axis of a chart: its title, whether it is linear or logarithmic, and optionally a fixed
/// range (otherwise the data's, widened to round ticks).
public struct ChartAxis: Sendable, Equatable {
    /// How values map to positions along an axis.
    public enum Scale: Sendable, Equatable {
        /// Equal differences, equal distances; ticks at round steps.
        case linear
        /// Equal ratios, equal distances; ticks at the decades (0.01, 0.1, 1, 10, …). Values at
        /// or below zero are drawn at the axis floor.
        case logarithmic
    }

    /// What the axis measures, with its unit.
    public var title: String
    /// Linear or logarithmic.
    public var scale: Scale
    /// A range to show whatever the data (`0...100` for a percentage); nil to fit the data.
    public var range: ClosedRange<Double>?

    /// An axis titled `title`.
    public init(title: String, scale: Scale = .linear, range: ClosedRange<Double>? = nil) {
        self.title = title
        self.scale = scale
        self.range = range
    }
}
