import TandemClock

/// When each frame written to the sound output reaches it: a line "frame index → local
/// monotonic instant" fitted over the output's recent timing reports, robustly, rather than
/// trusting any one report.
///
/// Each report says that frame `frame` of the stream reaches the output at `instant` (for
/// PulseAudio: the read index, at the report's timestamp plus the sink's latency). A report is
/// exact when nothing is on its way between the stream and the sink; many are taken while a
/// block is, and then lie late, by amounts that vary from report to report, never early. So the
/// reports form a steady floor with a cloud above it, and the cloud's middle wanders as the
/// share of late reports changes: a line through the middle would move with it, and the sound
/// with the line. The fit follows the floor: a least-squares line over the last `capacity`
/// reports within `window`, refitted without the reports that lie more than four deviations
/// (and at least `outlierFloor`) off its median residual (a report delayed by milliseconds),
/// then refitted to the reports within `floorBand` of the residuals' `floorQuantile`, three
/// times (a low quantile rather than the lowest, so that an odd early report is not taken for
/// the floor).
/// While the reports span less than `minimumSpan`, the slope is the nominal frame period and
/// only the offset is fitted (at the same quantile). The slope is the output's frame period as
/// measured on the monotonic clock: a sound card's crystal drifts against it by tens of ppm.
/// Three reports in a row more than `discontinuity` off the line (an underrun, a server's
/// restart) start it again from them.
struct OutputTimingModel: Sendable {
    /// A timing report: frame `frame` reaches the output at `instant`.
    struct Report: Sendable, Equatable {
        var frame: Int64
        var instant: LocalInstant
    }

    /// The nominal frame period, in nanoseconds: 1/48000 s.
    static let nominalPeriod = 1e9 / Double(AudioChunk.sampleRate)

    var capacity = 64
    var window = TimeSpan.seconds(8)
    var minimumSpan = TimeSpan.milliseconds(200)
    var outlierFloor = TimeSpan.microseconds(5)
    /// The quantile of the residuals taken for the reports' floor.
    var floorQuantile = 0.05
    /// How far from the floor a report may lie and still be fitted to it.
    var floorBand = TimeSpan.microseconds(8)
    var discontinuity = TimeSpan.milliseconds(2)
    /// The largest departure of the fitted period from the nominal one, as a fraction.
    var maximumSkew = 0.002

    private(set) var reports: [Report] = []
    private var outliersInARow = 0
    /// The fitted line: the instant of frame `reference.frame` and the period.
    private(set) var line: (frame: Int64, instant: Double, period: Double)?
    /// The period of the last fit over reports spanning a second or more, where the next fit's
    /// search for the floor starts.
    private var fittedPeriod: Double?

    /// A model with no report yet.
    init() {}

    /// The measured frame period in nanoseconds (the nominal one before any fit).
    var framePeriod: Double { line?.period ?? OutputTimingModel.nominalPeriod }

    /// The instant at which frame `frame` reaches the output, if any report has come.
    func instant(ofFrame frame: Int64) -> LocalInstant? {
        guard let line else { return nil }
        let instant = line.instant + Double(frame - line.frame) * line.period
        return LocalInstant(nanoseconds: Int64(instant.rounded()))
    }

    /// Forgets every report (after an underrun the stream's indices start a new line).
    mutating func reset() {
        reports.removeAll()
        line = nil
        fittedPeriod = nil
        outliersInARow = 0
    }

    /// Adds a report and refits.
    mutating func add(_ report: Report) {
        if reports.count >= 4, let predicted = instant(ofFrame: report.frame),
           abs((report.instant - predicted).nanoseconds) > discontinuity.nanoseconds {
            outliersInARow += 1
            if outliersInARow >= 3 {
                reports = Array(reports.suffix(2))
                outliersInARow = 0
            }
        } else {
            outliersInARow = 0
        }
        reports.append(report)
        let oldest = report.instant - window
        reports.removeAll { $0.instant < oldest }
        if reports.count > capacity { reports.removeFirst(reports.count - capacity) }
        refit()
    }

