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
/// The line runs at the floor's period averaged over `periodTime`, its offset fitted to the
/// floor at that slope: the floor's slope over a few seconds wobbles, and a line that follows
/// it swings at its newest end, where the frames being written are.
/// Three reports in a row more than `discontinuity` off the line (an underrun, a server's
/// restart) start it again from them.
///
/// It runs on the sound output's thread, at every timing report: a refit allocates nothing (the
/// reports and the fit's working values live in arrays sized for `capacity` at the first report
/// and kept, and the quantiles sort a copy in place).
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
    /// The newest part of the window, as a fraction of it, in which the floor's line must keep
    /// a report.
    var recentFloor = 0.125
    /// How long the floor's periods are averaged over for the line's.
    var periodTime = TimeSpan.seconds(30)
    /// The largest departure of the fitted period from the nominal one, as a fraction.
    var maximumSkew = 0.002

    private(set) var reports: [Report] = []
    private var outliersInARow = 0
    /// The fitted line: the instant of frame `reference.frame` and the period.
    private(set) var line: (frame: Int64, instant: Double, period: Double)?
    /// The period of the last fit over reports spanning a second or more, where the next fit's
    /// search for the floor starts.
    private var fittedPeriod: Double?
    /// The floor's period averaged over `periodTime` (`smoothPeriod`), the fits' time it holds
    /// so far (ns), and the instant of the last fit averaged in.
    private var smoothedPeriod: Double?
    private var smoothedWeight = 0.0
    private var lastSmoothed: LocalInstant?
    /// The fit's working values, one slot a report: the reports as points (x: frames before the
    /// last report's, y: nanoseconds), their residuals, a copy being sorted for a quantile, and
    /// which points a least-squares fit takes.
    private var xs: [Double] = []
    private var ys: [Double] = []
    private var residuals: [Double] = []
    private var sorting: [Double] = []
    private var chosen: [Bool] = []

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

    /// The stream frame (fractional) that reaches the output at `instant`, if any report has come.
    func frame(at instant: LocalInstant) -> Double? {
        guard let line else { return nil }
        return Double(line.frame) + (Double(instant.nanoseconds) - line.instant) / line.period
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
                reports.removeFirst(reports.count - 2)
                outliersInARow = 0
            }
        } else {
            outliersInARow = 0
        }
        if reports.capacity < capacity + 1 { reports.reserveCapacity(capacity + 1) }
        reports.append(report)
        let oldest = report.instant - window
        reports.removeAll { $0.instant < oldest }
        if reports.count > capacity { reports.removeFirst(reports.count - capacity) }
        refit()
    }

    private mutating func refit() {
        guard let last = reports.last else { line = nil; return }
        let count = reports.count
        if xs.count < count {
            let size = max(count, capacity + 1)
            xs = [Double](repeating: 0, count: size)
            ys = xs
            residuals = xs
            sorting = xs
            chosen = [Bool](repeating: false, count: size)
        }
        for index in 0..<count {
            xs[index] = Double(reports[index].frame - last.frame)
            ys[index] = Double((reports[index].instant - last.instant).nanoseconds)
        }
        let nominal = OutputTimingModel.nominalPeriod
        let span = Double((last.instant - reports[0].instant).nanoseconds)
        guard count >= 4, span >= Double(minimumSpan.nanoseconds) else {
            setResiduals(count: count, period: nominal, offset: 0)
            let floor = quantileOfResiduals(count: count, floorQuantile)
            line = (last.frame, Double(last.instant.nanoseconds) + floor, nominal)
            fittedPeriod = nil
            return
        }
        for index in 0..<count { chosen[index] = true }
        var (period, offset) = leastSquaresOfChosen(count: count)
        // Twice: the reports far from the median residual (by four deviations) are left out and
        // the line fitted again without them.
        for _ in 0..<2 {
            setResiduals(count: count, period: period, offset: offset)
            let center = quantileOfResiduals(count: count, nil)
            for index in 0..<count { sorting[index] = abs(residuals[index] - center) }
            let deviation = 1.4826 * OutputTimingModel.sortedQuantile(&sorting, count: count, nil)
            let limit = max(4 * deviation, Double(outlierFloor.nanoseconds))
            var inliers = 0
            for index in 0..<count {
                chosen[index] = abs(residuals[index] - center) <= limit
                if chosen[index] { inliers += 1 }
            }
            guard inliers >= 3 else { break }
            (period, offset) = leastSquaresOfChosen(count: count)
        }
        // Then the floor: the line fitted to the reports near the residuals' low quantile,
        // three times. The search starts from the last floor's period where there is one: the
        // floor's slope holds from one report to the next, while the line through the whole
        // cloud tilts as the cloud moves, and from a tilted start the band can take the floor
        // at one end of the window and miss it at the other. Where no floor line is found (too
        // few reports near it, or all within half the window, whose slope would be unsure),
        // the robust line is moved down onto the floor, its slope kept.
        var floorLine: (period: Double, offset: Double)?
        if let previous = fittedPeriod {
            setResiduals(count: count, period: previous, offset: 0)
            floorLine = floorFit(count: count, from: (previous, quantileOfResiduals(count: count, nil)))
        }
        if floorLine == nil { floorLine = floorFit(count: count, from: (period, offset)) }
        if let floorLine {
            (period, offset) = floorLine
        } else if let previous = fittedPeriod {
            // No floor reaches the newest reports (they all came late, or a tilted line left
            // them above its band): the last floor's period holds, and only the offset is
            // fitted, to the low quantile of every report, so that the line runs on straight.
            period = previous
            setResiduals(count: count, period: period, offset: 0)
            offset = quantileOfResiduals(count: count, floorQuantile)
        } else {
            setResiduals(count: count, period: period, offset: offset)
            offset += quantileOfResiduals(count: count, floorQuantile)
        }
        // The period the line runs at is the floor's, averaged over `periodTime`: an output's
        // clock changes its rate over minutes, if at all, while the floor's slope over a few
        // seconds of reports wobbles by ppm as late reports come and go, and a wobble of 5 ppm
        // is 20 µs at the newest end of the window. Fits over less than half the window are
        // too unsure to average (the line takes them as they are until there is one).
        if floorLine != nil, span >= 0.5 * Double(window.nanoseconds) { smoothPeriod(period, at: last.instant) }
        if let smoothed = smoothedPeriod {
            period = smoothed
            offset = floorOffset(count: count, period: smoothed)
        }
        if abs(period / nominal - 1) > maximumSkew {
            period = nominal * (1 + (period > nominal ? maximumSkew : -maximumSkew))
            setResiduals(count: count, period: period, offset: 0)
            offset = quantileOfResiduals(count: count, floorQuantile)
        }
        line = (last.frame, Double(last.instant.nanoseconds) + offset, period)
        // A slope from less than a second of reports is too unsure to start the next search from;
        // a period held is kept.
        if floorLine != nil { fittedPeriod = span >= 1e9 ? period : nil }
    }

    /// Moves the averaged period toward `period`, a floor's fitted at `instant`: a running mean
    /// until it holds `periodTime` of fits, then an exponential average over that time.
    private mutating func smoothPeriod(_ period: Double, at instant: LocalInstant) {
        guard let smoothed = smoothedPeriod, let previous = lastSmoothed else {
            smoothedPeriod = period
            smoothedWeight = 0
            lastSmoothed = instant
            return
        }
        let elapsed = min(max(Double((instant - previous).nanoseconds), 0), 1e9)
        smoothedWeight = min(smoothedWeight + elapsed, Double(periodTime.nanoseconds))
        if smoothedWeight > 0 { smoothedPeriod = smoothed + (period - smoothed) * elapsed / smoothedWeight }
        lastSmoothed = instant
    }

    /// The offset of the line of slope `period` through the floor of the points: the mean
    /// residual of those within `floorBand` of the residuals' `floorQuantile`.
    private mutating func floorOffset(count: Int, period: Double) -> Double {
        setResiduals(count: count, period: period, offset: 0)
        let floor = quantileOfResiduals(count: count, floorQuantile)
        let band = Double(floorBand.nanoseconds)
        var sum = 0.0, near = 0.0
        for index in 0..<count where abs(residuals[index] - floor) <= band {
            sum += residuals[index]
            near += 1
        }
        return near > 0 ? sum / near : floor
    }

    /// The line through the floor of the points, searched from the line `start`: three times,
    /// the least-squares line of the points within `floorBand` of the residuals'
    /// `floorQuantile`; nil when fewer than three are near it, they cover less than half the
    /// window, or none of them lies in its newest `recentFloor` (a line that leaves the newest
    /// reports above its band is tilted off them: extrapolated to the frames being written, its
    /// error grows with the tilt, seconds long, until the reports it kept leave the window).
    private mutating func floorFit(count: Int, from start: (period: Double, offset: Double)) -> (period: Double, offset: Double)? {
        var (period, offset) = start
        let band = Double(floorBand.nanoseconds)
        for _ in 0..<3 {
            setResiduals(count: count, period: period, offset: offset)
            let floor = quantileOfResiduals(count: count, floorQuantile)
            var near = 0
            var firstX: Double?, lastX = 0.0
            for index in 0..<count {
                chosen[index] = abs(residuals[index] - floor) <= band
                if chosen[index] {
                    near += 1
                    if firstX == nil { firstX = xs[index] }
                    lastX = xs[index]
                }
            }
            let covered = firstX.map { lastX - $0 } ?? 0
            guard near >= 3, covered >= 0.5 * -xs[0], lastX >= recentFloor * xs[0] else { return nil }
            (period, offset) = leastSquaresOfChosen(count: count)
        }
        return (period, offset)
    }

    /// Each point's residual against the line `offset + period × x`.
    private mutating func setResiduals(count: Int, period: Double, offset: Double) {
        for index in 0..<count { residuals[index] = ys[index] - (offset + period * xs[index]) }
    }

    /// The `q` quantile of the residuals (the median when nil), as `quantile` and `median` give it.
    private mutating func quantileOfResiduals(count: Int, _ q: Double?) -> Double {
        for index in 0..<count { sorting[index] = residuals[index] }
        return OutputTimingModel.sortedQuantile(&sorting, count: count, q)
    }

    /// Sorts the first `count` of `values` in place (an insertion sort: a few hundred values,
    /// nothing allocated) and returns their `q` quantile, the nearest rank below (the median,
    /// the middle two's mean for an even count, when `q` is nil); 0 for none.
    private static func sortedQuantile(_ values: inout [Double], count: Int, _ q: Double?) -> Double {
        guard count > 0 else { return 0 }
        values.withUnsafeMutableBufferPointer { values in
            for index in 1..<max(count, 1) {
                let value = values[index]
                var slot = index
                while slot > 0 && values[slot - 1] > value {
                    values[slot] = values[slot - 1]
                    slot -= 1
                }
                values[slot] = value
            }
        }
        guard let q else {
            let middle = count / 2
            return count % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2
        }
        return values[min(count - 1, max(0, Int((Double(count - 1) * q).rounded(.down))))]
    }

    /// The least-squares line through the chosen points (summed in their order): its slope (the
    /// nominal period when the points share one x) and intercept.
    private func leastSquaresOfChosen(count: Int) -> (slope: Double, intercept: Double) {
        var n = 0.0, sumX = 0.0, sumY = 0.0
        for index in 0..<count where chosen[index] {
            n += 1
            sumX += xs[index]
            sumY += ys[index]
        }
        let meanX = sumX / n, meanY = sumY / n
        var sxy = 0.0, sxx = 0.0
        for index in 0..<count where chosen[index] {
            sxy += (xs[index] - meanX) * (ys[index] - meanY)
            sxx += (xs[index] - meanX) * (xs[index] - meanX)
        }
        let slope = sxx > 0 ? sxy / sxx : OutputTimingModel.nominalPeriod
        return (slope, meanY - slope * meanX)
    }
}
