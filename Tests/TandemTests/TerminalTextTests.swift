import Testing
import Tandem

/// Peers' strings at a terminal: control characters and escape sequences never get through,
/// printable text in any script does.
@Suite struct TerminalTextTests {
    @Test(arguments: [
        // Plain text, any script, emoji: untouched.
        ("Ana", "Ana"),
        ("Zoë 🎬 東京 مرحبا", "Zoë 🎬 東京 مرحبا"),
        ("", ""),
        // C0 controls, DEL and C1 controls go; tab, line feed and carriage return become spaces.
        ("a\u{0}b\u{7}c\u{8}d\u{7F}e\u{85}f", "abcdef"),
        ("two\nlines\r\tand a tab", "two lines  and a tab"),
        // CSI sequences: colours, cursor movement, clearing the screen.
        ("\u{1B}[31mred\u{1B}[0m", "red"),
        ("\u{1B}[2J\u{1B}[1;1Hhome", "home"),
        ("\u{1B}[?1049h", ""),
        // OSC (the window title, a hyperlink), ended by BEL or ST.
        ("\u{1B}]0;pwned\u{7}name", "name"),
        ("\u{1B}]8;;http://evil.example\u{1B}\\link\u{1B}]8;;\u{1B}\\", "link"),
        // DCS, and the C1 forms of CSI and OSC.
        ("\u{1B}Pq#0;2;0;0;0\u{1B}\\x", "x"),
        ("\u{9B}31mred", "red"),
        ("\u{9D}0;title\u{9C}ok", "ok"),
        // Two-character escapes, with intermediates.
        ("\u{1B}cafter reset", "after reset"),
        ("\u{1B}(Bascii", "ascii"),
        // An escape cut short swallows nothing but itself and what it introduced.
        ("end\u{1B}", "end"),
        ("end\u{1B}[12", "end"),
        // Bidirectional overrides, which reorder what follows on screen.
        ("file\u{202E}4pm.exe", "file4pm.exe"),
        ("\u{2066}isolated\u{2069}", "isolated"),
    ])
    func controlsAreRemovedAndTextKept(input: String, expected: String) {
        let shown = TerminalText.sanitized(input)
        #expect(shown == expected)
        #expect(!shown.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
    }

    @Test func sanitizingIsIdempotentAndBoundedByItsInput() {
        let hostile = String(repeating: "\u{1B}[31m\u{1B}]0;x\u{7}ok\u{0}\u{9B}1m", count: 1_000)
        let once = TerminalText.sanitized(hostile)
        #expect(once == String(repeating: "ok", count: 1_000))
        #expect(TerminalText.sanitized(once) == once)
    }
}
