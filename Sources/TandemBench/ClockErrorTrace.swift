/// One estimator's errors through one run: estimated minus true session time, in nanoseconds, at
/// instants counted in nanoseconds from the run's start (nil before the estimator knew anything).
public struct ClockErrorTrace: Sendable, Hashable {
    /// The estimator's name.
    public var name: String
    /// The evaluation instants.
    public var times: [Int64]
    /// The errors at those instants.
    public var errors: [Int64?]

    /// Creates a trace.
    public init(name: String, times: [Int64], errors: [Int64?]) {
        self.name = name
        self.times = times
        self.errors = errors
    }

    /// Absolute errors, with `bias` taken out, at instants from `start` on; an estimator with
    /// nothing to say counts as infinitely wrong.
    func absoluteErrors(from start: Int64, bias: Int64) -> [Double] {
        zip(times, errors).filter { $0.0 >= start }.map { $0.1.map { Double(abs($0 - bias)) } ?? .infinity }
    }

    /// The earliest instant after which the error, with `bias` taken out, stayed within
    /// `tolerance` to the end of the run; nil if it never did.
    func convergence(tolerance: Int64, bias: Int64) -> Int64? {
        var converged: Int64?
        for (time, error) in zip(times, errors).reversed() {
            guard let error, abs(error - bias) <= tolerance else { break }
            converged = time
        }
        return converged
    }
}
