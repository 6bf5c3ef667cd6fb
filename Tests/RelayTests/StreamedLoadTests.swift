import Foundation
import TandemNet
import TandemTestKit
import Testing

/// Attachment loads streamed as the connection drains keep the journal's promises: every byte
/// once and in order, also when the connection drops in the middle and resumes.
@Suite("Relay streamed loads", .serialized)
struct StreamedLoadIOTests {
    @Test("a load interrupted part way resumes and completes exactly", arguments: TransportKind.allCases)
    func interruptedLoad(kind: TransportKind) async throws {
        var configuration = RelayHarness.testConfiguration
        configuration.gracePeriod = 5_000_000_000
        // Small windows, so that the load is still going when the connection drops.
        configuration.loadWindowBytes = 256 * 1024
        let harness = try RelayHarness(kind, configuration: configuration)
        defer { harness.shutdown() }
        let session = UUID()
        let alice = try await harness.join(session, "alice", create: true)
        let bob = try await harness.join(session, "bob")
        var data = [UInt8](repeating: 0, count: 12 * 1024 * 1024)
        data.withUnsafeMutableBufferPointer { bytes in
            for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 13 &+ index >> 10) }
        }
        let id = UUID()
        try await alice.link.addAttachment(id: id, metadata: Array("film".utf8), data: data)
        let link = bob.link
        let load = Task { try await link.loadAttachment(id: id) }
        try await Task.sleep(for: .milliseconds(30))
        try #require(bob.client).interruptConnection(for: .milliseconds(100))
        let loaded = try await load.value
        #expect(loaded.count == data.count)
        #expect(loaded == data)
        // And once more, uninterrupted, on the resumed connection.
        #expect(try await bob.link.loadAttachment(id: id) == data)
    }
}
