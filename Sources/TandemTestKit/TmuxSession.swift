import Foundation

/// A detached tmux session running one shell command at a real terminal of a chosen size: how
/// the tests of the terminal interface type keys at `tandem` and read its screen back.
///
/// tmux's output goes through a file, not a pipe: the tmux server that `new-session` starts
/// would hold a pipe open, and reading it to its end would never finish. Every tmux client call
/// is bounded (10 s). `kill()` ends the session and what runs in it.
public struct TmuxSession: Sendable {
    /// Where tmux is expected.
    public static let executablePath = "/usr/bin/tmux"

    /// Whether tmux is installed (tests that need it are enabled on this).
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: executablePath) }

    /// The session's name, for `-t`.
    public let name: String

    /// Starts `command` in a new detached session named `prefix-XXXXXXXX`, `width` × `height`.
    public static func start(_ command: String, prefix: String = "tandem-test", width: Int = 200, height: Int = 12) throws -> TmuxSession {
        let session = TmuxSession(name: "\(prefix)-\(UUID().uuidString.prefix(8))")
        _ = try run(["new-session", "-d", "-s", session.name, "-x", "\(width)", "-y", "\(height)", command])
        return session
    }

    /// Runs a tmux client with `arguments` and returns what it printed.
    public static func run(_ arguments: [String]) throws -> String {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("tmux-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: outputPath.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: outputPath) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executablePath)
        process.arguments = arguments
        let output = try FileHandle(forWritingTo: outputPath)
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Bounded: a tmux client returns at once (`new-session -d` leaves its server behind).
        // Foundation's `isRunning` stays true while the server it started lives on (the server
        // inherits what Foundation watches), so the client's own state is read instead.
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && !hasExited(process.processIdentifier) && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning { process.terminate() }
        try output.close()
        return try String(contentsOf: outputPath, encoding: .utf8)
    }

    /// Whether process `pid` has exited (it is gone or a zombie), from `/proc/PID/stat`.
    private static func hasExited(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }

    /// What the pane shows now, a line a row.
    public func screen() throws -> String { try Self.run(["capture-pane", "-t", name, "-p"]) }

    /// Types `keys` (tmux key names: `" "`, `"Right"`, `"q"`) into the pane.
    public func sendKeys(_ keys: String...) throws { _ = try Self.run(["send-keys", "-t", name] + keys) }

    /// Resizes the session's window to `width` × `height`, as a person dragging its corner; the
    /// program in it gets SIGWINCH.
    public func resize(width: Int, height: Int) throws {
        _ = try Self.run(["resize-window", "-t", name, "-x", "\(width)", "-y", "\(height)"])
    }

    /// Ends the session and what runs in it.
    public func kill() { _ = try? Self.run(["kill-session", "-t", name]) }

    /// The first `tandem://` invite in the file at `path` (a host's output, `tee`d), once it is
    /// there, waiting at most `seconds`; nil if none came.
    public static func invite(inLog path: String, within seconds: Double = 20) -> String? {
        var invite: String?
        _ = waitFor(seconds) {
            invite = (try? String(contentsOfFile: path, encoding: .utf8))?
                .split(whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == " " }).first { $0.hasPrefix("tandem://") }.map(String.init)
            return invite != nil
        }
        return invite
    }
}

/// Whether `condition` holds within `seconds`, looked at every 50 ms: for the tests of real
/// processes (a terminal, a child's output), whose time is real.
public func waitFor(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: 0.05)
    }
    return try condition()
}
