extension String {
    /// The string as XML and HTML text or attribute value: `&`, `<`, `>`, `"` and `'` as entities,
    /// and the control characters XML 1.0 forbids as spaces, so any text makes a well-formed document.
    var markupEscaped: String {
        var escaped = ""
        escaped.reserveCapacity(utf8.count)
        for character in self {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default:
                let forbidden = character.unicodeScalars.contains { $0.value < 0x20 && $0 != "\t" && $0 != "\n" && $0 != "\r" }
                if forbidden { escaped += " " } else { escaped.append(character) }
            }
        }
        return escaped
    }
}
