#if canImport(Glibc)
import Glibc
#endif
import CTandemSystem
import Foundation
import Synchronization
import TandemNet
import TandemMediaTypes

/// A running mpv, started paused with its JSON IPC server on, and stopped on `terminate`:
/// `mpv --idle=no --input-ipc-server=PATH --pause --keep-open=yes [extra arguments] FILE`, or,
/// with no file, `--idle=once` and nothing to play until a `loadfile` over the IPC socket (after
/// which mpv quits, as with `--idle=no`, once it has nothing to play).
///
/// Its standard input is `/dev/null` (it never competes with the program for the terminal) and
/// its output goes to a log file, whose last lines explain a failure. It inherits no other
/// descriptor, and no `TANDEM_INVITE`. If this process dies, even by `SIGKILL`, the kernel
/// kills mpv too (`PR_SET_PDEATHSIG`): no mpv is left behind, re-parented to init.
///
/// A command line is public (`ps` shows it to every local user): `MpvPlayer` puts a local path
/// there, never a URL, which may carry a secret (the unguessable path of `MpvByteServer`, a
/// signed address); a URL is loaded over the IPC socket, which only this user can open.
///
/// Received media (a local file, or a byte source another participant streams) is opened with
/// `--access-references=no --ytdl=no`: the media came from someone else, and a playlist or a
/// reference in it that names http or another file must not make mpv fetch anything or run
/// youtube-dl (`MediaFile` does the same for FFmpeg, in TandemMedia).
public final class MpvProcess: Sendable {
    /// Where mpv's IPC server listens.
    public let ipcPath: String
    /// The full command line, for messages.
    public let commandLine: [String]
    /// mpv's standard output and error.
    public let logPath: String
    /// mpv's process identifier.
    public let processIdentifier: pid_t

    /// A directory of our own (the log, and the socket unless a path was chosen), removed at the end.
    private let directory: URL
    /// The wait status, once mpv has exited and been reaped.
    private let status = Mutex<Int32?>(nil)

    /// Starts mpv on `file`, or with nothing to play (`file` nil) until a `loadfile` over IPC.
    ///
    /// - Parameters:
    ///   - ipcPath: the socket to listen on; by default one in a fresh temporary directory.
    ///   - extraArguments: more mpv options, after Tandem's own (so `--vo=null --ao=null` runs
    ///     headless); they may override all but the IPC socket.
    ///   - restrictsReferences: whether to add `localFileArguments`; by default for a file
    ///     that is not a URL.
    ///   - executable: the mpv binary.
    public init(file: String?, ipcPath: String? = nil, extraArguments: [String] = [], restrictsReferences: Bool? = nil,
                executable: String = "/usr/bin/mpv") throws(MpvError) {
        let fileManager = FileManager.default
        directory = fileManager.temporaryDirectory.appendingPathComponent("tandem-mpv-\(UUID().uuidString.prefix(8))")
        let path = ipcPath ?? directory.appendingPathComponent("ipc.sock").path
        self.ipcPath = path
        logPath = directory.appendingPathComponent("mpv.log").path
        let restricts = restrictsReferences ?? file.map { !MediaLocation.isURL($0) } ?? false
        commandLine = [executable, file == nil ? "--idle=once" : "--idle=no", "--input-ipc-server=\(path)", "--pause", "--keep-open=yes"]
            + (restricts ? Self.localFileArguments : []) + extraArguments + (file.map { ["--", $0] } ?? [])
        let display = commandLine.joined(separator: " ")
        guard path.utf8.count <= UnixStreamSocket.maximumPathLength else {
            throw .launch(display, "the IPC socket path is too long (at most \(UnixStreamSocket.maximumPathLength) bytes): \(path)")
        }
        guard fileManager.isExecutableFile(atPath: executable) else { throw .launch(display, "\(executable) is not installed") }
        do {
            try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
            processIdentifier = try Self.spawn(commandLine, log: logPath)
        } catch {
            try? fileManager.removeItem(at: directory)
            throw .launch(display, "\(error)")
        }
    }

    /// Spawns `arguments` with standard input from `/dev/null`, output to `log`, and the signal
    /// mask and dispositions reset (a test runner or a server may block or ignore SIGTERM, and
    /// mpv would inherit that and never quit), in a child the kernel kills if this process dies,
    /// even by SIGKILL (`PR_SET_PDEATHSIG`, set in the child before exec: posix_spawn cannot).
    /// The death signal follows the thread that forked, not the process, so the fork happens on
    /// `ParentDeathSpawner`'s thread, which lives as long as the process.
    private static func spawn(_ arguments: [String], log: String) throws(SystemCallError) -> pid_t {
        let environment = childEnvironment()
        let result = ParentDeathSpawner.shared.run {
            var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
            defer { for argument in argv { free(argument) } }
            var variables: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
            defer { for variable in variables { free(variable) } }
            return tandem_spawn_dying_with_parent(arguments[0], &argv, &variables, log)
        }
        guard result > 0 else { throw SystemCallError(call: "fork/execve", errno: -result) }
        return result
    }

    /// What mpv is told for a local file: open what it names only, follow no reference in it, and
    /// hand nothing to youtube-dl.
    public static let localFileArguments = localFileOptions.map { "--\($0)=no" }

