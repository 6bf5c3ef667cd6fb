import Foundation
import Testing
import TandemHarness
import TandemTestKit

/// A relay killed and started again on its port holds none of its parties (they live in its
/// memory): a participant reconnecting there is told "no such session", and says in one line
/// that the party is gone, at once rather than after trying for 30 s.
@Suite(.serialized, .timeLimit(.minutes(2))) struct RelayRestartProcessTests {
    @Test func aRestartedRelaysLostPartyIsToldInOneLine() throws {
        let relay = try ServeProcess()
        defer { relay.stop() }
        let port = relay.port
        let host = try WatchProcess.host(media: [SampleClip.h264.path], arguments: ["--relay", "127.0.0.1:\(port)"])
        defer { host.kill() }
        #expect(host.invite() != nil, "\(host.standardError)")
        #expect(host.waitUntil(timeout: 20) { $0.contains { $0.event == "joined" } }, "\(host.standardError)")
        #expect(kill(relay.pid, SIGKILL) == 0)
        let restarted = Process()
        restarted.executableURL = URL(fileURLWithPath: TandemProcess.executablePath)
        restarted.arguments = ["serve", "--bind", "127.0.0.1", "--port", "\(port)"]
        restarted.standardOutput = FileHandle.nullDevice
        restarted.standardError = FileHandle.nullDevice
        try restarted.run()
        defer { if restarted.isRunning { restarted.terminate() } }
        let status = host.waitForExit(timeout: 20)
        #expect(status == 1, "\(host.standardError)")
        let said = host.standardError.split(separator: "\n").filter { $0.hasPrefix("tandem: ") }
        #expect(said.contains("tandem: the relay no longer holds this party: it was restarted, and a party lives in its relay's memory. "
                              + "Ask the host to start a new one"), "\(host.standardError)")
        #expect(said.count == 1, "\(host.standardError)")
    }
}
