import Foundation
import TandemNet
import TandemTestKit
import TandemWire
import Testing

/// Peers on different protocol versions get one line naming both, on both sides.
@Suite("Relay protocol versions")
struct VersionMismatchIOTests {
    @Test("a relay of version 2 answers with its own error: the join fails naming both versions")
    func olderRelay() async throws {
        let listener = try TCPSocket.listening(on: try SocketAddress(host: "127.0.0.1", port: 0))
        let port = try listener.localAddress().port
        // What a version 2 relay sends a hello it cannot read: an error frame in version 2.
        let text = Array("relay frame: version \(RelayFrame.version) is not supported (this build speaks 2)".utf8)
        let reply = rawFrame(version: 2, type: 0x33, payload: [RelayFaultCode.protocolViolation.rawValue,
                                                                 UInt8(text.count >> 8), UInt8(text.count & 0xFF)] + text)
        let oldRelay = Task.detached {
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                if let accepted = try listener.accept() {
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    while ContinuousClock.now < deadline, (try? accepted.socket.read(into: &buffer)) == nil {
                        try await Task.sleep(for: .milliseconds(2))
                    }
                    _ = try accepted.socket.write(reply[...])
                    try await Task.sleep(for: .milliseconds(50))
                    accepted.socket.shutdown()
                    return
                }
                try await Task.sleep(for: .milliseconds(2))
            }
        }
        defer { oldRelay.cancel() }
        let connector = NetworkRelayConnector(host: "127.0.0.1", port: port)
        do {
            _ = try await connector.join(RelayHarness.request(UUID(), "ana", create: true))
            Issue.record("joined a relay of another version")
        } catch {
            #expect(error.code == .versionMismatch)
            #expect(error.description == "relay speaks protocol v2, this tandem speaks v\(RelayFrame.version)")
        }
    }
}
