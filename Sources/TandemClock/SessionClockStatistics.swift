/// What a participant knows about its estimate of the session clock, for display and reports.
public struct SessionClockStatistics: Sendable, Hashable, Codable {
    /// Published session time minus local time, in nanoseconds.
    public var offset: Int64
    /// The local clock's estimated rate error, in parts per million.
    public var driftPPM: Double
    /// The current error bound, in nanoseconds (path asymmetry excluded).
    public var errorBound: Int64
    /// The fastest round trip in the window, in nanoseconds.
    public var bestRoundTrip: Int64
    /// The median round trip in the window, in nanoseconds.
    public var medianRoundTrip: Int64
    /// Samples that joined the estimator's window.
    public var samplesKept: Int
    /// Samples rejected as outliers or as inconsistent.
    public var samplesRejected: Int

    /// Creates statistics from their parts.
    public init(offset: Int64, driftPPM: Double, errorBound: Int64, bestRoundTrip: Int64, medianRoundTrip: Int64,
                samplesKept: Int, samplesRejected: Int) {
        self.offset = offset
        self.driftPPM = driftPPM
        self.errorBound = errorBound
        self.bestRoundTrip = bestRoundTrip
        self.medianRoundTrip = medianRoundTrip
        self.samplesKept = samplesKept
        self.samplesRejected = samplesRejected
    }
}
