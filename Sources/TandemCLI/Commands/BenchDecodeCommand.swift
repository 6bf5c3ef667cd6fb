import Foundation
import TandemBench

/// `tandem bench decode FILE [--threads N] [--runs K] [--json]`: decode throughput beside ffmpeg's.
enum BenchDecodeCommand: Command {
    static let words = ["bench", "decode"]
    static let usage = "bench decode FILE [--threads N] [--runs K] [--json]"
    static let summary = "decode throughput, beside the ffmpeg command line's on the same file and thread count"

    static func run(_ arguments: [String]) async throws -> Int32 {
        let arguments = try Arguments(arguments, options: ["threads", "runs"], flags: ["json"])
        try arguments.expectPositionals(atMost: 1)
        let path = try arguments.positional(0, "FILE")
        let threads = try arguments.int("threads", default: 1)!
        let runs = try arguments.int("runs", default: 5)!
        guard threads >= 1, runs >= 1 else { throw CLIError.usage("--threads and --runs must be at least 1") }
        let result: DecodeBenchmark.Result
        do {
            result = try DecodeBenchmark(file: path, threads: threads, runs: runs).run()
        } catch {
            throw CLIError.failure("\(error)")
        }
        if arguments.flags.contains("json") {
            try printJSON(result)
            return 0
        }
        print("decode throughput: \(path), \(threads) thread(s), \(runs) runs each, \(result.tandem.frames) frames")
        print(row("tandem (MediaDecoder)", result.tandem))
        if let ffmpeg = result.ffmpeg {
            print(row("ffmpeg -f null", ffmpeg))
            print(String(format: "  ratio tandem/ffmpeg (median fps): %.3f", result.ratio ?? 0))
        } else {
            print("  ffmpeg is not installed: no comparison")
        }
        return 0
    }

    private static func row(_ name: String, _ side: DecodeBenchmark.Side) -> String {
        guard let times = Percentiles(side.seconds) else { return "  \(name): no runs" }
        let label = name.padding(toLength: 22, withPad: " ", startingAt: 0)
        return "  \(label)" + String(format: " median %7.1f fps   (runs: min %.3f s, median %.3f s, max %.3f s)",
                                      side.medianFramesPerSecond, times.min, times.p50, times.max)
    }
}
