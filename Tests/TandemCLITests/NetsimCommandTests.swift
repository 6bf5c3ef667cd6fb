import Foundation
import Testing
import TandemHarness

/// `tandem netsim` as a user runs it: in front of `tandem serve`, a `tandem clock sync` through it
/// sees the added round trip, and SIGINT prints the statistics and the proxy's own error.
@Suite struct NetsimCommandProcessTests {
    /// Starts `tandem ARGUMENTS` and returns it with what it printed up to its first line's end
    /// (perhaps more).
    private func launch(_ arguments: [String]) throws -> (Process, Pipe, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TandemProcess.executablePath)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        var text = ""
        let deadline = Date().addingTimeInterval(20)
        while !text.contains("\n") && Date() < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        return (process, output, text)
    }

    private func address(in line: String) throws -> String {
        try #require(line.split(whereSeparator: { $0 == " " || $0 == "\n" }).first { $0.hasPrefix("127.0.0.1:") }.map(String.init))
    }

    @Test func clockSyncThroughTheProxySeesTheDelayAndSIGINTReportsTheOwnError() throws {
        let (relay, _, relayLine) = try launch(["serve", "--bind", "127.0.0.1", "--port", "0"])
        defer { if relay.isRunning { relay.terminate() } }
        let relayAddress = try address(in: relayLine)
        let (proxy, proxyOutput, proxyStart) = try launch(["netsim", "--listen", "127.0.0.1:0", "--to", relayAddress,
                                                          "--delay", "15", "--jitter", "2", "--loss", "1%", "--seed", "4"])
        defer { if proxy.isRunning { proxy.terminate() } }
        #expect(proxyStart.hasPrefix("netsim listening on 127.0.0.1:"))
        let proxyAddress = try address(in: proxyStart)

        let sync = try TandemProcess.run(["clock", "sync", proxyAddress, "--duration", "1"])
        #expect(sync.status == 0, "\(sync.standardError)")
        let roundTrip = sync.standardOutput.split(separator: "\n").first { $0.hasPrefix("round trip: best ") }
        let best = try #require(roundTrip.flatMap { Double($0.split(separator: " ")[3]) })
        #expect(best >= 26, "the best round trip through 15 ± 2 ms each way was \(best) ms")

        kill(proxy.processIdentifier, SIGINT)
        proxy.waitUntilExit()
        #expect(proxy.terminationStatus == 0)
        let rest = proxyStart + String(decoding: proxyOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(rest.contains("impairment: delay 15 ms ± 2 ms"))
        #expect(rest.contains("stopped by SIGINT"))
        #expect(rest.contains("own added error (delivery minus scheduled instant): p50 "))
        relay.terminate()
        relay.waitUntilExit()
    }

    @Test func impossibleImpairmentsAreUsageErrors() throws {
        let run = try TandemProcess.run(["netsim", "--listen", "127.0.0.1:0", "--to", "127.0.0.1:9", "--delay", "1", "--jitter", "2"])
        #expect(run.status == 64)
        #expect(run.standardError.contains("jitter"))
        let missing = try TandemProcess.run(["netsim", "--listen", "127.0.0.1:0"])
        #expect(missing.status == 64)
        #expect(missing.standardError.contains("--to"))
    }
}
