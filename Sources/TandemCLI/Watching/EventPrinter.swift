import Foundation
import Tandem
import TandemParty

/// Prints what happens in a watched session: one JSON object a line (`--events json`) or one
/// readable line each.
final class EventPrinter: Sendable {
    let json: Bool

    init(json: Bool) { self.json = json }

    /// Clears the status line first when standard output is a terminal.
    private static let overStatusLine = isatty(1) != 0 ? "\r\u{1B}[K" : ""

    /// Prints `event`: its JSON line (`--events json`) or its readable line, whose names, reasons
    /// and item names (which come from peers) reach the terminal without a control character.
    func emit(_ event: WatchPartyEvent) {
        if json {
            guard let line = event.jsonLine else { return }
            if StatusArea.shared.isActive { StatusArea.shared.printAbove(line) } else { printOutput(line) }
        } else {
            let line = "\(event.name) \(TerminalText.sanitized(event.details))"
            // At a terminal, over the status line (and the chat prompt), which are drawn again after.
            if StatusArea.shared.isActive {
                StatusArea.shared.printAbove(line)
            } else {
                printOutput("\(EventPrinter.overStatusLine)\(line)")
            }
        }
    }
}
