#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A running mpv, started paused on one file with its JSON IPC server on, and stopped on
/// `terminate`:
/// `mpv --idle=no --input-ipc-server=PATH --pause --keep-open=yes [extra arguments] FILE`.
///
/// Its standard input is `/dev/null` (it never competes with the program for the terminal) and
/// its output goes to a log file, whose last lines explain a failure.
public final class MpvProcess: @unchecked Sendable {
    /// Where mpv's IPC server listens.
    public let ipcPath: String
    /// The full command line, for messages.
    public let commandLine: [String]
    /// mpv's standard output and error.
    public let logPath: String

    private let process: Process
    /// A directory of our own (the log, and the socket unless a path was chosen), removed at the end.
    private let directory: URL

    /// Starts mpv on `file`.
    ///
    /// - Parameters:
    ///   - ipcPath: the socket to listen on; by default one in a fresh temporary directory.
    ///   - extraArguments: more mpv options, after Tandem's own (so `--vo=null --ao=null` runs
    ///     headless); they may override all but the IPC socket.
    ///   - executable: the mpv binary.
    public init(file: String, ipcPath: String? = nil, extraArguments: [String] = [],
                executable: String = "/usr/bin/mpv") throws(MpvError) {
        let fileManager = FileManager.default
        directory = fileManager.temporaryDirectory.appendingPathComponent("tandem-mpv-\(UUID().uuidString.prefix(8))")
        let path = ipcPath ?? directory.appendingPathComponent("ipc.sock").path
        self.ipcPath = path
        logPath = directory.appendingPathComponent("mpv.log").path
        commandLine = [executable, "--idle=no", "--input-ipc-server=\(path)", "--pause", "--keep-open=yes"]
            + extraArguments + ["--", file]
        let display = commandLine.joined(separator: " ")
        guard path.utf8.count <= 100 else { throw .launch(display, "the IPC socket path is too long (at most 100 bytes): \(path)") }
        guard fileManager.isExecutableFile(atPath: executable) else { throw .launch(display, "\(executable) is not installed") }
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = Array(commandLine.dropFirst())
        process.standardInput = FileHandle.nullDevice
        do {
            try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
            guard fileManager.createFile(atPath: logPath, contents: nil), let log = FileHandle(forWritingAtPath: logPath) else {
                throw MpvError.launch(display, "cannot create \(logPath)")
            }
            process.standardOutput = log
            process.standardError = log
            try process.run()
            try? log.close()
        } catch let error as MpvError {
            try? fileManager.removeItem(at: directory)
            throw error
        } catch {
            try? fileManager.removeItem(at: directory)
            throw .launch(display, "\(error)")
        }
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: directory)
    }

    /// mpv's process identifier.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Whether mpv still runs.
    public var isRunning: Bool { process.isRunning }

    /// mpv's exit status, once it has exited.
    public var exitStatus: Int32? { process.isRunning ? nil : process.terminationStatus }

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
            guard process.isRunning else { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return !process.isRunning
    }

    /// Stops mpv: SIGTERM, then SIGKILL if it has not exited within `grace`. Removes the
    /// temporary directory (and with it a socket that Tandem chose).
    public func terminate(grace: Duration = .seconds(2)) async {
        if process.isRunning {
            process.terminate()
            if !(await waitForExit(timeout: grace)) {
                kill(process.processIdentifier, SIGKILL)
                _ = await waitForExit(timeout: grace)
            }
        }
        try? FileManager.default.removeItem(at: directory)
    }
}
