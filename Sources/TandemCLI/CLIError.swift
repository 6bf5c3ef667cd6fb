/// An error the command line reports as one line on standard error, with an exit code.
struct CLIError: Error, CustomStringConvertible {
    /// The line printed after `tandem: `.
    let message: String
    /// The process's exit status.
    let exitCode: Int32

    var description: String { message }

    /// The arguments were wrong: exit status 64 (EX_USAGE).
    static func usage(_ message: String) -> CLIError { CLIError(message: message, exitCode: 64) }

    /// The command failed while doing its work: exit status 1.
    static func failure(_ message: String) -> CLIError { CLIError(message: message, exitCode: 1) }
}
