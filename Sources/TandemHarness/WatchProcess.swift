#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import TandemClock
import TandemMpv

/// A running `tandem host` or `tandem join`, driven as a separate process: commands go to its
/// standard input a line at a time, and its `--events json` lines are read as they come.
///
/// Every wait is bounded by a timeout; `kill()` (or deinit) ends the process if it still runs.
public final class WatchProcess: Sendable {
    /// A name for reports (the participant's name, usually).
    public let name: String
    /// When the process was started, on the raw CLOCK_MONOTONIC (ns).
    public let startedNanoseconds: Int64

    private let process: Process
    private let input: FileHandle?
    private let output = SharedOutput()
    private let readers = DispatchGroup()

    /// What the readers collect, shared with their threads (which may outlive a wait).
    private final class SharedOutput: Sendable {
        struct Collected {
            var lines: [(receivedNanoseconds: Int64, line: String)] = []
            var events: [WatchEvent] = []
            var standardError = Data()
        }

        let state = Mutex(Collected())
    }

    /// Starts `executable` with `arguments`; with `acceptsCommands`, its standard input is a pipe
    /// that `send(_:)` writes to, otherwise it reads an empty standard input. `environment` adds
    /// (or, with nil values, removes) variables of this process's environment for the child:
    /// `["TANDEM_INVITE": invite]` passes an invite the way people should, out of `ps`'s sight.
    public init(executable: String, arguments: [String], name: String, acceptsCommands: Bool,
                environment: [String: String?] = [:]) throws {
        // Writing to a peer that has died must fail, not kill this process.
        signal(SIGPIPE, SIG_IGN)
        self.name = name
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty {
            var inherited = ProcessInfo.processInfo.environment
            for (variable, value) in environment { inherited[variable] = value }
            process.environment = inherited
        }
        let inputPipe = acceptsCommands ? Pipe() : nil
        process.standardInput = inputPipe ?? FileHandle.nullDevice
        input = inputPipe?.fileHandleForWriting
        let outputPipe = Pipe()
        let errors = Pipe()
        process.standardOutput = outputPipe
        process.standardError = errors
        startedNanoseconds = SystemClock().instant().nanoseconds
        try process.run()
        let clock = SystemClock()
        DispatchQueue.global().async(group: readers) { [output = self.output] in
            var pending = Data()
            // Ends at end of file, which comes when the process exits or is killed.
            while true {
                let chunk = outputPipe.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                let now = clock.instant().nanoseconds
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    let event = WatchEvent.parse(line, receivedAt: now)
                    output.state.withLock { collected in
                        collected.lines.append((now, line))
                        if let event { collected.events.append(event) }
                    }
                }
            }
        }
        DispatchQueue.global().async(group: readers) { [output = self.output] in
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            output.state.withLock { $0.standardError = data }
        }
    }

    /// Starts `tandem join` with the invite in `TANDEM_INVITE` rather than on its command line
    /// (where `ps` would show it to every local user): `tandem join FILE ARGUMENTS…`.
    public static func join(invite: String, file: String, arguments: [String], name: String,
                            acceptsCommands: Bool = false, executable: String = TandemProcess.executablePath) throws -> WatchProcess {
        try WatchProcess(executable: executable, arguments: ["join", file] + arguments, name: name,
                         acceptsCommands: acceptsCommands, environment: ["TANDEM_INVITE": invite])
    }

    deinit {
        kill()
    }

    /// Every line printed on standard output so far.
    public var lines: [String] { output.state.withLock { $0.lines.map(\.line) } }

    /// Every line printed on standard output so far, each with the instant this process read it
    /// (raw CLOCK_MONOTONIC ns).
    public var timedLines: [(receivedNanoseconds: Int64, line: String)] { output.state.withLock { $0.lines } }

    /// Every JSON event printed so far, in order.
    public var events: [WatchEvent] { output.state.withLock { $0.events } }

    /// What it wrote on standard error (complete once it has exited and `waitForExit` returned).
    public var standardError: String { output.state.withLock { String(decoding: $0.standardError, as: UTF8.self) } }

    /// The process id.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Writes `command` and a newline to its standard input; returns the raw CLOCK_MONOTONIC
    /// instant just before the write (ns), or nil when the write failed.
    @discardableResult
    public func send(_ command: String) -> Int64? {
        guard let input else { return nil }
        let instant = SystemClock().instant().nanoseconds
        do {
            try input.write(contentsOf: Data((command + "\n").utf8))
            return instant
        } catch {
            return nil
        }
    }

    /// Closes its standard input.
    public func closeInput() {
        try? input?.close()
    }

    /// Waits at most `timeout` seconds until `condition` holds for the events so far; returns
    /// whether it did.
    public func waitUntil(timeout: Double, _ condition: ([WatchEvent]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if condition(events) { return true }
            // Past the deadline, or nothing more can come: the process is gone and read to its end.
            if Date() >= deadline || !process.isRunning && readersDone() { return condition(events) }
            Thread.sleep(forTimeInterval: 0.005)
        }
    }

    /// Waits at most `timeout` seconds for a line on standard output that starts with `prefix`.
    public func waitForLine(startingWith prefix: String, timeout: Double) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let line = lines.first(where: { $0.hasPrefix(prefix) }) { return line }
            if !process.isRunning && readersDone() { return lines.first { $0.hasPrefix(prefix) } }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return nil
    }

    /// Waits at most `timeout` seconds for it to exit; returns its exit status, or nil when it
    /// still runs (it is then left running: call `kill()`).
    public func waitForExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        guard !process.isRunning else { return nil }
        process.waitUntilExit()
        // Its pipes reach end of file once it has exited (unless a child holds them).
        _ = readers.wait(timeout: .now() + 5)
        return process.terminationStatus
    }

    /// Kills it with SIGKILL if it still runs, and reaps it.
    public func kill() {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        _ = readers.wait(timeout: .now() + 5)
    }

    private func readersDone() -> Bool {
        readers.wait(timeout: .now()) == .success
    }
}

