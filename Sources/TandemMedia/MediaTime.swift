import CFFmpeg
import TandemPlayback

/// Media and clock instants in Tandem are signed 64-bit nanoseconds.
public typealias Nanoseconds = Int64

/// Conversions between seconds, nanoseconds and FFmpeg's rational time bases; the last are exact,
/// as `av_rescale_q` makes them (never through `Double`).
public enum MediaTime {
    /// One nanosecond as an FFmpeg time base.
    static let nanosecondBase = AVRational(num: 1, den: 1_000_000_000)

    /// `value` in `timeBase` units, as nanoseconds; nil when it is FFmpeg's "no timestamp".
    static func nanoseconds(_ value: Int64, in timeBase: AVRational) -> Nanoseconds? {
        guard value != tandem_av_nopts_value() else { return nil }
        return av_rescale_q(value, timeBase, nanosecondBase)
    }

    /// `nanoseconds` in `timeBase` units, rounded down so that a seek lands at or before it.
    static func value(_ nanoseconds: Nanoseconds, in timeBase: AVRational) -> Int64 {
        av_rescale_q_rnd(nanoseconds, nanosecondBase, timeBase, AV_ROUND_DOWN)
    }

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
