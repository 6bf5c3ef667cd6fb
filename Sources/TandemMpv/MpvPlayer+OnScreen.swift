import TandemClock
import TandemMediaTypes

/// Text on mpv's own screen (its OSD): what the group does and its chat, for the person watching
/// in mpv's window, where no terminal line is seen.
extension MpvPlayer {
    /// How long a text stays on mpv's screen unless another replaces it.
    public static let onScreenDuration = TimeSpan.seconds(5)

    /// The most characters of one line shown: a longer one is cut, ending in "…".
    public static let onScreenLineLimit = 160

    /// Shows `lines` on mpv's screen, one under the other, for `duration`, in place of what its
    /// OSD showed; true once mpv accepted the command. The text is shown as it is, control
    /// characters taken out (`showTextCommand`).
    @discardableResult
    public func showOnScreen(_ lines: [String], for duration: TimeSpan = onScreenDuration) async -> Bool {
        guard !state.withLock({ $0.closed }) else { return false }
        return (try? await connection.command(Self.showTextCommand(lines, duration: duration))) != nil
    }

    /// mpv's `show-text` command for `lines`: each line without control characters (a tab or
    /// newline becomes a space) and cut to `onScreenLineLimit`, the lines joined by newlines, and
    /// the duration in ms. mpv expands no property in a command given as a JSON array (only
    /// input.conf's and string commands are expanded), so a chat line `${path}` shows as typed.
    public static func showTextCommand(_ lines: [String], duration: TimeSpan) -> [MpvValue] {
        let shown = lines.map { line in
            let plain = String(String.UnicodeScalarView(line.unicodeScalars.compactMap { scalar -> Unicode.Scalar? in
                switch scalar.value {
                case 0x09, 0x0A, 0x0D: " "
                case 0x00..<0x20, 0x7F..<0xA0, 0x202A...0x202E, 0x2066...0x2069: nil
                default: scalar
                }
            }))
            return plain.count > onScreenLineLimit ? String(plain.prefix(onScreenLineLimit - 1)) + "…" : plain
        }
        let milliseconds = max(0, duration.nanoseconds / 1_000_000)
        return ["show-text", .string(shown.joined(separator: "\n")), .int(milliseconds)]
    }
}
