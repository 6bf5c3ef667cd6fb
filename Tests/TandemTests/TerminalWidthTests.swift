import Testing
import Tandem

/// The status line's arithmetic: columns as a terminal counts them, cutting, and dropping the
/// least useful fields first.
@Suite struct TerminalWidthTests {
    @Test func widthCountsColumnsNotCharacters() {
        #expect(TerminalText.displayWidth("Ana paused") == 10)
        #expect(TerminalText.displayWidth("映画") == 4)
        #expect(TerminalText.displayWidth("Ｔａｎｄｅｍ") == 12)
        #expect(TerminalText.displayWidth("⏸ 0:12.3") == 8)
        #expect(TerminalText.displayWidth("⌚ 🎬") == 5)
        #expect(TerminalText.displayWidth("e\u{301}") == 1)
        #expect(TerminalText.displayWidth("👩‍👩‍👧") == 2)
        #expect(TerminalText.displayWidth("") == 0)
    }

    @Test func truncationEndsInAnEllipsisWithinTheWidth() {
        #expect(TerminalText.truncated("short", toWidth: 10) == "short")
        #expect(TerminalText.truncated("a longer line", toWidth: 8) == "a longe…")
        // A wide character that would straddle the edge goes whole.
        let cut = TerminalText.truncated("映画映画映画", toWidth: 6)
        #expect(cut == "映画…")
        #expect(TerminalText.displayWidth(cut) <= 6)
        #expect(TerminalText.truncated("anything", toWidth: 0) == "")
    }

    @Test func theLeastUsefulFieldsGoFirst() {
        let fields: [(text: String, priority: Int)] = [
            ("▶ 0:12.3 / 0:20.0", 100), ("1.00x", 85), ("Ana, Ben", 80), ("clock ±0.20 ms", 30),
            ("sync 0.01 ms", 40), ("Ana paused at 0:12", 90),
        ]
        let wide = TerminalText.fitting(fields, width: 200)
        #expect(wide == "▶ 0:12.3 / 0:20.0  1.00x  Ana, Ben  clock ±0.20 ms  sync 0.01 ms  Ana paused at 0:12")
        #expect(TerminalText.fitting(fields, width: 60) == "▶ 0:12.3 / 0:20.0  1.00x  Ana, Ben  Ana paused at 0:12")
        #expect(TerminalText.fitting(fields, width: 50) == "▶ 0:12.3 / 0:20.0  1.00x  Ana paused at 0:12")
        // Narrower than the first field alone: it is cut, never wrapped.
        let narrow = TerminalText.fitting(fields, width: 10)
        #expect(narrow == "▶ 0:12.3 …")
        // Every width gives a line within it.
        for width in 1...120 {
            #expect(TerminalText.displayWidth(TerminalText.fitting(fields, width: width)) <= width, "width \(width)")
        }
    }
}
