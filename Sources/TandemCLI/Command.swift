/// One `tandem` subcommand.
protocol Command {
    /// The words that select it, for example `["bench", "decode"]`.
    static var words: [String] { get }
    /// One line of usage, after `tandem `.
    static var usage: String { get }
    /// What it does, in one line.
    static var summary: String { get }
    /// Runs the command with the words after its own; returns the exit status.
    static func run(_ arguments: [String]) async throws -> Int32
}