    private mutating func refit() {
        guard let last = reports.last else { line = nil; return }
        let points = reports.map { (x: Double($0.frame - last.frame), y: Double(($0.instant - last.instant).nanoseconds)) }
        let nominal = OutputTimingModel.nominalPeriod
        let span = Double((last.instant - reports[0].instant).nanoseconds)
        guard points.count >= 4, span >= Double(minimumSpan.nanoseconds) else {
            let floor = OutputTimingModel.quantile(points.map { $0.y - nominal * $0.x }, floorQuantile)
            line = (last.frame, Double(last.instant.nanoseconds) + floor, nominal)
            fittedPeriod = nil
            return
        }
        var (period, offset) = OutputTimingModel.leastSquares(points)
        var kept = points
        // Twice: the reports far from the median residual (by four deviations) are left out and
        // the line fitted again without them.
        for _ in 0..<2 {
            let residuals = points.map { $0.y - (offset + period * $0.x) }
            let center = OutputTimingModel.median(residuals)
            let deviation = 1.4826 * OutputTimingModel.median(residuals.map { abs($0 - center) })
            let limit = max(4 * deviation, Double(outlierFloor.nanoseconds))
            let inliers = zip(points, residuals).filter { abs($0.1 - center) <= limit }.map(\.0)
            guard inliers.count >= 3 else { break }
            kept = inliers
            (period, offset) = OutputTimingModel.leastSquares(kept)
        }
        // Then the floor: the line fitted to the reports near the residuals' low quantile,
        // three times. The search starts from the last fit's period where there is one: the
        // floor's slope holds from one report to the next, while the line through the whole
        // cloud tilts as the cloud moves, and from a tilted start the band can take the floor at
        // one end of the window and miss it at the other. Too few near the floor to fit a
        // slope (a handful of reports): the line is moved down onto it.
        if let previous = fittedPeriod {
            period = previous
            offset = OutputTimingModel.median(points.map { $0.y - period * $0.x })
        }
        for _ in 0..<3 {
            let residuals = points.map { $0.y - (offset + period * $0.x) }
            let floor = OutputTimingModel.quantile(residuals, floorQuantile)
            let band = Double(floorBand.nanoseconds)
            let near = zip(points, residuals).filter { abs($0.1 - floor) <= band }.map(\.0)
            guard near.count >= 3 else {
                offset += floor
                break
            }
            kept = near
            (period, offset) = OutputTimingModel.leastSquares(kept)
        }
        if abs(period / nominal - 1) > maximumSkew {
            period = nominal * (1 + (period > nominal ? maximumSkew : -maximumSkew))
            offset = OutputTimingModel.median(kept.map { $0.y - period * $0.x })
        }
        line = (last.frame, Double(last.instant.nanoseconds) + offset, period)
        // A slope from less than a second of reports is too unsure to start the next search from.
        fittedPeriod = span >= 1e9 ? period : nil
    }

    static func leastSquares(_ points: [(x: Double, y: Double)]) -> (slope: Double, intercept: Double) {
        let n = Double(points.count)
        let meanX = points.reduce(0) { $0 + $1.x } / n
        let meanY = points.reduce(0) { $0 + $1.y } / n
        var sxy = 0.0, sxx = 0.0
        for point in points {
            sxy += (point.x - meanX) * (point.y - meanY)
            sxx += (point.x - meanX) * (point.x - meanX)
        }
        let slope = sxx > 0 ? sxy / sxx : nominalPeriod
        return (slope, meanY - slope * meanX)
    }

    /// The `q` quantile of `values` (0: the least), the nearest rank below; 0 for none.
    static func quantile(_ values: [Double], _ q: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, max(0, Int((Double(sorted.count - 1) * q).rounded(.down))))]
    }

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
