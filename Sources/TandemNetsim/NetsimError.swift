import TandemNet

/// The proxy could not start: the impairment is impossible, or a socket call failed.
public struct NetsimError: Error, Hashable, CustomStringConvertible {
    private enum Code: Hashable { case impairment, socket }
    private let code: Code
    /// What went wrong, in one line.
    public let message: String

    /// The impairment cannot be simulated (see `Impairment.problem`).
    public static func impossibleImpairment(_ problem: String) -> NetsimError {
        NetsimError(code: .impairment, message: problem)
    }

    /// A socket call failed while setting up on `address`.
    public static func socket(_ error: SystemCallError, address: SocketAddress) -> NetsimError {
        NetsimError(code: .socket, message: "\(address): \(error)")
    }

    /// Whether the error is about the impairment, not the sockets.
    public var isImpossibleImpairment: Bool { code == .impairment }

    /// The message.
    public var description: String { message }
}
