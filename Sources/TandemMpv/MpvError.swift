/// An error from the mpv backend: what was being done, and mpv's (or the system's) own words.
public struct MpvError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Code: Sendable, Equatable {
        case launch, connect, command, timeout, disconnected, malformed, invalidRequest, notProposed
    }

    private let code: Code
    /// What was being done: the command line, the socket path, the IPC command.
    public let context: String
    /// The detail: mpv's error text (`"property not found"`), or an explanation.
    public let detail: String

    private init(_ code: Code, context: String, detail: String) {
        self.code = code
        self.context = context
        self.detail = detail
    }

    /// A line for people to read.
    public var description: String {
        switch code {
        case .launch: "cannot run mpv (\(context)): \(detail)"
        case .connect: "cannot reach mpv's IPC socket \(context): \(detail)"
        case .command: "mpv refused \(context): \(detail)"
        case .timeout: "mpv did not answer \(context) in time\(detail.isEmpty ? "" : ": \(detail)")"
        case .disconnected: "mpv's IPC connection closed (\(context))\(detail.isEmpty ? "" : ": \(detail)")"
        case .malformed: "mpv sent something that is not JSON (\(context)): \(detail)"
        case .invalidRequest: "cannot \(context): \(detail)"
        case .notProposed: "cannot propose \(context) to the group: \(detail)"
        }
    }

    /// mpv could not be started, or exited before it was ready.
    public static func launch(_ commandLine: String, _ detail: String) -> MpvError { MpvError(.launch, context: commandLine, detail: detail) }
    /// Nothing listens at the IPC socket.
    public static func connect(_ path: String, _ detail: String) -> MpvError { MpvError(.connect, context: path, detail: detail) }
    /// mpv answered a command with an error (its `error` field).
    public static func command(_ command: String, _ detail: String) -> MpvError { MpvError(.command, context: command, detail: detail) }
    /// mpv did not answer in time.
    public static func timeout(_ command: String, _ detail: String = "") -> MpvError { MpvError(.timeout, context: command, detail: detail) }
    /// The connection ended (mpv quit, or the connection was closed).
    public static func disconnected(_ context: String, _ detail: String = "") -> MpvError {
        MpvError(.disconnected, context: context, detail: detail)
    }
    /// A line from mpv was not a JSON object.
    public static func malformed(_ line: String, _ detail: String) -> MpvError { MpvError(.malformed, context: line, detail: detail) }

    /// A request that the player refuses before asking mpv or the group (a rate out of range, a
    /// source mpv cannot open, a file that is not there).
    public static func invalidRequest(_ request: String, _ detail: String) -> MpvError {
        MpvError(.invalidRequest, context: request, detail: detail)
    }
    /// A change that the coordinator would not send to the group (the group would refuse it, or
    /// the session is gone).
    public static func notProposed(_ change: String, _ detail: String) -> MpvError { MpvError(.notProposed, context: change, detail: detail) }

    /// Whether mpv refused a command (as opposed to not answering, or the connection failing).
    public var isRefusal: Bool { code == .command }
    /// Whether the connection is gone.
    public var isDisconnection: Bool { code == .disconnected }
    /// Whether the player refused the request itself, before asking mpv or the group.
    public var isInvalidRequest: Bool { code == .invalidRequest }
    /// Whether the change could not be proposed to the group.
    public var isNotProposed: Bool { code == .notProposed }
}
