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

    /// How many reports the fit keeps: with one every 50 ms, as the output asks, the whole
    /// `window`, so that a stretch in which every report came late (a busy machine's) still has
    /// exact ones on either side of it to hold the floor.
    var capacity = 160
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
        // Twice: the reports far from the median residual (by four deviations) are left out and
        // the line fitted again without them.
        for _ in 0..<2 {
            let residuals = points.map { $0.y - (offset + period * $0.x) }
            let center = OutputTimingModel.median(residuals)
            let deviation = 1.4826 * OutputTimingModel.median(residuals.map { abs($0 - center) })
            let limit = max(4 * deviation, Double(outlierFloor.nanoseconds))
            let inliers = zip(points, residuals).filter { abs($0.1 - center) <= limit }.map(\.0)
            guard inliers.count >= 3 else { break }
            (period, offset) = OutputTimingModel.leastSquares(inliers)
        }
        // Then the floor: the line fitted to the reports near the residuals' low quantile,
        // three times. The search starts from the last floor's period where there is one: the
        // floor's slope holds from one report to the next, while the line through the whole
        // cloud tilts as the cloud moves, and from a tilted start the band can take the floor
        // at one end of the window and miss it at the other. Where no floor line is found (too
        // few reports near it, or all within half the window, whose slope would be unsure),
        // the robust line is moved down onto the floor, its slope kept.
        let floorLine = fittedPeriod.flatMap { previous in
            floorFit(points, from: (previous, OutputTimingModel.median(points.map { $0.y - previous * $0.x })))
        } ?? floorFit(points, from: (period, offset))
        if let floorLine {
            (period, offset) = floorLine
        } else {
            let residuals = points.map { $0.y - (offset + period * $0.x) }
            offset += OutputTimingModel.quantile(residuals, floorQuantile)
        }
        if abs(period / nominal - 1) > maximumSkew {
            period = nominal * (1 + (period > nominal ? maximumSkew : -maximumSkew))
            offset = OutputTimingModel.quantile(points.map { $0.y - period * $0.x }, floorQuantile)
        }
        line = (last.frame, Double(last.instant.nanoseconds) + offset, period)
        // A slope from less than a second of reports is too unsure to start the next search from.
        fittedPeriod = floorLine != nil && span >= 1e9 ? period : nil
    }

    /// The line through the floor of `points`, searched from the line `start`: three times, the
    /// least-squares line of the points within `floorBand` of the residuals' `floorQuantile`;
    /// nil when fewer than three are near it or they cover less than half the window.
    private func floorFit(_ points: [(x: Double, y: Double)],
                          from start: (period: Double, offset: Double)) -> (period: Double, offset: Double)? {
        var (period, offset) = start
        let band = Double(floorBand.nanoseconds)
        for _ in 0..<3 {
            let residuals = points.map { $0.y - (offset + period * $0.x) }
            let floor = OutputTimingModel.quantile(residuals, floorQuantile)
            let near = zip(points, residuals).filter { abs($0.1 - floor) <= band }.map(\.0)
            let covered = (near.last?.x ?? 0) - (near.first?.x ?? 0)
            guard near.count >= 3, covered >= 0.5 * -(points.first?.x ?? 0) else { return nil }
            (period, offset) = OutputTimingModel.leastSquares(near)
        }
        return (period, offset)
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
