import Foundation
import Testing
import TandemHarness

/// `tandem serve` as a user runs it: a relay process that another `tandem` process syncs its
/// clock against on the same port, stopped cleanly by SIGTERM.
@Suite struct ServeProcessTests {
    @Test func relayServesTimeProbesOnItsPortAndStopsOnSIGTERM() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TandemProcess.executablePath)
        process.arguments = ["serve", "--bind", "127.0.0.1", "--port", "0"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        // The first line says where it listens.
        var text = ""
        let reader = output.fileHandleForReading
        let deadline = Date().addingTimeInterval(20)
        while !text.contains("\n") && Date() < deadline {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let line = try #require(text.split(separator: "\n").first.map(String.init))
        #expect(line.hasPrefix("relay listening on 127.0.0.1:"))
        let address = try #require(line.split(separator: " ").first { $0.hasPrefix("127.0.0.1:") }.map(String.init))

        let sync = try TandemProcess.run(["clock", "sync", address, "--duration", "1"])
        #expect(sync.status == 0, "\(sync.standardError)")
        #expect(sync.standardOutput.contains("samples:"))

        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let rest = String(decoding: reader.readDataToEndOfFile(), as: UTF8.self)
        #expect(rest.contains("stopped by SIGTERM"))
        #expect(!rest.contains(" 0 time probes"))
    }

    @Test func everyCommandExplainsItselfWithHelp() throws {
        let run = try TandemProcess.run(["serve", "--help"])
        #expect(run.status == 0)
        #expect(run.standardOutput.hasPrefix("usage: tandem serve"))
    }
}
