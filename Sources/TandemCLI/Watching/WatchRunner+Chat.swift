import Foundation
import Tandem
import TandemParty

/// The watch's chat: at a terminal, Enter opens a one-line prompt above the
/// status line (`KeyParser`, `StatusArea`); without one, the line command `say TEXT` sends
/// everything after `say `, verbatim, up to 1,000 bytes. Every line of the group's (the party's
/// `chat` events) is shown above the status line as `NAME: TEXT` (sanitised), or as the event
/// `{"event":"chat","from":NAME,"participant":ID,"text":TEXT}` with `--json`.
extension WatchRunner {
    /// The text of a `say TEXT` line: everything after `say `, verbatim (`line` as read, its
    /// leading blanks skipped); nil when the line is no `say`.
    static func sayText(_ line: String) -> String? {
        let command = line.drop { $0 == " " || $0 == "\t" }
        if command == "say" { return "" }
        guard command.hasPrefix("say ") else { return nil }
        return String(command.dropFirst(4))
    }

    /// Sends `text` to the chat, or refuses it in one line (empty, over 1,000 bytes, not joined).
    func say(_ text: String, party: WatchParty) {
        do {
            try party.say(text)
        } catch {
            refuse(error.message, party: party)
        }
    }
}
