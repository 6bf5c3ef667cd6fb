import Foundation
import TandemHarness

/// Files that tests make at test time: damaged copies of the samples, and clips made with the
/// ffmpeg command line. Each lives in a fresh temporary directory.
public struct MediaFixtures {
    /// The directory holding this fixture's files; removed by `remove()`.
    public let directory: URL

    /// A fresh, empty directory.
    public init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("tandem-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Deletes the directory and everything in it.
    public func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// The path of `name` in the directory.
    public func path(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }

    /// Writes `bytes` to a new file and returns its path.
    public func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let target = path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: target))
        return target
    }

    /// A copy of `source` cut off after `fraction` of its bytes.
    public func truncated(_ source: String, keeping fraction: Double, as name: String) throws -> String {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: source)))
        return try write(name, Array(bytes.prefix(Int(Double(bytes.count) * fraction))))
    }

    /// A copy of `source` with `count` bytes of deterministic garbage written over it, in runs
    /// of 64 spread between `from` and `to` (fractions of the file).
    public func corrupted(_ source: String, from: Double, to: Double, count: Int, as name: String) throws -> String {
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: source)))
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let start = Int(Double(bytes.count) * from)
        let span = max(1, Int(Double(bytes.count) * (to - from)) - 64)
        for run in 0..<max(1, count / 64) {
            let offset = start + (run * span) / max(1, count / 64)
            for index in offset..<min(offset + 64, bytes.count) {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                bytes[index] = UInt8(truncatingIfNeeded: state >> 33)
            }
        }
        return try write(name, bytes)
    }

    /// Runs the ffmpeg command line with `arguments` (after `-nostdin -loglevel error -y`) and
    /// returns the output path; fails with ffmpeg's own message.
    public func ffmpeg(_ arguments: [String], output name: String) throws -> String {
        let target = path(name)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        process.arguments = ["-nostdin", "-hide_banner", "-loglevel", "error", "-y"] + arguments + [target]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw FixtureError("ffmpeg failed making \(name): \(String(decoding: message, as: UTF8.self))")
        }
        return target
    }
}
