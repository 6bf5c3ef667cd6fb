import Foundation
import Testing
import TandemHarness

/// The relay's resource flags on `tandem serve` and `tandem host`: stated in the usage with
/// their defaults, and a bad value is one clear line before anything binds.
@Suite struct ServeLimitFlagsProcessTests {
    @Test("the usage states every limit with its default", arguments: ["serve", "host"])
    func usage(command: String) throws {
        let run = try TandemProcess.run([command, "--help"])
        #expect(run.status == 0)
        for flag in ["--memory-limit SIZE (512M)", "--max-sessions-per-address N (64)", "--max-connections-per-address N (256)",
                     "--max-unauthenticated N (1024)", "--unauthenticated-buffer SIZE (128K)", "--max-output-queue SIZE (80M)",
                     "--max-attachments N (1000)", "--fanout-deliveries N/s (200000)", "--fanout-bytes SIZE/s (64M)",
                     "--max-unauthenticated-per-source N (32)", "--hello-timeout SECONDS (2)", "--proofs-per-source N/s (100)", "--proofs-per-second N/s (2000)",
                     "--fanout-deliveries-per-source N/s (400000)", "--fanout-bytes-per-source SIZE/s (128M)"] {
            #expect(run.standardOutput.contains(flag), "\(command) --help does not state \(flag)")
        }
    }

    @Test("serve's usage states how many threads write a large broadcast by default")
    func writerThreadsUsage() throws {
        let run = try TandemProcess.run(["serve", "--help"])
        #expect(run.standardOutput.contains("--writer-threads 1|2 (1)"), "\(run.standardOutput)")
    }

    @Test("bad sizes and counts are refused with one line naming the flag", arguments: [
        (["--memory-limit", "12X"], "--memory-limit wants a size"),
        (["--memory-limit", "0"], "--memory-limit wants a size"),
        (["--unauthenticated-buffer", "1K"], "--unauthenticated-buffer must be at least 80K"),
        (["--max-sessions-per-address", "0"], "--max-sessions-per-address must be at least 1"),
        (["--stats-interval", "-1"], "--stats-interval wants seconds above 0"),
        (["--writer-threads", "3"], "--writer-threads wants 1 or 2"),
        (["--writer-threads", "two"], "--writer-threads wants an integer"),
        (["--hello-timeout", "0"], "--hello-timeout wants seconds from 0.1 to 60"),
        (["--proofs-per-source", "0"], "--proofs-per-source must be at least 1"),
    ])
    func badValues(arguments: [String], message: String) throws {
        let run = try TandemProcess.run(["serve", "--bind", "127.0.0.1", "--port", "0"] + arguments, timeout: 20)
        #expect(run.status != 0)
        #expect(run.standardError.contains(message), "\(run.standardError)")
        #expect(run.standardError.split(separator: "\n").count <= 2)
    }
}
