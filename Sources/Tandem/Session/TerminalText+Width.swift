extension TerminalText {
    /// The columns `text` takes at a terminal: two for each wide character (East Asian wide and
    /// full-width forms, emoji shown as pictures), none for a combining mark or a format
    /// character, one for the rest. A grapheme cluster (a letter and its accents, an emoji
    /// sequence) counts as its widest scalar.
    public static func displayWidth(_ text: String) -> Int {
        text.reduce(0) { $0 + width(of: $1) }
    }

    /// `text` cut to at most `width` columns, ending in `…` when anything was cut.
    public static func truncated(_ text: String, toWidth width: Int) -> String {
        guard width > 0 else { return "" }
        guard displayWidth(text) > width else { return text }
        var result = ""
        var used = 0
        for character in text {
            let columns = Self.width(of: character)
            if used + columns > width - 1 { break }
            result.append(character)
            used += columns
        }
        return result + "…"
    }

    /// One line of `fields` in their order, joined by `separator`, within `width` columns: while
    /// they do not fit, the field of lowest `priority` goes (the later one of equal priority
    /// first); the last field left is cut (`truncated(_:toWidth:)`) if even it does not fit.
    public static func fitting(_ fields: [(text: String, priority: Int)], width: Int, separator: String = "  ") -> String {
        var kept = fields.filter { !$0.text.isEmpty }
        let gap = displayWidth(separator)
        func total(_ fields: [(text: String, priority: Int)]) -> Int {
            fields.reduce(0) { $0 + displayWidth($1.text) } + gap * max(0, fields.count - 1)
        }
        // Bounded: one field fewer each turn.
        while kept.count > 1, total(kept) > width {
            let lowest = kept.map(\.priority).min()!
            let index = kept.lastIndex { $0.priority == lowest }!
            kept.remove(at: index)
        }
        return truncated(kept.map(\.text).joined(separator: separator), toWidth: width)
    }

    private static func width(of character: Character) -> Int {
        var widest = 0
        for scalar in character.unicodeScalars {
            widest = max(widest, width(of: scalar))
        }
        // A cluster made only of marks still takes a column where it stands alone.
        return character.unicodeScalars.count > 1 && widest == 0 ? 1 : widest
    }

    private static func width(of scalar: Unicode.Scalar) -> Int {
        let properties = scalar.properties
        switch properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format, .control: return 0
        default: break
        }
        if scalar.value == 0x200B { return 0 }
        if properties.isEmojiPresentation { return 2 }
        switch scalar.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
             0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
             0xFFE0...0xFFE6, 0x20000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }
}
