import Testing
import TandemTestKit
import TandemHarness

/// `--decode-throttle` (bench only) and the list of media on `tandem host`: bad values are refused
/// clearly, before anything starts.
@Suite struct DecodeThrottleOptionProcessTests {
    @Test(arguments: [
        (["--decode-throttle", "0.5"], "--decode-throttle is a factor from 1 to 100000"),
        (["--decode-throttle", "lots"], "--decode-throttle wants a number"),
    ])
    func aBadThrottleIsRefused(options: [String], message: String) throws {
        let run = try TandemProcess.run(["host", SampleClip.h264.path, "--bind", "127.0.0.1", "--port", "0"] + options, timeout: 20)
        #expect(run.status == 64)
        #expect(run.standardError.split(separator: "\n").first?.contains(message) == true, "\(run.standardError)")
    }

    @Test func theHelpSaysTheThrottleIsForBenchesOnly() throws {
        let run = try TandemProcess.run(["help", "host"], timeout: 20)
        #expect(run.standardOutput.contains("--decode-throttle FACTOR (bench only)"), "\(run.standardOutput)")
        #expect(run.standardOutput.contains("benchmarking: decode FACTOR times slower"), "\(run.standardOutput)")
    }

    @Test func aMissingFileIsRefusedWhereverItStandsInTheQueue() throws {
        let missing = try TandemProcess.run(["host", "/nonexistent/first.mp4", "--bind", "127.0.0.1", "--port", "0"],
                                            timeout: 20)
        #expect(missing.status != 0)
        #expect(missing.standardError.contains("/nonexistent/first.mp4"), "\(missing.standardError)")
        let second = try TandemProcess.run(["host", SampleClip.h264.path, "/nonexistent/second.mp4", "--bind", "127.0.0.1", "--port", "0"],
                                           timeout: 20)
        #expect(second.status != 0)
        #expect(second.standardError.contains("/nonexistent/second.mp4"), "\(second.standardError)")
    }
}
