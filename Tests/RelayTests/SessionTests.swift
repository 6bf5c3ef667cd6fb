import Foundation
import TandemNet
import TandemTestKit
import Testing

/// The same bodies against the in-memory relay and the real one on loopback.
@Suite("Relay sessions", .serialized)
struct SessionIOTests {
    @Test("create, join, leave: the others go on", arguments: TransportKind.allCases)
    func lifecycle(kind: TransportKind) async throws {
        let harness = try RelayHarness(kind)
        defer { harness.shutdown() }
        let session = UUID()
        let alice = try await harness.join(session, "alice", create: true)
        #expect(alice.link.welcome.created)
        #expect(alice.link.welcome.participants.map(\.displayName) == ["alice"])
        let bob = try await harness.join(session, "bob")
        #expect(!bob.link.welcome.created)
        #expect(bob.link.welcome.participants.map(\.displayName) == ["alice", "bob"])
        #expect(bob.link.welcome.activity == Array("watch together".utf8))
        let carol = try await harness.join(session, "carol")
        #expect(await alice.recorder.wait { $0.joinedNames == ["bob", "carol"] })
        #expect(await bob.recorder.wait { $0.joinedNames == ["carol"] })

        await bob.link.leave()
        #expect(await bob.recorder.waitForFinish())
        #expect(await alice.recorder.wait { $0.leftIDs == [bob.id] })
        #expect(await carol.recorder.wait { $0.leftIDs == [bob.id] })
        #expect(throws: RelayError.self) { try bob.link.send([1], to: .everyone, reliable: true) }

        try alice.link.send(Array("still here".utf8), to: .everyone, reliable: true)
        #expect(await carol.recorder.waitForMessages(1) == ["still here"])
        await alice.link.leave()
        await carol.link.leave()
    }

    @Test("a session nobody created is not found", arguments: TransportKind.allCases)
    func missingSession(kind: TransportKind) async throws {
        let harness = try RelayHarness(kind)
        defer { harness.shutdown() }
        await #expect { try await harness.join(UUID(), "nobody") } throws: { ($0 as? RelayError)?.code == .sessionNotFound }
    }

