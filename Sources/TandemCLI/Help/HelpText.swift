import Foundation

/// The texts of `tandem --help`, `tandem help COMMAND` and `tandem bench --help`: the commands
/// people use first, the relay's and the tools', then the benchmarks under one entry; a command's
/// own help explains each of its options, wrapped to 80 columns.
enum HelpText {
    /// The width the texts are wrapped to: a terminal's narrowest usual width.
    static let width = 80

    /// The commands by the group `tandem --help` lists them under.
    static let groups: [(title: String, commands: [String])] = [
        ("watch together", ["host", "join"]),
        ("on your own", ["play", "probe"]),
        ("run a relay, and tools", ["serve", "clock serve", "clock sync", "netsim"]),
    ]

    /// `tandem --help`.
    @MainActor static func overview(_ commands: [any Command.Type]) -> String {
        var text = "usage: tandem COMMAND [OPTIONS]\n\nTandem plays media in step with other people's players, wherever they are.\n"
        for group in groups {
            text += "\n\(group.title):\n"
            for name in group.commands {
                guard let command = commands.first(where: { $0.name == name }) else { continue }
                text += entry(name, command.summary)
            }
        }
        text += "\nmeasure:\n" + entry("bench SUITE", "timing accuracy, throughput and the relay's cost (tandem bench --help lists the suites)")
        text += "\n" + wrap("tandem help COMMAND (or tandem COMMAND --help) explains a command's options; tandem --version says which build this is.")
        return text
    }

    /// `tandem bench --help` or `tandem clock --help`: the commands starting with `prefix`.
    @MainActor static func family(_ prefix: String, _ commands: [any Command.Type]) -> String {
        let members = commands.filter { $0.words.first == prefix }
        var text = "usage: tandem \(prefix) \(prefix == "bench" ? "SUITE" : "COMMAND") [OPTIONS]\n\n"
        for command in members { text += entry(command.name, command.summary) }
        let advice = prefix == "bench" ? "; build with `swift build -c release` for figures worth comparing" : ""
        text += "\n" + wrap("tandem help \(prefix) NAME explains one\(advice).")
        return text
    }

    /// `tandem help COMMAND`: the synopsis, what it does, and every option explained.
    static func command(_ command: any Command.Type) -> String {
        var text = wrapSynopsis("usage: tandem \(command.usage)") + "\n" + wrap(sentence(command.summary))
        if !command.options.isEmpty {
            text += "\noptions:\n"
            for option in command.options { text += columns("  " + option.form, option.text, at: 26) }
        }
        return text
    }

    /// The end of a usage error's line, pointing to the help: printed instead of the whole
    /// synopsis, so that the error stays one line.
    static func hint(_ command: any Command.Type) -> String {
        ": tandem help \(command.name) explains its options"
    }

    private static func entry(_ name: String, _ summary: String) -> String {
        columns("  tandem " + name, summary, at: 24)
    }

    /// `head`, then `text` from `column` on, wrapped there; `head` on a line of its own when it
    /// reaches the column.
    static func columns(_ head: String, _ text: String, at column: Int) -> String {
        let indent = String(repeating: " ", count: column)
        let body = wrapLines(text, width: width - column).map { indent + $0 }
        guard head.count + 2 <= column, var first = body.first else { return ([head] + body).joined(separator: "\n") + "\n" }
        first = head + first.dropFirst(head.count)
        return ([first] + body.dropFirst()).joined(separator: "\n") + "\n"
    }

    /// `summary` as a sentence: capitalised, with a full stop.
    private static func sentence(_ summary: String) -> String {
        guard let first = summary.first else { return summary }
        let body = first.uppercased() + summary.dropFirst()
        return body.hasSuffix(".") || body.hasSuffix(")") ? body : body + "."
    }

    /// `text` wrapped at spaces to the full width.
    static func wrap(_ text: String) -> String {
        wrapLines(text, width: width).joined(separator: "\n") + "\n"
    }

    /// `text`'s words in lines of at most `width` characters (a longer word alone on its line).
    static func wrapLines(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if line.isEmpty {
                line = String(word)
            } else if line.count + 1 + word.count > width {
                lines.append(line)
                line = String(word)
            } else {
                line += " " + word
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    /// A synopsis wrapped between its bracketed options (never inside one), continuation lines
    /// indented under the command.
    static func wrapSynopsis(_ synopsis: String) -> String {
        var pieces: [String] = []
        var current = ""
        var depth = 0
        for character in synopsis {
            if character == "[" { depth += 1 }
            if character == "]" { depth -= 1 }
            if character == " ", depth == 0 {
                if !current.isEmpty { pieces.append(current) }
                current = ""
            } else {
                current.append(character)
            }
        }
        if !current.isEmpty { pieces.append(current) }
        let indent = String(repeating: " ", count: 7)
        var lines: [String] = []
        var line = ""
        for piece in pieces {
            if line.isEmpty { line = piece } else if line.count + 1 + piece.count > width {
                lines.append(line)
                line = indent + piece
            } else {
                line += " " + piece
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines.joined(separator: "\n") + "\n"
    }
}
