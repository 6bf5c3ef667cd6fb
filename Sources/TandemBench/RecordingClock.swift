/// Where a recording's frames sit on the machine's monotonic clock: frame `n` at
/// `origin + n × period` (ns), fitted from the recording file's growth.
///
/// A sink's frames are not the machine's: a sound card's crystal, or a null sink's timer (which
/// adds each rendered block's duration rounded to the microsecond), runs tens to hundreds of ppm
/// off 48 kHz, so frame `n` of a recording is not at `n / 48000` s. The growth says when each
/// count of frames was first seen in the file; a frame cannot be seen before it was rendered,
/// so every observation lies on or after the line of the sink's clock, and the line is the one
/// that runs closest beneath all of them: the linear-programming estimate of a clock's skew from
/// one-way observations (Moon, Skelly and Towsley, "Estimation and removal of clock skew from
/// network delay measurements", INFOCOM 1999). A change can make the sink rewind, and the
/// monitor then passes on frames twice, a step in the growth; so the period is common to the
/// whole recording while each stretch between two `breaks` has an origin of its own.
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

    /// The clock fitted to `growth` (the instants at which the file was seen holding `frames`
    /// frames, in order), its period within `maximumSkew` of `nominalPeriod`, each stretch
    /// between two of `breaks` (monotonic ns) with an origin of its own; nil with no growth.
    ///
    /// For a period `p`, a stretch's line lies beneath all its observations when its origin is
    /// the least of `instant - frames × p` over them; the fit takes the period that brings the
    /// lines closest to the observations, summed over all of them (a concave function of `p`,
    /// maximised by golden-section search).
    public static func fit(growth: [(instant: Int64, frames: Int)], breaks: [Int64] = [], nominalPeriod: Double,
                           maximumSkew: Double = 0.002) -> RecordingClock? {
        let observations = growth.filter { $0.frames > 0 }
        guard let first = observations.first else { return nil }
        let sortedBreaks = breaks.sorted()
        // Instants relative to the first observation, so that the sums keep their precision.
        var stretches: [[(x: Double, y: Double)]] = []
        var stretch = -1
        for observation in observations {
            let index = sortedBreaks.prefix { $0 <= observation.instant }.count
            if index != stretch {
                stretches.append([])
                stretch = index
            }
            stretches[stretches.count - 1].append((Double(observation.frames), Double(observation.instant - first.instant)))
        }
        // The sum over observations of their distance above their stretch's line, less its
        // constant part: what the fit maximises.
        func closeness(_ period: Double) -> Double {
            var total = 0.0
            for points in stretches {
                let floor = points.map { $0.y - $0.x * period }.min()!
                total += Double(points.count) * floor + period * points.reduce(0) { $0 + $1.x }
            }
            return total
        }
        var low = nominalPeriod * (1 - maximumSkew), high = nominalPeriod * (1 + maximumSkew)
        let ratio = (5.0.squareRoot() - 1) / 2
        var a = high - ratio * (high - low), b = low + ratio * (high - low)
        var fa = closeness(a), fb = closeness(b)
        for _ in 0..<80 {
            if fa < fb {
                low = a
                (a, fa) = (b, fb)
                b = low + ratio * (high - low)
                fb = closeness(b)
            } else {
                high = b
                (b, fb) = (a, fa)
                a = high - ratio * (high - low)
                fa = closeness(a)
            }
        }
        let period = (low + high) / 2
        let floor = stretches[0].map { $0.y - $0.x * period }.min()!
        return RecordingClock(origin: first.instant + Int64(floor.rounded()), period: period)
    }
}
