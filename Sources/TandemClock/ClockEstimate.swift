/// A fitted relation between local time and session time, with its uncertainty.
///
/// `sessionTime(local) = local + offset + drift × (local − referenceTime)`.
public struct ClockEstimate: Sendable, Hashable, Codable {
    /// The local time at which `offset` holds, in nanoseconds.
    public var referenceTime: Int64
    /// Session time minus local time at `referenceTime`, in nanoseconds.
    public var offset: Double
    /// How fast the offset grows per nanosecond of local time (the local clock's rate error).
    public var drift: Double
    /// The estimated size of the error at `referenceTime`, in nanoseconds, excluding path
    /// asymmetry, which no exchange of timestamps can observe.
    public var errorBound: Double
    /// How fast the error bound grows per nanosecond of extrapolation away from `referenceTime`.
    public var driftUncertainty: Double

    /// Creates an estimate.
    public init(referenceTime: Int64, offset: Double, drift: Double, errorBound: Double, driftUncertainty: Double) {
        self.referenceTime = referenceTime
        self.offset = offset
        self.drift = drift
        self.errorBound = errorBound
        self.driftUncertainty = driftUncertainty
    }

    /// The drift in parts per million.
    public var driftPPM: Double { drift * 1e6 }

    /// Session time minus local time at local time `localTime`, in nanoseconds.
    public func offset(atLocal localTime: Int64) -> Double {
        offset + drift * Double(localTime - referenceTime)
    }

    /// The session time that corresponds to `localTime`.
    public func sessionTime(atLocal localTime: Int64) -> Int64 {
        localTime + Int64(offset(atLocal: localTime).rounded())
    }

    /// The error bound when the estimate is used at `localTime`.
    public func errorBound(atLocal localTime: Int64) -> Double {
        errorBound + driftUncertainty * Double(abs(localTime - referenceTime))
    }
}
