#if canImport(Glibc)
import Glibc
#endif
import TandemNet

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

    /// Listening on `address` failed with `error`: for a port already taken, what to do about it.
    static func cannotListen(on address: SocketAddress, _ error: any Error) -> CLIError {
        if let error = error as? SystemCallError, error.errno == EADDRINUSE {
            return .failure("port \(address.port) is in use on \(address.host) (another relay, or a host's?): "
                + "try --port 0 for a free one, or stop what holds it")
        }
        return .failure("cannot listen on \(address): \(error)")
    }
}
