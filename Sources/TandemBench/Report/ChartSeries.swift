/// One line of a chart: a name for the legend, a colour and its points in drawing order.
public struct ChartSeries: Sendable, Equatable {
    /// What the legend calls it.
    public var name: String
    /// Its colour, as SVG takes it (`#1f77b4`).
    public var colour: String
    /// Its points, in the order the line joins them.
    public var points: [ChartPoint]

    /// A series named `name`.
    public init(name: String, colour: String, points: [ChartPoint]) {
        self.name = name
        self.colour = colour
        self.points = points
    }

    /// The empirical cumulative distribution of `values`: for each value, the percentage of
    /// values at or below it, as one line rising from left to right. Non-finite values are left out.
    public static func distribution(name: String, colour: String, values: [Double]) -> ChartSeries {
        let sorted = values.filter(\.isFinite).sorted()
        let count = Double(sorted.count)
        let points = sorted.enumerated().map { index, value in
            ChartPoint(x: value, y: 100 * Double(index + 1) / count)
        }
        return ChartSeries(name: name, colour: colour, points: points)
    }

    /// The series with at most `limit` points: the points are cut into `limit / 2` runs of
    /// consecutive points, and each run keeps only its lowest and its highest point, in their
    /// order, so a spike survives however many points surround it.
    public func decimated(to limit: Int) -> ChartSeries {
        guard points.count > limit, limit >= 2 else { return self }
        let buckets = limit / 2
        var kept: [ChartPoint] = []
        kept.reserveCapacity(buckets * 2)
        for bucket in 0..<buckets {
            let start = bucket * points.count / buckets
            let end = (bucket + 1) * points.count / buckets
            guard start < end else { continue }
            var lowest = start
            var highest = start
            for index in start..<end {
                if points[index].y < points[lowest].y { lowest = index }
                if points[index].y > points[highest].y { highest = index }
            }
            if lowest == highest {
                kept.append(points[lowest])
            } else {
                kept.append(points[Swift.min(lowest, highest)])
                kept.append(points[Swift.max(lowest, highest)])
            }
        }
        return ChartSeries(name: name, colour: colour, points: kept)
    }
}
