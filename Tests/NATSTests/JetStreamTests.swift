import Foundation
import Testing
import TandemNATS
import TandemNet
import TandemHarness

/// JetStream on a real single nats-server: streams, compare-and-set publishes, duplicates by
/// message id, reads by sequence and subject, and an ordered consumer that replays and follows.
@Suite(.enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"))
struct JetStreamProcessTests {
    @Test func comparesAndSetsDropsDuplicatesAndReadsBackInOrder() async throws {
        let server = try NATSServerProcess()
        defer { server.stop() }
        let connection = try await NATSConnection.connect(to: server.url)
        let jetStream = JetStream(connection: connection)
        let created = try await jetStream.createStream(JetStreamStreamConfiguration(
            name: "SESSIONS", subjects: ["session.>"], storage: .file, replicas: 1,
            duplicateWindow: 120_000_000_000, allowDirect: true))
        #expect(created.configuration.subjects == ["session.>"] && created.configuration.allowDirect)
        #expect(created.state.lastSequence == 0)

        // Compare-and-set on the subject's last sequence: 0 while it has none.
        let first = try await jetStream.publish("session.a", payload: "p1".bytes, options: .init(messageID: "a-1", expectedLastSubjectSequence: 0))
        #expect(first == JetStreamPubAck(stream: "SESSIONS", sequence: 1, duplicate: false))
        let other = try await jetStream.publish("session.b", payload: "b1".bytes, options: .init(expectedLastSubjectSequence: 0))
        #expect(other.sequence == 2)
        let second = try await jetStream.publish("session.a", payload: "p2".bytes, options: .init(messageID: "a-2", expectedLastSubjectSequence: 1))
        #expect(second.sequence == 3)
        await #expect {
            _ = try await jetStream.publish("session.a", payload: "stale".bytes, options: .init(messageID: "a-stale", expectedLastSubjectSequence: 1))
        } throws: { error in
            guard let error = error as? JetStreamError else { return false }
            return error.kind == .wrongLastSequence && error.errorCode == 10071
        }
        // A retry of a stored message (same id) stores nothing and names the original.
        let retried = try await jetStream.publish("session.a", payload: "p2".bytes, options: .init(messageID: "a-2", expectedLastSubjectSequence: 1))
        #expect(retried == JetStreamPubAck(stream: "SESSIONS", sequence: 3, duplicate: true))
        // And on the stream's last sequence.
        let streamWide = try await jetStream.publish("session.c", payload: "c1".bytes, options: .init(expectedLastSequence: 3))
        #expect(streamWide.sequence == 4)
        await #expect { _ = try await jetStream.publish("session.c", payload: "c2".bytes, options: .init(expectedLastSequence: 3)) } throws: {
            ($0 as? JetStreamError)?.kind == .wrongLastSequence
        }

        let info = try await jetStream.streamInfo("SESSIONS")
        #expect(info.state.messages == 4 && info.state.lastSequence == 4)

        #expect(try await jetStream.message(stream: "SESSIONS", sequence: 3).payload.text == "p2")
        let last = try await jetStream.lastMessage(stream: "SESSIONS", subject: "session.a")
        #expect(last.sequence == 3 && last.headers?["Nats-Msg-Id"] == "a-2")
        #expect(try await jetStream.nextMessage(stream: "SESSIONS", subject: "session.a", from: 2).sequence == 3)
        let direct = try await jetStream.directMessage(stream: "SESSIONS", sequence: 2)
        #expect(direct.subject == "session.b" && direct.payload.text == "b1")
        #expect(try await jetStream.directLastMessage(stream: "SESSIONS", subject: "session.c").sequence == 4)
        await #expect { _ = try await jetStream.message(stream: "SESSIONS", sequence: 99) } throws: {
            ($0 as? JetStreamError)?.kind == .messageNotFound
        }
        await #expect { _ = try await jetStream.directMessage(stream: "SESSIONS", sequence: 99) } throws: {
            ($0 as? JetStreamError)?.kind == .messageNotFound
        }
        await connection.close()
    }

    @Test func anOrderedConsumerReplaysFromASequenceAndFollowsLive() async throws {
        let server = try NATSServerProcess()
        defer { server.stop() }
        let connection = try await NATSConnection.connect(to: server.url)
        let jetStream = JetStream(connection: connection)
        try await jetStream.createStream(JetStreamStreamConfiguration(name: "HISTORY", subjects: ["history.>"], storage: .memory))
        var expected: UInt64 = 0
        for index in 0..<50 {
            let subject = index % 2 == 0 ? "history.s1" : "history.s2"
            let ack = try await jetStream.publish(subject, payload: "m\(index)".bytes)
            expected = ack.sequence
        }
        #expect(expected == 50)
        let consumer = jetStream.orderedConsumer(stream: "HISTORY", subject: "history.s1", from: 21, heartbeat: .milliseconds(500))
        let live = Task {
            // Published while the consumer replays: it comes after the history, in order.
            for index in 50..<60 { _ = try await jetStream.publish("history.s1", payload: "m\(index)".bytes) }
        }
        let received = try await within(10, "the ordered consumer's 25 messages") {
            var received: [JetStreamStoredMessage] = []
            for try await message in consumer {
                received.append(message)
                if received.count == 25 { break }
            }
            return received
        }
        try await live.value
        consumer.stop()
        #expect(received.map(\.payload.text) == (20..<50).filter { $0 % 2 == 0 }.map { "m\($0)" } + (50..<60).map { "m\($0)" })
        #expect(received.map(\.sequence) == received.map(\.sequence).sorted() && received.first?.sequence == 21)
        #expect(received.allSatisfy { $0.subject == "history.s1" })
        await connection.close()
    }

    /// A reader slower than the buffer: the consumer starts again from the message the full
    /// buffer could not take, so the reader still gets every message once, in order.
    @Test func anOrderedConsumerWhoseReaderFallsBehindSkipsAndRepeatsNothing() async throws {
        let server = try NATSServerProcess()
        defer { server.stop() }
        let connection = try await NATSConnection.connect(to: server.url)
        let jetStream = JetStream(connection: connection)
        try await jetStream.createStream(JetStreamStreamConfiguration(name: "SLOW", subjects: ["slow.>"], storage: .memory))
        for index in 0..<40 { _ = try await jetStream.publish("slow.s", payload: "m\(index)".bytes) }
        let consumer = jetStream.orderedConsumer(stream: "SLOW", subject: "slow.s", heartbeat: .milliseconds(500), bufferLimit: 4)
        let received = try await within(15, "the 40 messages, read slowly") {
            var received: [JetStreamStoredMessage] = []
            for try await message in consumer {
                received.append(message)
                // Slower than the consumer delivers: its four places fill while this sleeps.
                if received.count % 10 == 1 { try await Task.sleep(for: .milliseconds(100)) }
                if received.count == 40 { break }
            }
            return received
        }
        consumer.stop()
        #expect(received.map(\.sequence) == Array(1...40))
        #expect(received.map(\.payload.text) == (0..<40).map { "m\($0)" })
        await connection.close()
    }

    @Test func updatesDeletesAndSaysWhatIsMissing() async throws {
        let server = try NATSServerProcess()
        defer { server.stop() }
        let connection = try await NATSConnection.connect(to: server.url)
        let jetStream = JetStream(connection: connection)
        var configuration = JetStreamStreamConfiguration(name: "KEYS", subjects: ["keys.>"], storage: .file)
        try await jetStream.createStream(configuration)
        configuration.maximumMessagesPerSubject = 1
        let updated = try await jetStream.updateStream(configuration)
        #expect(updated.configuration.maximumMessagesPerSubject == 1)
        _ = try await jetStream.publish("keys.k", payload: "v1".bytes)
        _ = try await jetStream.publish("keys.k", payload: "v2".bytes)
        #expect(try await jetStream.streamInfo("KEYS").state.messages == 1)

        configuration.subjects = ["other.>"]
        configuration.storage = .memory
        await #expect { try await jetStream.createStream(configuration) } throws: { ($0 as? JetStreamError)?.kind == .streamNameInUse }
        await #expect {
            _ = try await jetStream.publish("unclaimed.subject", payload: [], options: .init(messageID: "x", retryWindow: .milliseconds(300)))
        } throws: { ($0 as? JetStreamError)?.kind == .noStream }
        try await jetStream.deleteStream("KEYS")
        await #expect { _ = try await jetStream.streamInfo("KEYS") } throws: { error in
            guard let error = error as? JetStreamError else { return false }
            return error.kind == .streamNotFound && error.errorCode == 10059
        }
        await #expect { _ = try await jetStream.streamInfo("bad.name") } throws: { ($0 as? JetStreamError)?.reason.contains("not a stream") == true }
        await connection.close()
    }
}

