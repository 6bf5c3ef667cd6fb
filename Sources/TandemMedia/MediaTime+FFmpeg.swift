import CFFmpeg
import TandemClock

/// FFmpeg's rational time bases as nanoseconds and back; exact, as `av_rescale_q` makes them
/// (never through `Double`).
extension MediaTime {
    /// One nanosecond as an FFmpeg time base.
    static let nanosecondBase = AVRational(num: 1, den: 1_000_000_000)

    /// `value` in `timeBase` units, as nanoseconds; nil when it is FFmpeg's "no timestamp".
    static func nanoseconds(_ value: Int64, in timeBase: AVRational) -> Int64? {
        guard value != tandem_av_nopts_value() else { return nil }
        return av_rescale_q(value, timeBase, nanosecondBase)
    }

    /// `nanoseconds` in `timeBase` units, rounded down so that a seek lands at or before it.
    static func value(_ nanoseconds: Int64, in timeBase: AVRational) -> Int64 {
        av_rescale_q_rnd(nanoseconds, nanosecondBase, timeBase, AV_ROUND_DOWN)
    }
}
