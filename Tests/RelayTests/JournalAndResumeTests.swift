import Foundation
import TandemNet
import TandemTestKit
import Testing

/// The journal and resumption, against both relays.
@Suite("Relay journal and resumption", .serialized)
struct JournalAndResumeIOTests {
    @Test("the journal: add, remove, load, and a late joiner gets it", arguments: TransportKind.allCases)
    func journal(kind: TransportKind) async throws {
        let harness = try RelayHarness(kind)
        defer { harness.shutdown() }
        let session = UUID()
        let alice = try await harness.join(session, "alice", create: true)
        let bob = try await harness.join(session, "bob")
        // Over a megabyte, so that it travels in several chunks each way.
        let poster = (0..<1_300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let posterID = UUID()
        let notesID = UUID()
        try await alice.link.addAttachment(id: posterID, metadata: Array("poster".utf8), data: poster)
        try await bob.link.addAttachment(id: notesID, metadata: Array("notes".utf8), data: Array("bring snacks".utf8))
        let emptyID = UUID()
        try await bob.link.addAttachment(id: emptyID, metadata: [], data: [])
        #expect(await alice.recorder.wait { $0.addedIDs == [posterID, notesID, emptyID] })
        try await alice.link.removeAttachment(id: notesID)
        #expect(await bob.recorder.wait { $0.removedIDs == [notesID] })
        await #expect { try await bob.link.removeAttachment(id: notesID) } throws: { ($0 as? RelayError)?.code == .attachmentNotFound }

        let carol = try await harness.join(session, "carol")
        let journal = carol.link.welcome.attachments
        #expect(journal.map(\.id) == [posterID, emptyID])
        #expect(journal.first?.owner == alice.id)
        #expect(journal.first?.size == poster.count)
        #expect(journal.first?.metadata == Array("poster".utf8))
        #expect(try await carol.link.loadAttachment(id: posterID) == poster)
        #expect(try await carol.link.loadAttachment(id: emptyID) == [])
        await #expect { try await carol.link.loadAttachment(id: notesID) } throws: { ($0 as? RelayError)?.code == .attachmentNotFound }
    }

    @Test("a short disconnection resumes with nothing lost or repeated", arguments: TransportKind.allCases)
    func resume(kind: TransportKind) async throws {
        let harness = try RelayHarness(kind)
        defer { harness.shutdown() }
        let session = UUID()
        let alice = try await harness.join(session, "alice", create: true)
        let bob = try await harness.join(session, "bob")
        try alice.link.send(Array("before".utf8), to: .everyone, reliable: true)
        #expect(await bob.recorder.waitForMessages(1) == ["before"])

        try #require(alice.client).interruptConnection(for: .milliseconds(100))
        for index in 0..<50 {
            try bob.link.send(Array("b\(index)".utf8), to: .everyone, reliable: true)
            try alice.link.send(Array("a\(index)".utf8), to: .everyone, reliable: true)
        }
        #expect(await alice.recorder.wait { $0.resumptions == 1 })
        #expect(alice.recorder.events.interruptions == 1)
        #expect(await alice.recorder.waitForMessages(50) == (0..<50).map { "b\($0)" })
        #expect(await bob.recorder.waitForMessages(51) == ["before"] + (0..<50).map { "a\($0)" })
        // Once more while traffic flows, then check nothing came twice.
        try #require(alice.client).interruptConnection()
        try bob.link.send(Array("after".utf8), to: .everyone, reliable: true)
        #expect(await alice.recorder.wait { $0.resumptions == 2 })
        #expect(await alice.recorder.waitForMessages(51) == (0..<50).map { "b\($0)" } + ["after"])
        try await Task.sleep(for: .milliseconds(100))
        #expect(alice.recorder.messages().count == 51)
        #expect(bob.recorder.events.leftIDs.isEmpty)
    }

    @Test("gone longer than the grace period: removed, and everyone sees it leave", arguments: TransportKind.allCases)
    func removal(kind: TransportKind) async throws {
        let harness = try RelayHarness(kind)
        defer { harness.shutdown() }
        let session = UUID()
        let alice = try await harness.join(session, "alice", create: true)
        let bob = try await harness.join(session, "bob")
        let carol = try await harness.join(session, "carol")
        // The harness's grace period is 0.6 s.
        try #require(bob.client).interruptConnection(for: .seconds(2))
        #expect(await alice.recorder.wait { $0.leftIDs == [bob.id] })
        #expect(await carol.recorder.wait { $0.leftIDs == [bob.id] })
        #expect(await bob.recorder.waitForFinish())
        #expect(bob.recorder.events.failure?.code == .disconnected)
        try alice.link.send(Array("on we go".utf8), to: .everyone, reliable: true)
        #expect(await carol.recorder.waitForMessages(1) == ["on we go"])
    }
}

extension [RelayEvent] {
    var addedIDs: [UUID] {
        compactMap { if case let .attachmentAdded(record) = $0 { record.id } else { nil } }
    }

    var removedIDs: [UUID] {
        compactMap { if case let .attachmentRemoved(id) = $0 { id } else { nil } }
    }
}