    @Test("messages to all, to one and to a set", arguments: TransportKind.allCases, [true, false])
    func messages(kind: TransportKind, reliable: Bool) async throws {
        let harness = try RelayHarness(kind)
        defer { harness.shutdown() }
        let session = UUID()
        let alice = try await harness.join(session, "alice", create: true)
        let bob = try await harness.join(session, "bob")
        let carol = try await harness.join(session, "carol")
        let dave = try await harness.join(session, "dave")

        try alice.link.send(Array("all".utf8), to: .everyone, reliable: reliable)
        for member in [bob, carol, dave] {
            #expect(await member.recorder.waitForMessages(1, reliable: reliable) == ["all"])
        }
        try alice.link.send(Array("bob only".utf8), to: .only([bob.id]), reliable: reliable)
        #expect(await bob.recorder.waitForMessages(2, reliable: reliable) == ["all", "bob only"])
        try alice.link.send(Array("carol and dave".utf8), to: .only([carol.id, dave.id, UUID()]), reliable: reliable)
        #expect(await carol.recorder.waitForMessages(2, reliable: reliable) == ["all", "carol and dave"])
        #expect(await dave.recorder.waitForMessages(2, reliable: reliable) == ["all", "carol and dave"])
        // A last reliable message to everyone: once it is in, nothing else is still on its way.
        try alice.link.send(Array("end".utf8), to: .everyone, reliable: true)
        for member in [bob, carol, dave] { await member.recorder.waitForMessages(1, reliable: true) }
        try await Task.sleep(for: .milliseconds(50))
        #expect(bob.recorder.messages(reliable: reliable).filter { $0 != "end" } == ["all", "bob only"])
        #expect(carol.recorder.messages(reliable: reliable).filter { $0 != "end" } == ["all", "carol and dave"])
        #expect(alice.recorder.messages().isEmpty, "the sender never receives its own message")
        #expect(bob.recorder.events.allSatisfy { event in
            if case let .message(from, _, _) = event { return from == alice.id }
            return true
        })
    }

    @Test("reliable messages keep each sender's order", arguments: TransportKind.allCases)
    func ordering(kind: TransportKind) async throws {
        let harness = try RelayHarness(kind)
        defer { harness.shutdown() }
        let session = UUID()
        let alice = try await harness.join(session, "alice", create: true)
        let bob = try await harness.join(session, "bob")
        let carol = try await harness.join(session, "carol")
        for index in 0..<300 {
            try alice.link.send(Array("a\(index)".utf8), to: .everyone, reliable: true)
            try bob.link.send(Array("b\(index)".utf8), to: .everyone, reliable: true)
        }
        let received = await carol.recorder.waitForMessages(600)
        #expect(received.filter { $0.hasPrefix("a") } == (0..<300).map { "a\($0)" })
        #expect(received.filter { $0.hasPrefix("b") } == (0..<300).map { "b\($0)" })
    }

    @Test("size limits are enforced before anything is sent", arguments: TransportKind.allCases)
    func sizeLimits(kind: TransportKind) async throws {
        let harness = try RelayHarness(kind)
        defer { harness.shutdown() }
        let session = UUID()
        let alice = try await harness.join(session, "alice", create: true)
        let bob = try await harness.join(session, "bob")
        let largest = [UInt8](repeating: 0xAB, count: RelayLimits.maximumMessageBody)
        #expect { try alice.link.send(largest + [0], to: .everyone, reliable: true) } throws: { ($0 as? RelayError)?.code == .tooLarge }
        #expect { try alice.link.send(largest + [0], to: .everyone, reliable: false) } throws: { ($0 as? RelayError)?.code == .tooLarge }
        try alice.link.send(largest, to: .everyone, reliable: true)
        try alice.link.send(largest, to: .everyone, reliable: false)
        #expect(await bob.recorder.wait { events in
            events.filter { if case let .message(_, body, _) = $0 { body == largest } else { false } }.count == 2
        })
        await #expect { try await alice.link.addAttachment(id: UUID(), metadata: [UInt8](repeating: 0, count: RelayLimits.maximumMetadata + 1), data: []) }
            throws: { ($0 as? RelayError)?.code == .tooLarge }
        var request = RelayHarness.request(session, "eve", activity: [UInt8](repeating: 0, count: RelayLimits.maximumMetadata + 1))
        request.createIfAbsent = true
        await #expect { try await harness.connector.join(request) } throws: { ($0 as? RelayError)?.code == .tooLarge }
    }

    @Test("an attachment over 100 MiB is refused before sending", arguments: TransportKind.allCases)
    func attachmentLimit(kind: TransportKind) async throws {
        let harness = try RelayHarness(kind)
        defer { harness.shutdown() }
        let alice = try await harness.join(UUID(), "alice", create: true)
        let tooLarge = [UInt8](repeating: 0, count: RelayLimits.maximumAttachment + 1)
        await #expect { try await alice.link.addAttachment(id: UUID(), metadata: [], data: tooLarge) }
            throws: { ($0 as? RelayError)?.code == .tooLarge }
    }

    @Test("wrong secret: refused, nothing learned, the session goes on", arguments: TransportKind.allCases)
    func wrongSecret(kind: TransportKind) async throws {
        let harness = try RelayHarness(kind)
        defer { harness.shutdown() }
        let session = UUID()
        let alice = try await harness.join(session, "alice", create: true)
        await #expect { try await harness.join(session, "mallory", key: [UInt8](repeating: 9, count: 32)) }
            throws: { ($0 as? RelayError)?.code == .wrongSecret }
        await #expect { try await harness.join(session, "mallory", create: true, key: [UInt8](repeating: 9, count: 32)) }
            throws: { ($0 as? RelayError)?.code == .wrongSecret }
        let bob = try await harness.join(session, "bob")
        try bob.link.send(Array("hi".utf8), to: .everyone, reliable: true)
        #expect(await alice.recorder.waitForMessages(1) == ["hi"])
        #expect(await alice.recorder.wait { $0.joinedNames == ["bob"] })
    }

    @Test("end() invalidates everyone's session with its reason", arguments: TransportKind.allCases)
    func end(kind: TransportKind) async throws {
        let harness = try RelayHarness(kind)
        defer { harness.shutdown() }
        let session = UUID()
        let alice = try await harness.join(session, "alice", create: true)
        let bob = try await harness.join(session, "bob")
        let carol = try await harness.join(session, "carol")
        await bob.link.end(reason: "movie night is over")
        for member in [alice, bob, carol] {
            #expect(await member.recorder.wait { events in
                events.contains { if case let .ended(by, reason) = $0 { by == bob.id && reason == "movie night is over" } else { false } }
            })
            #expect(await member.recorder.waitForFinish())
        }
        #expect(throws: RelayError.self) { try alice.link.send([1], to: .everyone, reliable: true) }
        await #expect { try await harness.join(session, "late") } throws: { ($0 as? RelayError)?.code == .sessionEnded }
    }
}

extension [RelayEvent] {
    var joinedNames: [String] {
        compactMap { if case let .participantJoined(record) = $0 { record.displayName } else { nil } }
    }

    var leftIDs: [UUID] {
        compactMap { if case let .participantLeft(id) = $0 { id } else { nil } }
    }

    var interruptions: Int { filter { if case .connectionInterrupted = $0 { true } else { false } }.count }
    var resumptions: Int { filter { if case .connectionResumed = $0 { true } else { false } }.count }

    var failure: RelayError? {
        for event in self { if case let .failed(error) = event { return error } }
        return nil
    }
}
