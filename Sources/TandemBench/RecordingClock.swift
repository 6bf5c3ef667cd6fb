/// Where a recording's frames sit on the machine's monotonic clock: frame `n` at
/// `origin + n × period` (ns), fitted to the sound server's timing reports of the recording
/// (`AudioMonitorRecorder`).
///
/// A sink's frames are not the machine's: a sound card's crystal, or a null sink's timer (which
/// adds each rendered block's duration rounded to the microsecond), runs tens to hundreds of ppm
/// off 48 kHz, so frame `n` of a recording is not at `n / 48000` s; the server's reports say when
/// the sink plays a recorded frame, by the sink's own clock. A change can make the sink rewind,
/// and the monitor then passes on frames twice, a step in the reports; so the period is common to
/// the whole recording while each stretch between two `breaks` has an origin of its own.
public struct RecordingClock: Sendable, Equatable {
    /// The instant (monotonic ns) of frame 0, by the first stretch's line.
    public var origin: Int64
    /// The recording's frame period (ns per frame), as measured on the machine's clock.
    public var period: Double

    /// A clock whose frame 0 is at `origin` with frames every `period` ns.
    public init(origin: Int64, period: Double) {
        (self.origin, self.period) = (origin, period)
    }

    /// The instant of frame `frame` (which may be fractional).
    public func instant(ofFrame frame: Double) -> Int64 {
        origin + Int64((frame * period).rounded())
    }

    /// The frame at `instant` (fractional).
    public func frame(at instant: Int64) -> Double {
        Double(instant - origin) / period
    }

    /// How fast the recording's clock runs against the machine's, in ppm of `nominalPeriod`
    /// (positive: more frames a second than nominal).
    public func ppm(nominalPeriod: Double) -> Double {
        (nominalPeriod / period - 1) * 1e6
    }

    /// The clock fitted to `timing` (reports that frame `frame` plays at `instant`, monotonic ns,
    /// in order), its period within `maximumSkew` of `nominalPeriod`, each stretch between two of
    /// `breaks` (monotonic ns) with an origin of its own; nil with fewer than two reports. With
    /// `period` given (a sink whose rate is known exactly), only the origins are fitted.
    ///
    /// A report is exact (the server rounds to the microsecond) when everything the sink has
    /// rendered has reached the recording's queue; many are taken while a block is on its way,
    /// which the sink's latency counts and the queue's index does not yet, and lie a block or two
    /// (milliseconds) late. So the fit keeps the reports in a band about the stretch's lower
    /// quartile: a least-squares line, one period for all stretches and an intercept for each,
    /// fitted again to the reports within `band` ns of its lower quartile, four times.
    public static func fit(timing: [AudioMonitorRecorder.Timing], breaks: [Int64] = [], nominalPeriod: Double,
                           maximumSkew: Double = 0.002, band: Double = 50_000, period fixed: Double? = nil) -> RecordingClock? {
        guard timing.count >= 2, let first = timing.first else { return nil }
        let sortedBreaks = breaks.sorted()
        // (stretch, x: frames from the first report, y: ns from the first report)
        let points = timing.map { report in
            (stretch: sortedBreaks.prefix { $0 <= report.instant }.count,
             x: Double(report.frame - first.frame), y: Double(report.instant - first.instant))
        }
        func solve(_ kept: [(stretch: Int, x: Double, y: Double)]) -> (period: Double, intercepts: [Int: Double])? {
            let groups = Dictionary(grouping: kept, by: \.stretch)
            var sxy = 0.0, sxx = 0.0
            var means: [Int: (x: Double, y: Double)] = [:]
            for (stretch, members) in groups {
                let n = Double(members.count)
                let mean = (x: members.reduce(0) { $0 + $1.x } / n, y: members.reduce(0) { $0 + $1.y } / n)
                means[stretch] = mean
                for point in members {
                    sxy += (point.x - mean.x) * (point.y - mean.y)
                    sxx += (point.x - mean.x) * (point.x - mean.x)
                }
            }
            guard !means.isEmpty else { return nil }
            var period = fixed ?? (sxx > 0 ? sxy / sxx : nominalPeriod)
            period = min(max(period, nominalPeriod * (1 - maximumSkew)), nominalPeriod * (1 + maximumSkew))
            return (period, means.mapValues { $0.y - period * $0.x })
        }
        guard var line = solve(points) else { return nil }
        for _ in 0..<4 {
            var kept: [(stretch: Int, x: Double, y: Double)] = []
            for members in Dictionary(grouping: points, by: \.stretch).values {
                let residuals = members.map { $0.y - (line.intercepts[$0.stretch] ?? 0) - line.period * $0.x }
                let quartile = residuals.sorted()[(residuals.count - 1) / 4]
                kept += zip(members, residuals).filter { abs($0.1 - quartile) <= band }.map(\.0)
            }
            guard kept.count >= 2, let refit = solve(kept) else { break }
            line = refit
        }
        let intercept = line.intercepts[points[0].stretch] ?? 0
        let origin = Double(first.instant) + intercept - line.period * Double(first.frame)
        return RecordingClock(origin: Int64(origin.rounded()), period: line.period)
    }
}
