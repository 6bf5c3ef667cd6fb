/// Text that came from a peer, made safe to show at a terminal.
///
/// Display names, reasons, chat, item names and the relay's error texts are chosen by someone
/// else. Written to a terminal as they are, control characters and escape sequences in them
/// could move the cursor, rewrite the status line, change the window's title, or hide and fake
/// other lines. `sanitized(_:)` keeps printable Unicode and removes the rest; every front end
/// (the `tandem` command's status line and events, the samples) shows peers' strings through it.
public enum TerminalText {
    /// `text` without control characters: C0 (U+0000–U+001F), DEL (U+007F) and C1
    /// (U+0080–U+009F) are removed, and with them each whole escape sequence (ESC or a C1
    /// introducer with its parameters, up to its final character or string terminator); a tab,
    /// line feed or carriage return becomes one space, so that words stay apart on one line.
    /// The bidirectional embedding, override and isolate controls (U+202A–U+202E,
    /// U+2066–U+2069), which reorder what follows them on screen, are removed too. Everything
    /// else, printable Unicode in any script and emoji, is kept as it is.
    public static func sanitized(_ text: String) -> String {
        // Most text is plain: return it untouched without building a copy.
        guard text.unicodeScalars.contains(where: isRemoved) else { return text }
        var result = String.UnicodeScalarView()
        var scalars = text.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            switch scalar.value {
            case 0x09, 0x0A, 0x0D:
                result.append(" ")
            case 0x1B:
                skipEscape(after: &scalars)
            case 0x9B:
                skipControlSequence(&scalars)
            case 0x90, 0x98, 0x9D, 0x9E, 0x9F:
                skipControlString(&scalars)
            default:
                if !isRemoved(scalar) { result.append(scalar) }
            }
        }
        return String(result)
    }

    /// Whether `scalar` is one that `sanitized(_:)` removes or replaces.
    private static func isRemoved(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// Skips what follows an ESC: a control sequence (`ESC [`), a control string (`ESC ]`,
    /// `ESC P`, `ESC X`, `ESC ^`, `ESC _`), or intermediates (U+0020–U+002F) and one final
    /// character.
    private static func skipEscape(after scalars: inout String.UnicodeScalarView.Iterator) {
        guard let next = scalars.next() else { return }
        switch next {
        case "[": skipControlSequence(&scalars)
        case "]", "P", "X", "^", "_": skipControlString(&scalars)
        default:
            var current = next
            while (0x20...0x2F).contains(current.value) {
                guard let following = scalars.next() else { return }
                current = following
            }
        }
    }

    /// Skips a control sequence's parameters and intermediates, through its final character
    /// (U+0040–U+007E); anything else ends it too, and is dropped with it.
    private static func skipControlSequence(_ scalars: inout String.UnicodeScalarView.Iterator) {
        while let scalar = scalars.next() {
            if !(0x20...0x3F).contains(scalar.value) { return }
        }
    }

    /// Skips a control string (an operating system command, a device control string) through
    /// its terminator: BEL, ST (U+009C) or `ESC \`.
    private static func skipControlString(_ scalars: inout String.UnicodeScalarView.Iterator) {
        while let scalar = scalars.next() {
            switch scalar.value {
            case 0x07, 0x9C: return
            case 0x1B:
                // `ESC \` ends the string; so does any other escape (a new sequence starts, and
                // is dropped with this one).
                _ = scalars.next()
                return
            default: continue
            }
        }
    }
}
