import Foundation
import Synchronization
import Testing
import TandemNATS
import TandemNet
import TandemHarness

/// The loop-callback consumer and publish attempt (`JetStreamLoopConsumer`,
/// `JetStream.publishAttemptOnLoop`) on a real nats-server: the same order and recovery as the
/// ordered consumer, every delivery on the connection's loop.
@Suite(.enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"))
struct JetStreamLoopConsumerProcessTests {
    /// What a loop consumer delivered, with a count to wait on.
    final class Delivered: Sendable {
        let messages = Mutex<[JetStreamStoredMessage]>([])
        let counts = AsyncStream.makeStream(of: Int.self)
        let ended = Mutex<Int>(0)
        /// The threads deliveries ran on.
        let threads = Mutex<Set<UInt>>([])

        /// The calling thread's identifier.
        static func thread() -> UInt {
            #if canImport(Darwin)
            UInt(bitPattern: pthread_self())
            #else
            UInt(pthread_self())
            #endif
        }

        /// The connection's loop thread.
        static func loopThread(of connection: NATSConnection) async -> UInt {
            await withCheckedContinuation { continuation in connection.execute { continuation.resume(returning: thread()) } }
        }

        func take(_ message: JetStreamStoredMessage) {
            threads.withLock { _ = $0.insert(Self.thread()) }
            let count = messages.withLock { messages in
                messages.append(message)
                return messages.count
            }
            counts.continuation.yield(count)
        }

        func wait(for count: Int, within seconds: Double) async throws {
            try await within(seconds, "\(count) messages") { [counts] in
                for await seen in counts.stream where seen >= count { return }
            }
        }
    }

    @Test func replaysFromASequenceThenFollowsLiveInOrderOnTheLoop() async throws {
        let server = try NATSServerProcess()
        defer { server.stop() }
        let connection = try await NATSConnection.connect(to: server.url)
        let jetStream = JetStream(connection: connection)
        try await jetStream.createStream(JetStreamStreamConfiguration(name: "HISTORY", subjects: ["history.>"], storage: .memory))
        for index in 0..<50 {
            _ = try await jetStream.publish(index % 2 == 0 ? "history.s1" : "history.s2", payload: "m\(index)".bytes)
        }
        let delivered = Delivered()
        let consumer = JetStreamLoopConsumer(jetStream: jetStream, stream: "HISTORY", subject: "history.s1", from: 21, heartbeat: .milliseconds(500),
                                             deliver: { delivered.take($0) }, ended: { _ in delivered.ended.withLock { $0 += 1 } })
        consumer.start()
        for index in 50..<60 { _ = try await jetStream.publish("history.s1", payload: "m\(index)".bytes) }
        try await delivered.wait(for: 25, within: 10)
        consumer.stop()
        let received = delivered.messages.withLock { $0 }
        #expect(received.map(\.payload.text) == (20..<50).filter { $0 % 2 == 0 }.map { "m\($0)" } + (50..<60).map { "m\($0)" })
        #expect(received.map(\.sequence) == received.map(\.sequence).sorted() && received.first?.sequence == 21)
        let loopThread = await Delivered.loopThread(of: connection)
        #expect(delivered.threads.withLock { $0 } == [loopThread], "every delivery runs on the connection's loop")
        // Stopped: what is published later is not delivered, and `ended` is not called.
        _ = try await jetStream.publish("history.s1", payload: "late".bytes)
        try await connection.flush()
        #expect(delivered.messages.withLock { $0.count } == 25)
        #expect(delivered.ended.withLock { $0 } == 0)
        await connection.close()
    }

    @Test func startsAgainAfterItsServerRestartsSkippingAndRepeatingNothing() async throws {
        let server = try NATSServerProcess()
        defer { server.stop() }
        var configuration = NATSConfiguration()
        configuration.reconnectWait = 50_000_000
        configuration.maximumReconnectWait = 200_000_000
        let connection = try await NATSConnection.connect(to: server.url, configuration: configuration)
        let jetStream = JetStream(connection: connection)
        try await jetStream.createStream(JetStreamStreamConfiguration(name: "DURABLE", subjects: ["durable.>"], storage: .file, duplicateWindow: 60_000_000_000))
        for index in 0..<5 { _ = try await jetStream.publish("durable.s", payload: "m\(index)".bytes, options: .init(messageID: "m\(index)")) }
        let delivered = Delivered()
        let consumer = JetStreamLoopConsumer(jetStream: jetStream, stream: "DURABLE", subject: "durable.s", from: 1, heartbeat: .milliseconds(300),
                                             deliver: { delivered.take($0) }, ended: { _ in })
        consumer.start()
        try await delivered.wait(for: 5, within: 5)
        server.kill()
        try server.start()
        for index in 5..<10 { _ = try await jetStream.publish("durable.s", payload: "m\(index)".bytes, options: .init(messageID: "m\(index)")) }
        try await delivered.wait(for: 10, within: 15)
        consumer.stop()
        let received = delivered.messages.withLock { $0 }
        #expect(received.map(\.payload.text) == (0..<10).map { "m\($0)" })
        #expect(received.map(\.sequence) == Array(1...10))
        await connection.close()
    }

    @Test func aPublishAttemptOnTheLoopStoresOrSaysWhyNot() async throws {
        let server = try NATSServerProcess()
        defer { server.stop() }
        let connection = try await NATSConnection.connect(to: server.url)
        let jetStream = JetStream(connection: connection)
        try await jetStream.createStream(JetStreamStreamConfiguration(name: "CAS", subjects: ["cas.>"], storage: .memory, duplicateWindow: 60_000_000_000))
        func attempt(_ subject: String, _ options: JetStreamPublishOptions) async -> Result<JetStreamPubAck, JetStreamError> {
            await withCheckedContinuation { continuation in
                connection.execute {
                    jetStream.publishAttemptOnLoop(subject, payload: "x".bytes, options: options) { continuation.resume(returning: $0) }
                }
            }
        }
        let stored = try await attempt("cas.a", .init(messageID: "a-1", expectedLastSubjectSequence: 0)).get()
        #expect(stored == JetStreamPubAck(stream: "CAS", sequence: 1, duplicate: false))
        let again = try await attempt("cas.a", .init(messageID: "a-1", expectedLastSubjectSequence: 1)).get()
        #expect(again.duplicate && again.sequence == 1)
        guard case let .failure(conflict) = await attempt("cas.a", .init(messageID: "a-2", expectedLastSubjectSequence: 0)) else {
            Issue.record("a stale expected sequence was stored")
            return
        }
        #expect(conflict.kind == .wrongLastSequence)
        #expect(JetStream.retries(after: conflict) == (false, false))
        guard case let .failure(nobody) = await attempt("unclaimed.subject", .init(messageID: "u-1")) else {
            Issue.record("a subject of no stream was stored")
            return
        }
        #expect(nobody.kind == .noStream)
        #expect(JetStream.retries(after: nobody) == (true, false), "publish retries nobody answering, within its window")
        await connection.close()
    }
}
