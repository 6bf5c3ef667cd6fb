import TandemMedia

/// `--log FILE`: where the media libraries' own messages go. Without it FFmpeg's are silenced
/// (`FFmpegMessages.silence`, as `tandem` starts) and mpv writes no log; with it FFmpeg's
/// messages are appended to FILE (created with mode 0600), and with `--player mpv` mpv writes its
/// log there instead (mpv's own `--log-file`, which starts the file afresh: FFmpeg then stays
/// silent, so that the two never write over each other). Never over the screen.
enum LogOption {
    /// The option's name.
    static let name = "log"
    /// Its synopsis.
    static let usage = "[--log FILE]"
    /// Its help.
    static let help = OptionHelp("--log FILE", "write FFmpeg's messages (or, with --player mpv, mpv's log) to FILE "
        + "(default: none are written, and none ever reach the screen)")

    /// Sends FFmpeg's messages to `path`, if given, before anything starts: a file that cannot be
    /// opened is one line.
    static func sendFFmpegMessages(to path: String?) throws(CLIError) {
        guard let path else { return }
        do {
            try FFmpegMessages.write(toFile: path)
        } catch {
            throw .failure("--log: \(error)")
        }
    }

    /// mpv's options for a log at `path`.
    static func mpvArguments(_ path: String?) -> [String] {
        path.map { ["--log-file=\($0)"] } ?? []
    }
}
