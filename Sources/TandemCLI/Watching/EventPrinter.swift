import Foundation
import Synchronization
import Tandem
import TandemClock
import TandemParty

/// How a watched session's events are printed.
enum EventStyle {
    /// Sentences for people (`PartyNarrator`): the default.
    case sentences
    /// Every event as `KIND key=value…`, its technical fields included (`--verbose`).
    case verbose
    /// One JSON object a line (`--json`).
    case json
}

/// Prints what happens in a watched session: sentences for people, one technical line per
/// event (`--verbose`), or one JSON object a line (`--json`); and keeps who did what last for
/// the status line, credited to whoever proposed the change, in every style. Given a screen
/// (`showOnScreen(with:)`: mpv's), the sentences go there too, in every style but JSON, which is
/// for programs.
final class EventPrinter: Sendable {
    let style: EventStyle
    private let narrator: Mutex<PartyNarrator>
    private let screen = Mutex<Screen?>(nil)

    /// A printer in `style`; `catchesUp` false for the host, whose session is new.
    init(style: EventStyle, catchesUp: Bool = true) {
        self.style = style
        narrator = Mutex(PartyNarrator(catchesUp: catchesUp))
    }

    /// Clears the status line first when standard output is a terminal.
    private static let overStatusLine = isatty(1) != 0 ? "\r\u{1B}[K" : ""

    /// The last change a person made, as its sentence ("Ana paused at 12:03"); "" before any.
    var lastAction: String { narrator.withLock { $0.lastAction } ?? "" }

    /// Shows every sentence on `screen` as well, from now on (mpv's, `WatchParty.showOnScreen(_:)`).
    func showOnScreen(with screen: @escaping @Sendable (String) -> Void) {
        guard style != .json else { return }
        self.screen.withLock { $0 = Screen(show: screen) }
    }

    /// Hands `sentences` to the screen, if there is one.
    private func putOnScreen(_ sentences: [String]) {
        guard let screen = screen.withLock({ $0 }) else { return }
        for sentence in sentences { screen.show(TerminalText.sanitized(sentence)) }
    }

    /// Where sentences are shown besides.
    /// Held in a struct: a bare closure held by the generic `Mutex` is stored in its generic
    /// form, and every access under the lock wraps it in a conversion each way and writes it
    /// back, one closure deeper each time, until a call overflows the stack.
    private struct Screen: Sendable {
        let show: @Sendable (String) -> Void
    }

    /// Prints `event` in the chosen style. Names, reasons and item names (which come from peers)
    /// reach the terminal without a control character.
    func emit(_ event: WatchPartyEvent) {
        let sentences = narrator.withLock { $0.take(event, at: Self.now) }
        putOnScreen(sentences)
        switch style {
        case .json:
            guard let line = event.jsonLine else { return }
            if StatusArea.shared.isActive { StatusArea.shared.printAbove(line) } else { printOutput(line) }
        case .verbose:
            show("\(event.name) \(TerminalText.sanitized(event.details))")
        case .sentences:
            for sentence in sentences { show(TerminalText.sanitized(sentence)) }
        }
    }

    /// The coordinator coordinates from now: the group's history follows.
    func coordinationBegan() { narrator.withLock { $0.coordinationBegan(at: Self.now) } }

    /// Once joined, sums up where the group is in one line when its history has come
    /// (`PartyNarrator.nextWake`), instead of telling the history; `position` gives the group's
    /// media time now. Returns once that is done (or when cancelled).
    func catchUp(position: @escaping @Sendable () -> Double?) async {
        while !Task.isCancelled {
            let (wake, joined) = narrator.withLock { ($0.nextWake, $0.hasJoined) }
            if joined, wake == nil { return }
            let wait = wake.map { min(.milliseconds(100), max(.milliseconds(1), $0 - Self.now)) } ?? .milliseconds(100)
            try? await Task.sleep(for: .nanoseconds(wait.nanoseconds))
            let now = Self.now
            let due = narrator.withLock { $0.nextWake.map { now >= $0 } ?? false }
            guard due else { continue }
            let lines = narrator.withLock { $0.tick(at: now, position: position()) }
            putOnScreen(lines)
            if style == .sentences { for line in lines { show(TerminalText.sanitized(line)) } }
        }
    }

    /// A line above the status line (and the chat prompt) at a terminal, which are drawn again
    /// after it; on standard output as it is otherwise.
    private func show(_ line: String) {
        if StatusArea.shared.isActive {
            StatusArea.shared.printAbove(line)
        } else {
            printOutput("\(EventPrinter.overStatusLine)\(line)")
        }
    }

    private static var now: LocalInstant { SystemClock().instant() }
}
