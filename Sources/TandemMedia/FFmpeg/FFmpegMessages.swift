#if canImport(Glibc)
import Glibc
#endif
import CFFmpeg
import Synchronization
import TandemMediaTypes

/// FFmpeg's own messages (`[mov,mp4,… @ 0x…] moov atom not found`), which it writes to standard
/// error as it works.
///
/// A program that reports FFmpeg's failures itself, as `tandem` does (every `MediaError` carries
/// FFmpeg's reason in one line), silences them, so that they never come before its own line or
/// over a terminal's status line; or sends them to a log file of their own (`tandem --log FILE`).
public enum FFmpegMessages {
    /// The descriptor messages are appended to (-1: none).
    private static let descriptor = Atomic<Int32>(-1)
    /// Whether the next message starts a line (FFmpeg's `print_prefix`, kept between calls).
    private static let startsLine = Atomic<Int32>(1)

    /// No message of FFmpeg's is written from now on (its errors still reach the caller, as
    /// `MediaError`s).
    public static func silence() {
        av_log_set_level(AV_LOG_QUIET)
    }

    /// FFmpeg's messages (at `info` level and above) are appended to the file at `path`, created
    /// with mode 0600 when missing, from now on; never to standard error. Throws the system's
    /// reason when the file cannot be opened.
    public static func write(toFile path: String) throws(MediaError) {
        let opened = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard opened >= 0 else { throw MediaError.io(path, String(cString: strerror(errno))) }
        let previous = descriptor.exchange(opened, ordering: .acquiringAndReleasing)
        if previous >= 0 { close(previous) }
        av_log_set_level(AV_LOG_INFO)
        av_log_set_callback { context, level, format, arguments in
            guard level <= av_log_get_level(), let format, let arguments else { return }
            let target = FFmpegMessages.descriptor.load(ordering: .acquiring)
            guard target >= 0 else { return }
            var line = [CChar](repeating: 0, count: 1024)
            var prefix = FFmpegMessages.startsLine.load(ordering: .relaxed)
            let length = av_log_format_line2(context, level, format, arguments, &line, Int32(line.count), &prefix)
            FFmpegMessages.startsLine.store(prefix, ordering: .relaxed)
            guard length > 0 else { return }
            let count = min(Int(length), line.count - 1)
            _ = line.withUnsafeBytes { bytes in Glibc.write(target, bytes.baseAddress, count) }
        }
    }
}