@Suite(.enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"))
struct JetStreamOrderedConsumerRecoveryProcessTests {
    @Test func anOrderedConsumerStartsAgainAfterItsServerRestartsSkippingAndRepeatingNothing() async throws {
        let server = try NATSServerProcess()
        defer { server.stop() }
        var configuration = NATSConfiguration()
        configuration.reconnectWait = 50_000_000
        configuration.maximumReconnectWait = 200_000_000
        let connection = try await NATSConnection.connect(to: server.url, configuration: configuration)
        let jetStream = JetStream(connection: connection)
        try await jetStream.createStream(JetStreamStreamConfiguration(name: "DURABLE", subjects: ["durable.>"], storage: .file, duplicateWindow: 60_000_000_000))
        for index in 0..<5 { _ = try await jetStream.publish("durable.s", payload: "m\(index)".bytes, options: .init(messageID: "m\(index)")) }
        let consumer = jetStream.orderedConsumer(stream: "DURABLE", subject: "durable.s", heartbeat: .milliseconds(300))
        let progress = AsyncStream.makeStream(of: Int.self)
        let reader = Task {
            var received: [JetStreamStoredMessage] = []
            for try await message in consumer {
                received.append(message)
                progress.continuation.yield(received.count)
                if received.count == 10 { break }
            }
            return received
        }
        // The first five arrive before the restart; the consumer's server-side state dies with it.
        try await within(5, "the first five messages") {
            for await count in progress.stream where count == 5 { return }
        }
        server.kill()
        try server.start()
        for index in 5..<10 { _ = try await jetStream.publish("durable.s", payload: "m\(index)".bytes, options: .init(messageID: "m\(index)")) }
        let received = try await within(15, "all ten messages after the restart") { try await reader.value }
        consumer.stop()
        #expect(received.map(\.payload.text) == (0..<10).map { "m\($0)" })
        #expect(received.map(\.sequence) == Array(1...10))
        await connection.close()
    }
}

@Suite(.enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"))
struct NATSSubscriptionProcessTests {
    @Test func unsubscribingEndsTheSequenceAndASlowReaderCountsWhatWasDropped() async throws {
        let server = try NATSServerProcess()
        defer { server.stop() }
        var configuration = NATSConfiguration()
        configuration.subscriptionBufferLimit = 10
        let connection = try await NATSConnection.connect(to: server.url, configuration: configuration)
        let subscription = try await connection.subscribe(to: "flood")
        try await connection.flush()
        for index in 0..<50 { try await connection.publish("flood", payload: "\(index)".bytes) }
        try await connection.flush()
        // A flush's PONG follows every message the server sent before it on this connection.
        try await connection.flush()
        #expect(subscription.droppedCount == 40)
        await subscription.unsubscribe()
        let kept = try await within(5, "the buffered messages, then the end") {
            var kept: [String] = []
            for try await message in subscription { kept.append(message.payload.text) }
            return kept
        }
        #expect(kept == (0..<10).map(String.init))
        await connection.close()
    }
}

@Suite(.enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"))
struct JetStreamKeyValueProcessTests {
    @Test func putsGetsUpdatesOnTheExpectedRevisionAndDeletes() async throws {
        let server = try NATSServerProcess()
        defer { server.stop() }
        let connection = try await NATSConnection.connect(to: server.url)
        let bucket = try await JetStreamKeyValue.createBucket("cursors", in: JetStream(connection: connection))
        #expect(try await bucket.get("alice") == nil)
        let first = try await bucket.update("alice", "1".bytes, expectedRevision: 0)
        let second = try await bucket.update("alice", "2".bytes, expectedRevision: first)
        await #expect { try await bucket.update("alice", "stale".bytes, expectedRevision: first) } throws: {
            ($0 as? JetStreamError)?.kind == .wrongLastSequence
        }
        #expect(try await bucket.get("alice") == JetStreamKeyValue.Entry(key: "alice", value: "2".bytes, revision: second))
        try await bucket.put("bob", "b".bytes)
        try await bucket.delete("alice")
        #expect(try await bucket.get("alice") == nil)
        #expect(try await bucket.get("bob")?.value == "b".bytes)
        await #expect { try await bucket.put("no spaces", []) } throws: { ($0 as? JetStreamError)?.reason.contains("not a key") == true }
        await connection.close()
    }
}
