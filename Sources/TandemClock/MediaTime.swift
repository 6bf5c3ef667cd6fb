/// Media and clock instants in Tandem are signed 64-bit nanoseconds.
public typealias Nanoseconds = Int64

/// Conversions between seconds and nanoseconds; TandemMedia adds FFmpeg's rational time bases.
public enum MediaTime {
    /// Seconds as nanoseconds, for values that people type; saturates at the bounds of `Int64`
    /// (about ±292 years), and NaN is 0.
    public static func nanoseconds(seconds: Double) -> Nanoseconds {
        Nanoseconds(saturating: seconds * 1e9)
    }

    /// Nanoseconds as seconds, for people to read.
    public static func seconds(_ nanoseconds: Nanoseconds) -> Double {
        Double(nanoseconds) / 1e9
    }
}
