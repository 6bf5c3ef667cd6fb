/// A point of a chart in data units: `x` along the horizontal axis, `y` along the vertical one.
public struct ChartPoint: Sendable, Equatable {
    /// The horizontal value.
    public var x: Double
    /// The vertical value.
    public var y: Double

    /// The point (`x`, `y`).
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
}
