import Foundation
import Synchronization

/// `tandem serve` as its own process on loopback, for tests that attack the relay as a stranger
/// would: started on a free port, stopped with SIGTERM (and killed if it lingers).
public final class ServeProcess: Sendable {
    /// The port it listens on, TCP and UDP.
    public let port: UInt16
    private let process = Process()
    private let output = Pipe()
    private let printed = Printed()

    /// What it printed after its first line, read on the pipe's own thread.
    private final class Printed: Sendable {
        let text = Mutex("")
    }

    /// Starts `tandem serve --bind 127.0.0.1 --port 0` with `arguments` added, and waits (at
    /// most 20 s) for the line that says where it listens. With `descriptorLimit`, it runs
    /// under that many open files at most (through the shell's `ulimit -n`). A measurement may
    /// name another build (a release one) in `TANDEM_EXECUTABLE`. `environment` adds variables
    /// to the ones the test runs with.
    public init(arguments: [String] = [], descriptorLimit: Int? = nil, environment: [String: String] = [:]) throws {
        let path = ProcessInfo.processInfo.environment["TANDEM_EXECUTABLE"] ?? TandemProcess.executablePath
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw FixtureError("the tandem executable is not built at \(path); run `swift build` first")
        }
        let serve = ["serve", "--bind", "127.0.0.1", "--port", "0"] + arguments
        if let descriptorLimit {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -n \(descriptorLimit) && exec \"$0\" \"$@\"", path] + serve
        } else {
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = serve
        }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        try process.run()
        var text = ""
        let reader = output.fileHandleForReading
        let deadline = Date().addingTimeInterval(20)
        while !text.contains("\n"), Date() < deadline {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let line = text.split(separator: "\n").first,
              let address = line.split(separator: " ").first(where: { $0.hasPrefix("127.0.0.1:") }),
              let port = UInt16(address.dropFirst("127.0.0.1:".count)) else {
            process.terminate()
            throw FixtureError("tandem serve did not say where it listens: \(text)")
        }
        self.port = port
        // Keep reading, so that it never blocks on a full pipe, and keep what it prints (what
        // came with the first line included).
        let printed = printed
        if let newline = text.firstIndex(of: "\n") { printed.text.withLock { $0 = String(text[text.index(after: newline)...]) } }
        reader.readabilityHandler = { handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            printed.text.withLock { $0 += text }
        }
    }

    /// Everything it printed after its first line so far (statistics lines, its last words).
    public var printedText: String { printed.text.withLock { $0 } }

    /// Its process identifier.
    public var pid: Int32 { process.processIdentifier }

    /// Whether it still runs.
    public var isRunning: Bool { process.isRunning }

    /// Stops it with SIGTERM, waiting at most 5 s before killing it.
    public func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        output.fileHandleForReading.readabilityHandler = nil
    }

    deinit { stop() }
}
