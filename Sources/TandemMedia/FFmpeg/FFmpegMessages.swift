import CFFmpeg

/// FFmpeg's own messages (`[mov,mp4,… @ 0x…] moov atom not found`), which it writes to standard
/// error as it works.
///
/// A program that reports FFmpeg's failures itself, as `tandem` does (every `MediaError` carries
/// FFmpeg's reason in one line), silences them, so that they never come before its own line or
/// over a terminal's status line.
public enum FFmpegMessages {
    /// No message of FFmpeg's is written from now on (its errors still reach the caller, as
    /// `MediaError`s).
    public static func silence() {
        av_log_set_level(AV_LOG_QUIET)
    }
}
