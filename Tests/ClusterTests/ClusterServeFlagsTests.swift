import Foundation
import Testing
import TandemHarness

/// `tandem serve`'s cluster flags, `--cluster-load-cap N` and `--cluster-purge-delay SECONDS`: in its
/// usage with their defaults, and each bad value refused with one line naming the flag (before
/// NATS is ever dialled).
@Suite("tandem serve's cluster flags")
struct ClusterServeFlagsProcessTests {
    /// Runs `tandem serve ARGUMENTS` to its end, with `environment` added to this process's;
    /// its exit status and what it printed.
    static func serve(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, text: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ProcessInfo.processInfo.environment["TANDEM_EXECUTABLE"] ?? TandemProcess.executablePath)
        process.arguments = ["serve", "--bind", "127.0.0.1", "--port", "0"] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    @Test("the usage names both flags with their defaults")
    func usage() throws {
        let (status, text) = try Self.serve(["--help"])
        #expect(status == 0)
        for flag in ["[--cluster-load-cap N (16)]", "[--cluster-purge-delay SECONDS (60)]", "[--cluster-session-log SIZE (256M)]",
                     "[--cluster-stream-limit SIZE (8G)]", "[--cluster-compaction SIZE (16M)]"] {
            #expect(text.contains(flag), "\(text)")
        }
    }

    @Test("a bad value is refused with one line naming the flag", arguments: [
        (["--cluster-load-cap", "0"], "--cluster-load-cap wants sessions from 1 to 4096, not 0"),
        (["--cluster-load-cap", "5000"], "--cluster-load-cap wants sessions from 1 to 4096, not 5000"),
        (["--cluster-load-cap", "many"], "--cluster-load-cap wants an integer, not 'many'"),
        (["--cluster-purge-delay", "-1"], "--cluster-purge-delay wants seconds from 0 to 86400"),
        (["--cluster-purge-delay", "x"], "--cluster-purge-delay wants a number, not 'x'"),
        (["--cluster-session-log", "64K"], "--cluster-session-log wants a size of at least 1M, such as 256M or 1G, not '64K'"),
        (["--cluster-stream-limit", "lots"], "--cluster-stream-limit wants a size of at least 16M, such as 256M or 1G, not 'lots'"),
        (["--cluster-compaction", "1K"], "--cluster-compaction wants a size of at least 64K, such as 256M or 1G, not '1K'"),
    ])
    func refused(arguments: [String], line: String) throws {
        // Nothing listens on port 1 of loopback: had the flags passed, NATS would be refused instead.
        let (status, text) = try Self.serve(arguments + ["--cluster", "nats://127.0.0.1:1"])
        #expect(status == 64)
        #expect(text.split(separator: "\n").first.map(String.init) == "tandem: \(line): tandem help serve explains its options", "\(text)")
    }

    @Test("without --cluster, either flag is refused")
    func needsCluster() throws {
        for flag in ["--cluster-load-cap", "--cluster-purge-delay", "--cluster-session-log", "--cluster-stream-limit", "--cluster-compaction"] {
            let (status, text) = try Self.serve([flag, "4"])
            #expect(status == 64)
            #expect(text.hasPrefix("tandem: \(flag) goes with --cluster"), "\(text)")
        }
    }
}
