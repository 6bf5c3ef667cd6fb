import TandemClock
import TandemMediaTypes

/// The sound output's log, one JSON line per event, for `tandem bench audio` (which reads
/// exactly these lines); instants are local CLOCK_MONOTONIC nanoseconds, media positions are
/// frames at 48 kHz:
///
/// - one per write to the output that plays media (writes of silence, while paused, are not
///   logged): `{"kind":"write","item":"<identifier>","media":<media position of the write's
///   first frame that plays media, a Double>,"intended":<the instant the timeline says that
///   frame must reach the output>,"expected":<the instant the output's timing model says it
///   will>,"frames":<frames from that one to the write's end>,"rate":<the timeline's
///   rate>,"correction":<the resampling correction, in ppm>,"lead":<nanoseconds from the
///   write to the instant its first frame reaches the output: how much sound the output still
///   had>}`;
/// - `{"kind":"snap","at":<instant>,"error":<nanoseconds; positive: the output was ahead>}`
///   when the output jumps to the timeline's position;
/// - `{"kind":"underrun","at":<instant>}` when the sound server ran out of written sound;
/// - `{"kind":"busy","at":<instant>}` when a write played from the schedule read for an earlier
///   one, the player's lock being held by another thread (`AudioPlayout`);
/// - `{"kind":"missing","at":<instant>,"frames":<count>}` when a write wanted media frames that
///   were not decoded yet (played, or searched by the stretch, as silence);
/// - `{"kind":"latency","at":<instant>,"latency":<nanoseconds from a write to its frame
///   reaching the output>}` when the output's latency first becomes known and whenever it
///   moves by more than 0.5 ms.
///
/// Lines are buffered and written in blocks of 16 KiB (and by `flush()`, `close()` or deinit).
public final class AudioLog: Sendable {
    /// The file being written.
    public var path: String { file.path }
    private let file: BufferedLineFile

    /// Creates (or truncates) the log file at `path`.
    public init(path: String) throws(MediaError) {
        file = try BufferedLineFile(path: path, what: "audio log", threshold: 16 * 1024)
    }

    /// Logs a write whose first media frame is `media`.
    func write(item: String, media: Double, intended: LocalInstant, expected: LocalInstant, frames: Int, rate: Double,
               correction: Double, lead: TimeSpan) {
        let ppm = (correction * 1e6 * 1000).rounded() / 1000
        append("{\"kind\":\"write\",\"item\":\(BufferedLineFile.jsonString(item)),\"media\":\(AudioLog.number(media)),"
            + "\"intended\":\(intended.nanoseconds),\"expected\":\(expected.nanoseconds),\"frames\":\(frames),"
            + "\"rate\":\(AudioLog.number(rate)),\"correction\":\(AudioLog.number(ppm)),\"lead\":\(lead.nanoseconds)}\n")
    }

    /// Logs a snap at `at` that took away `error`.
    func snap(at: LocalInstant, error: TimeSpan) {
        append("{\"kind\":\"snap\",\"at\":\(at.nanoseconds),\"error\":\(error.nanoseconds)}\n")
    }

    /// Logs a write at `at` that played from the schedule read before, the player's lock being held.
    func busy(at: LocalInstant) {
        append("{\"kind\":\"busy\",\"at\":\(at.nanoseconds)}\n")
    }

    /// Logs an underrun noticed at `at`.
    func underrun(at: LocalInstant) {
        append("{\"kind\":\"underrun\",\"at\":\(at.nanoseconds)}\n")
    }

    /// Logs a write at `at` that wanted `frames` media frames not decoded yet.
    func missing(at: LocalInstant, frames: Int) {
        append("{\"kind\":\"missing\",\"at\":\(at.nanoseconds),\"frames\":\(frames)}\n")
    }

    /// Logs the output's latency at `at`.
    func latency(at: LocalInstant, latency: TimeSpan) {
        append("{\"kind\":\"latency\",\"at\":\(at.nanoseconds),\"latency\":\(latency.nanoseconds)}\n")
    }

    /// Writes what is buffered.
    public func flush() {
        file.flush()
    }

    /// Writes what is buffered and closes the file; later events are not logged.
    public func close() {
        file.close()
    }

    private func append(_ line: String) {
        file.append(line)
    }

    /// A Double as JSON (finite values only reach here).
    private static func number(_ value: Double) -> String {
        value.isFinite ? "\(value)" : "0"
    }
}
