/// One `tandem` subcommand.
protocol Command {
    /// The words that select it, for example `["bench", "decode"]`.
    static var words: [String] { get }
    /// The synopsis, after `tandem `: every option in brackets, with its default where it has one.
    static var usage: String { get }
    /// What it does, in one line.
    static var summary: String { get }
    /// Every option explained, for `tandem help COMMAND` and `tandem COMMAND --help`.
    static var options: [OptionHelp] { get }
    /// Runs the command with the words after its own; returns the exit status.
    static func run(_ arguments: [String]) async throws -> Int32
}

extension Command {
    /// No options explained beyond the synopsis.
    static var options: [OptionHelp] { [] }
    /// The name people type: `host`, `bench sync`.
    static var name: String { words.joined(separator: " ") }
}

/// One option of a command, as `tandem help COMMAND` explains it.
struct OptionHelp {
    /// How it is written: `-n, --name NAME`.
    let form: String
    /// What it does, with its default.
    let text: String

    /// `form` explained by `text`.
    init(_ form: String, _ text: String) {
        self.form = form
        self.text = text
    }
}
