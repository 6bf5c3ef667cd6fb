import Foundation
import Tandem
import TandemParty

/// The watch's chat (issue 15, item 5): at a terminal, Enter opens a one-line prompt above the
/// status line (`KeyParser`, `StatusArea`); without one, the line command `say TEXT` sends
/// everything after `say `, verbatim, up to 1,000 bytes. Every line of the group's, this
/// participant's own included and, for a late joiner, the group's last 100, is shown above the
/// status line as `NAME: TEXT` (the sender's name sanitised, with its fingerprint when two share
/// it, as the status line shows names), or as the event
/// `{"event":"chat","from":NAME,"participant":ID,"text":TEXT}` with `--events json`.
extension WatchRunner {
    /// Shows the chat for as long as the watch lasts.
    func followChat(events: EventPrinter) -> Task<Void, Never> {
        Task {
            for await message in session.chatMessages() {
                let active = session.activeParticipants
                let name = (active.first { $0.id == message.sender } ?? session.participant(identifiedBy: message.sender))?
                    .name(among: active) ?? message.sender.uuidString
                if events.json || !StatusArea.shared.isActive {
                    events.emit(.chat(.init(from: name, participant: message.sender.uuidString, text: message.text)))
                } else {
                    StatusArea.shared.printAbove("\(TerminalText.sanitized(name)): \(TerminalText.sanitized(message.text))")
                }
            }
        }
    }

    /// The text of a `say TEXT` line: everything after `say `, verbatim (`line` as read, its
    /// leading blanks skipped); nil when the line is no `say`.
    static func sayText(_ line: String) -> String? {
        let command = line.drop { $0 == " " || $0 == "\t" }
        if command == "say" { return "" }
        guard command.hasPrefix("say ") else { return nil }
        return String(command.dropFirst(4))
    }

    /// Sends `text` to the chat, or refuses it in one line (empty, over 1,000 bytes, not joined).
    func say(_ text: String, events: EventPrinter) {
        guard !text.isEmpty else {
            refuse("say wants TEXT: say hello", events: events)
            return
        }
        do {
            try session.sendChat(text)
        } catch {
            refuse("say: \(error)", events: events)
        }
    }
}