    /// What mpv is told to render each frame at its display time rather than up to 50 ms
    /// before it, so that `time-pos` changes when the frame shows
    /// (`MpvPlayer.Options.rendersAtDisplayTime`).
    public static let displayTimeArguments = ["--video-timing-offset=0"]

    /// The options `localFileArguments` turns off, by name, for a file loaded later
    /// (`MpvPlayer.replaceCurrentItem(with:)` sets them to `no` before it loads a local file).
    public static let localFileOptions = ["access-references", "ytdl"]

    /// Variables that never reach mpv: `TANDEM_INVITE` holds a session's secret, and mpv (its
    /// scripts, the programs they run) has no use for it.
    public static let withheldVariables: Set<String> = ["TANDEM_INVITE"]

    /// This process's environment as `NAME=VALUE` entries, without `withheldVariables`.
    static func childEnvironment() -> [String] {
        var entries: [String] = []
        var cursor = environ
        while let entry = cursor.pointee {
            let text = String(cString: entry)
            let name = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? text
            if !withheldVariables.contains(name) { entries.append(text) }
            cursor += 1
        }
        return entries
    }

    deinit {
        if isRunning {
            kill(processIdentifier, SIGKILL)
            _ = try? SystemCall.run("waitpid") { waitpid(processIdentifier, nil, 0) }
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Whether mpv still runs (reaping it once it has exited).
    public var isRunning: Bool {
        status.withLock { status in
            guard status == nil else { return false }
            var value: Int32 = 0
            let pid = processIdentifier
            do {
                guard let reaped = try SystemCall.run("waitpid", { waitpid(pid, &value, WNOHANG) }), reaped == pid else { return true }
                status = value
            } catch {
                // ECHILD: somebody else reaped it; it has gone either way.
                status = -1
            }
            return false
        }
    }

    /// mpv's exit status (128 + the signal when a signal ended it), once it has exited.
    public var exitStatus: Int32? {
        guard !isRunning, let value = status.withLock({ $0 }) else { return nil }
        guard value >= 0 else { return nil }
        return value & 0x7f == 0 ? (value >> 8) & 0xff : 128 + (value & 0x7f)
    }

    /// The last `count` lines mpv printed, to explain a failure.
    public func logTail(lines count: Int = 5) -> String {
        guard let data = FileManager.default.contents(atPath: logPath) else { return "" }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").suffix(count)
        return lines.joined(separator: " | ")
    }

    /// Waits up to `timeout` for mpv to exit on its own; true once it has.
    public func waitForExit(timeout: Duration) async -> Bool {
        let steps = max(1, Int(timeout / .milliseconds(20)))
        for _ in 0..<steps {
            guard isRunning else { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return !isRunning
    }

    /// Stops mpv: SIGTERM, then SIGKILL if it has not exited within `grace`. Removes the
    /// temporary directory (and with it a socket that Tandem chose).
    public func terminate(grace: Duration = .seconds(2)) async {
        if isRunning {
            kill(processIdentifier, SIGTERM)
            if !(await waitForExit(timeout: grace)) {
                kill(processIdentifier, SIGKILL)
                _ = await waitForExit(timeout: grace)
            }
        }
        try? FileManager.default.removeItem(at: directory)
    }
}

/// One thread, started on first use and never ended, on which children that must die with this
/// process are forked: `PR_SET_PDEATHSIG` fires when the thread that forked the child exits, and
/// the threads of Swift's concurrency pool (libdispatch workers) exit when idle, which would
/// kill a healthy mpv.
///
/// The job and its result pass through `exchange`; each side tests it with `changed` held and
/// waits on `changed`, which the other side broadcasts, after changing `exchange`, with it held
/// too, so that no change falls between a test and a wait. `turn` lets one caller in at a time.
final class ParentDeathSpawner: Sendable {
    /// The process's one spawner.
    static let shared = ParentDeathSpawner()

    /// A job handed to the thread. (A closure in a struct: a bare one held by a generic `Mutex`
    /// is wrapped in a conversion at every access.)
    private struct Job: Sendable {
        let work: @Sendable () -> pid_t
    }

    private struct Exchange {
        var job: Job?
        var result: pid_t?
    }

    private let exchange = Mutex(Exchange())
    /// Held while either side tests or changes `exchange` and waits.
    private let changed = NSCondition()
    /// Serialises callers: one job at a time.
    private let turn = NSLock()

    private init() {
        let thread = Thread { [self] in serve() }
        thread.name = "tandem-spawner"
        thread.start()
    }

    /// Runs `work` (which forks) on the spawner's thread and returns what it returned.
    func run(_ work: @escaping @Sendable () -> pid_t) -> pid_t {
        turn.lock()
        defer { turn.unlock() }
        changed.lock()
        defer { changed.unlock() }
        exchange.withLock { $0.job = Job(work: work) }
        changed.broadcast()
        while true {
            let result = exchange.withLock { exchange -> pid_t? in
                defer { exchange.result = nil }
                return exchange.result
            }
            if let result { return result }
            changed.wait()
        }
    }

    private func serve() {
        changed.lock()
        while true {
            let job = exchange.withLock { exchange -> Job? in
                defer { exchange.job = nil }
                return exchange.job
            }
            guard let job else {
                changed.wait()
                continue
            }
            changed.unlock()
            let value = job.work()
            changed.lock()
            exchange.withLock { $0.result = value }
            changed.broadcast()
        }
    }
}
