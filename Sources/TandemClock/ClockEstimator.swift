/// Turns a stream of clock samples into an estimate of offset and drift: a pure value.
///
/// It keeps a sliding window of samples, rejects those whose round trip is far above the recent
/// median (they queued somewhere and say little), and refits after every kept sample. Feed it
/// samples in the order their replies arrived; it does no I/O and reads no clock.
public struct ClockEstimator: Sendable {
    /// Tuning knobs. The defaults suit anything from loopback to a transatlantic path.
    public struct Configuration: Sendable, Hashable, Codable {
        /// How the window becomes an estimate.
        public var fitMethod: ClockFitMethod = .envelope
        /// The most samples kept.
        public var windowSize: Int = 512
        /// Samples older than this, relative to the newest, are dropped (nanoseconds).
        public var windowDuration: Int64 = 600_000_000_000
        /// How many recent round trips the outlier test compares against.
        public var outlierHistory: Int = 32
        /// A sample is an outlier when its round trip exceeds the recent median by more than this
        /// many times the median's own excess over the fastest recent round trip...
        public var outlierFactor: Double = 3
        /// ...plus this margin, so that a perfectly steady path never rejects anything (nanoseconds).
        public var outlierMargin: Int64 = 50_000
        /// The drift is estimated only once the window spans this long (nanoseconds); before that
        /// two samples a few milliseconds apart would suggest absurd drifts.
        public var minimumDriftSpan: Int64 = 2_000_000_000
        /// The largest drift believed, in parts per million.
        public var maximumDriftPPM: Double = 1_000
        /// The smallest error bound ever reported (nanoseconds): the timestamps' own granularity
        /// and the service's scheduling put a floor under any estimate.
        public var minimumErrorBound: Double = 100

        /// The default configuration.
        public init() {}
    }

    /// What became of a sample.
    public enum Verdict: String, Sendable, Hashable, Codable {
        /// It joined the window.
        case kept
        /// Its round trip was far above the recent median.
        case rejectedOutlier
        /// Its timestamps were in an impossible order.
        case rejectedInconsistent
    }

    /// The configuration in use.
    public let configuration: Configuration
    /// The samples in the window, oldest first.
    public private(set) var window: [ClockSample] = []
    /// The current estimate, once there is a sample.
    public private(set) var estimate: ClockEstimate?
    /// How many samples were kept.
    public private(set) var keptCount = 0
    /// How many samples were rejected, for either reason.
    public private(set) var rejectedCount = 0
    /// Recent round-trip delays, kept or not, so that a lasting change of path moves the median.
    private var recentDelays: [Int64] = []

    /// Creates an estimator with no samples.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// The lowest round trip in the window, in nanoseconds.
    public var bestRoundTrip: Int64? { window.map(\.roundTripDelay).min() }

    /// The median round trip in the window, in nanoseconds.
    public var medianRoundTrip: Int64? {
        guard !window.isEmpty else { return nil }
        let delays = window.map(\.roundTripDelay).sorted()
        return delays[delays.count / 2]
    }

    /// Adds a sample and refits when it is kept.
    @discardableResult
    public mutating func add(_ sample: ClockSample) -> Verdict {
        guard sample.isConsistent else {
            rejectedCount += 1
            return .rejectedInconsistent
        }
        let outlier = isOutlier(sample.roundTripDelay)
        recentDelays.append(sample.roundTripDelay)
        if recentDelays.count > configuration.outlierHistory { recentDelays.removeFirst() }
        if outlier {
            rejectedCount += 1
            return .rejectedOutlier
        }
        keptCount += 1
        window.append(sample)
        trimWindow()
        refit()
        return .kept
    }

    private func isOutlier(_ delay: Int64) -> Bool {
        // Too few delays to know what normal looks like: take everything.
        guard recentDelays.count >= 8 else { return false }
        let sorted = recentDelays.sorted()
        let median = sorted[sorted.count / 2]
        let limit = Double(median) + configuration.outlierFactor * Double(median - sorted[0])
            + Double(configuration.outlierMargin)
        return Double(delay) > limit
    }

    private mutating func trimWindow() {
        let newest = window[window.count - 1].clientReceiveTime
        let excess = window.count - configuration.windowSize
        if excess > 0 { window.removeFirst(excess) }
        if let firstRecent = window.firstIndex(where: { newest - $0.clientReceiveTime <= configuration.windowDuration }),
           firstRecent > 0 {
            window.removeFirst(firstRecent)
        }
    }

    private mutating func refit() {
        let newest = window[window.count - 1]
        let referenceTime = newest.clientReceiveTime
        let baseOffset = newest.offset
        guard window.count >= 3 else {
            // Too few for a fit: the fastest exchange, whose offset can be wrong by at most half
            // its round trip.
            let fastest = window.min { $0.roundTripDelay < $1.roundTripDelay }!
            estimate = ClockEstimate(
                referenceTime: referenceTime,
                offset: Double(fastest.offset),
                drift: estimate?.drift ?? 0,
                errorBound: max(Double(fastest.roundTripDelay) / 2, configuration.minimumErrorBound),
                driftUncertainty: configuration.maximumDriftPPM / 1e6
            )
            return
        }
        let span = referenceTime - window[0].clientSendTime
        let estimatingDrift = span >= configuration.minimumDriftSpan
        let maximumDrift = configuration.maximumDriftPPM / 1e6
        let priorDrift = estimate?.drift ?? 0
        let result: (offset: Double, drift: Double, errorScale: Double, driftUncertainty: Double)
        switch configuration.fitMethod {
        case .envelope:
            let fit = EnvelopeFit(samples: window, referenceTime: referenceTime, baseOffset: baseOffset)
                .fit(estimatingDrift: estimatingDrift, priorDrift: priorDrift, maximumDrift: maximumDrift)
            result = (fit.offset, fit.drift, fit.errorScale, fit.driftUncertainty)
        case .weightedLeastSquares:
            result = WeightedLeastSquaresFit(samples: window, referenceTime: referenceTime, baseOffset: baseOffset)
                .fit(estimatingDrift: estimatingDrift, priorDrift: priorDrift, maximumDrift: maximumDrift)
        }
        let errorBound = max(result.errorScale, configuration.minimumErrorBound)
        estimate = ClockEstimate(
            referenceTime: referenceTime,
            offset: Double(baseOffset) + result.offset,
            drift: result.drift,
            errorBound: errorBound,
            driftUncertainty: result.driftUncertainty
        )
    }
}