// MARK: Parties on loopback

extension WatchProcess {
    /// How a watch process runs mpv: `--player mpv --mpv-ipc SOCKET --mpv-args ARGUMENTS`,
    /// headless by default.
    public struct MpvSettings: Sendable {
        /// mpv's IPC socket, which a test connects to as another tool would.
        public var socket: String
        /// mpv's own options (`--mpv-args`), one string split at spaces.
        public var arguments: String

        /// mpv at `socket`, with `arguments` (headless: `--vo=null --ao=null`).
        public init(socket: String, arguments: String = "--vo=null --ao=null") {
            self.socket = socket
            self.arguments = arguments
        }

        /// The command-line options for `tandem host` or `join`.
        public var commandLine: [String] { ["--player", "mpv", "--mpv-ipc", socket, "--mpv-args", arguments] }
    }

    /// Starts `tandem host MEDIA… --bind 127.0.0.1 --port 0 --session-epoch 0 --name NAME --events
    /// json` (its session clock is its raw monotonic clock, the one mpv's replies are stamped on),
    /// with mpv when `mpv` is given, then `arguments`; it takes commands on its standard input.
    /// `environment` as for `init`.
    public static func host(media: [String], name: String = "ana", mpv: MpvSettings? = nil, arguments: [String] = [],
                            environment: [String: String?] = [:],
                            executable: String = TandemProcess.executablePath) throws -> WatchProcess {
        try WatchProcess(executable: executable,
                         arguments: ["host"] + media + ["--bind", "127.0.0.1", "--port", "0", "--session-epoch", "0", "--name", name,
                                                        "--events", "json"] + (mpv?.commandLine ?? []) + silent(mpv, arguments) + arguments,
                         name: name, acceptsCommands: true, environment: environment)
    }

    /// `--audio none` and `--video none` for the built-in player unless `arguments` choose its
    /// sound or its picture: a test never plays into the sound server of whoever runs it, and
    /// says so rather than relying on having no terminal.
    private static func silent(_ mpv: MpvSettings?, _ arguments: [String]) -> [String] {
        guard mpv == nil else { return [] }
        return (arguments.contains("--audio") ? [] : ["--audio", "none"]) + (arguments.contains("--video") ? [] : ["--video", "none"])
    }

    /// Starts `tandem join MEDIA… --name NAME --events json` on `invite` (passed in
    /// `TANDEM_INVITE`), with mpv when `mpv` is given, then `arguments`; it takes commands on
    /// its standard input. `environment` as for `init`.
    public static func join(invite: String, media: [String], name: String, mpv: MpvSettings? = nil, arguments: [String] = [],
                            environment: [String: String?] = [:],
                            executable: String = TandemProcess.executablePath) throws -> WatchProcess {
        var variables = environment
        variables["TANDEM_INVITE"] = invite
        return try WatchProcess(executable: executable,
                                arguments: ["join"] + media + ["--name", name, "--events", "json"] + (mpv?.commandLine ?? [])
                                    + silent(mpv, arguments) + arguments,
                                name: name, acceptsCommands: true, environment: variables)
    }

    /// The invite a host prints (`tandem://…`), waited for at most `timeout` seconds; nil when
    /// none came.
    public func invite(timeout: Double = 20) -> String? {
        waitForLine(startingWith: "tandem://", timeout: timeout)
    }

    /// Waits at most `timeout` seconds for its `joined` event; whether it came.
    public func waitUntilJoined(timeout: Double = 30) -> Bool {
        waitUntil(timeout: timeout) { $0.contains { $0.event == "joined" } }
    }
}

extension MpvConnection {
    /// How far mpv's own position (`audio-pts`, the clock it times its pictures by, good to a
    /// fraction of a ms) leads the shared timeline of `play` (a host's `play` event), in ms:
    /// `count` readings `spacing` apart, sorted. The timeline is placed on this machine's raw
    /// monotonic clock, on which the replies are stamped: the host's session clock must be that
    /// clock (`WatchProcess.host` gives `--session-epoch 0`).
    public func leadsOverTimeline(of play: WatchEvent, count: Int = 10, spacing: Duration = .milliseconds(150)) async throws -> [Double] {
        var leads: [Double] = []
        for _ in 0..<count {
            let reply = try await command([.string("get_property"), .string("audio-pts")])
            if let position = reply.value.double, let effective = play.effectiveSessionNanoseconds, let start = play.mediaTime {
                leads.append((position - (start + Double(reply.midpoint - effective) / 1e9)) * 1000)
            }
            try await Task.sleep(for: spacing)
        }
        return leads.sorted()
    }
}
