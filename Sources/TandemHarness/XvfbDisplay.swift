#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A virtual X display (Debian's `xvfb`, `/usr/bin/Xvfb`) for mpv to draw into with `--vo=x11`:
/// started on a free display number, stopped by `stop()` (or deinit).
///
/// A display number is free when neither its lock file (`/tmp/.XN-lock`) nor its socket
/// (`/tmp/.X11-unix/XN`) exists; the server listens on its UNIX socket only (`-nolisten tcp`),
/// and is ready once that socket appears. Give mpv `environment` (`DISPLAY=:N`).
///
/// ```swift
/// let display = try XvfbDisplay.start()
/// defer { display.stop() }
/// let host = try WatchProcess.host(media: [clip], mpv: .init(socket: path, arguments: "--vo=x11 --ao=null"),
///                                  environment: display.environment)
/// ```
public final class XvfbDisplay: Sendable {
    /// Why a display could not be started.
    public struct StartError: Error, CustomStringConvertible {
        /// What went wrong, in a sentence.
        public let description: String
    }

    /// The display number (`:N`).
    public let number: Int
    private let process: Process

    /// `DISPLAY=:N`, for a child's environment.
    public var environment: [String: String?] { ["DISPLAY": ":\(number)"] }

    /// Where Xvfb is installed.
    public static let executable = "/usr/bin/Xvfb"

    /// Whether Xvfb is installed.
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: executable) }

    private init(number: Int, process: Process) {
        self.number = number
        self.process = process
    }

    /// Starts Xvfb on the first free display number from `first` (tried up to 50 numbers, and
    /// again on the next one should another process take the number meanwhile), a screen of
    /// `width`×`height` at 24 bits; waits at most `timeout` seconds for it to listen.
    public static func start(first: Int = 90, width: Int = 640, height: Int = 480, timeout: Double = 10) throws -> XvfbDisplay {
        guard isInstalled else { throw StartError(description: "\(executable) is not installed (scripts/install-deps installs xvfb)") }
        let fileManager = FileManager.default
        // Bounded: 50 display numbers.
        for number in first..<(first + 50) {
            let socket = "/tmp/.X11-unix/X\(number)"
            guard !fileManager.fileExists(atPath: "/tmp/.X\(number)-lock"), !fileManager.fileExists(atPath: socket) else { continue }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = [":\(number)", "-screen", "0", "\(width)x\(height)x24", "-nolisten", "tcp", "-noreset"]
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let deadline = Date().addingTimeInterval(timeout)
            // Bounded by the deadline: every 10 ms.
            while Date() < deadline, process.isRunning, !fileManager.fileExists(atPath: socket) {
                Thread.sleep(forTimeInterval: 0.01)
            }
            if process.isRunning, fileManager.fileExists(atPath: socket) { return XvfbDisplay(number: number, process: process) }
            // Another server took the number first (Xvfb then exits): the next one.
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
        throw StartError(description: "no free X display from :\(first) to :\(first + 49), or Xvfb did not start within \(timeout) s")
    }

    deinit { stop() }

    /// Stops the server (SIGTERM, then SIGKILL after 2 s) and reaps it.
    public func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(2)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
