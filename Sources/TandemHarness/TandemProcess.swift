import Foundation

/// The real `tandem` executable, run as a separate process, as a user runs it.
public struct TandemProcess {
    /// What a finished run printed and how it exited.
    public struct Output: Sendable {
        /// The exit status.
        public let status: Int32
        /// Everything written to standard output.
        public let standardOutput: String
        /// Everything written to standard error.
        public let standardError: String
    }

    /// The built executable: beside the test bundle, in the same build directory.
    public static var executablePath: String {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [bundle, bundle.deletingLastPathComponent()].map { $0.appendingPathComponent("tandem").path }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[0]
    }

    /// Runs `tandem` with `arguments` and no standard input, and waits at most `timeout` seconds
    /// (then kills it, and the run counts as failed with status -9).
    public static func run(_ arguments: [String], timeout: Double = 60) throws -> Output {
        let path = executablePath
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw FixtureError("the tandem executable is not built at \(path); run `swift build` first")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Read both pipes while the process runs, so that a full pipe never blocks it.
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data()
        nonisolated(unsafe) var errData = Data()
        DispatchQueue.global().async(group: group) { outData = output.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: group) { errData = errors.fileHandleForReading.readDataToEndOfFile() }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        var killed = false
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            killed = true
        }
        process.waitUntilExit()
        group.wait()
        return Output(
            status: killed ? -9 : process.terminationStatus,
            standardOutput: String(decoding: outData, as: UTF8.self),
            standardError: String(decoding: errData, as: UTF8.self)
        )
    }
}
