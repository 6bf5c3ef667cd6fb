/// Bare nanoseconds of media or clock time.
@available(*, deprecated, message: "hold instants as TimePoint (HostInstant, ItemTime, SessionInstant, LocalInstant) and lengths as TimeSpan; Int64 where a bare count of nanoseconds is wanted")
public typealias Nanoseconds = Int64

/// Conversions between seconds and nanoseconds; TandemMedia adds FFmpeg's rational time bases.
public enum MediaTime {
    /// Seconds as nanoseconds, for values that people type; saturates at the bounds of `Int64`
    /// (about ±292 years), and NaN is 0.
    public static func nanoseconds(seconds: Double) -> Int64 {
        Int64(saturating: seconds * 1e9)
    }

    /// Nanoseconds as seconds, for people to read.
    public static func seconds(_ nanoseconds: Int64) -> Double {
        Double(nanoseconds) / 1e9
    }
}
