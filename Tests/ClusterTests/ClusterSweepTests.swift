import Foundation
import Testing
import TandemCluster
import TandemNATS
import TandemNet
import TandemTestKit
import TandemHarness
import TandemWire

/// The sweep for ended sessions' subjects that their relay left unpurged, over a real NATS.
@Suite("Cluster purge sweep", .serialized)
struct ClusterSweepProcessTests {
    @Test("a session ended on a relay that stopped within the purge delay: another relay's sweep purges its subject once the delay is over, never a live session's, whose history a new relay still replays")
    func sweepPurgesWhatAStoppedRelayLeft() async throws {
        let nats = try startNATSNode()
        defer { nats.stop() }
        // The relay that ends the session would purge its subject an hour later; it stops first.
        let first = try await InProcessRelay.start(nats.url, purgeDelay: .seconds(3600), sweepInterval: nil)
        let ended = UUID(), key = SigningKeyPair()
        var live = UUID()
        while ClusterRelay.stream(for: live) != ClusterRelay.stream(for: ended) { live = UUID() }
        let ana = try await Participant.join(ended, key: key, "ana", relays: [first.endpoint], create: true)
        let cat = try await Participant.join(live, key: key, "cat", relays: [first.endpoint], create: true)
        for index in 0..<3 {
            try ana.link.sendOrdered("e\(index)".bytes)
            try cat.link.sendOrdered("k\(index)".bytes)
        }
        #expect(await ana.wait { $0.ordered.count == 3 })
        #expect(await cat.wait { $0.ordered.count == 3 })
        await ana.link.end(reason: "done")
        #expect(await cat.wait { _ in first.cluster.pendingPurges == 1 }, "the end reached the log")
        await first.stop()

        let connection = try await NATSConnection.connect(to: try NATSURL(parsing: nats.url))
        let jetStream = JetStream(connection: connection)
        let stream = ClusterRelay.stream(for: ended)
        let endedLast = try await jetStream.lastMessage(stream: stream, subject: ClusterRelay.subject(for: ended)).sequence
        let liveLast = try await jetStream.lastMessage(stream: stream, subject: ClusterRelay.subject(for: live)).sequence
        #expect(endedLast > 0 && liveLast > 0, "the stopped relay left both subjects")

        let sweeper = try await InProcessRelay.start(nats.url, purgeDelay: .seconds(30), sweepInterval: nil)
        // Within the delay: nothing goes.
        #expect(await sweeper.cluster.sweepEndedSessions(now: Date()) == [])
        #expect(try await jetStream.lastMessage(stream: stream, subject: ClusterRelay.subject(for: ended)).sequence == endedLast)
        // Past it (the sweep told it is a minute later): the ended session's subject, and only it.
        #expect(await sweeper.cluster.sweepEndedSessions(now: Date().addingTimeInterval(60)) == [ended])
        let error = await #expect(throws: JetStreamError.self) {
            _ = try await jetStream.lastMessage(stream: stream, subject: ClusterRelay.subject(for: ended))
        }
        #expect(error?.kind == .messageNotFound, "\(String(describing: error))")
        #expect(try await jetStream.lastMessage(stream: stream, subject: ClusterRelay.subject(for: live)).sequence == liveLast)
        #expect(await sweeper.cluster.sweepEndedSessions(now: Date().addingTimeInterval(60)) == [], "a second sweep finds nothing")
        // The live session replays whole on the sweeping relay.
        let dan = try await Participant.join(live, key: key, "dan", relays: [sweeper.endpoint])
        #expect(dan.link.welcome.orderedHistory.map { String(decoding: $0.body, as: UTF8.self) } == ["k0", "k1", "k2"])
        await dan.link.leave()
        _ = cat
        await connection.close()
        await sweeper.stop()
    }

    @Test("a stored message's time stamp reads to the second, and a log subject names its session")
    func stampsAndSubjects() {
        #expect(ClusterRelay.date(stamp: "2026-12-01T22:45:07.123456789Z") == ClusterRelay.date(stamp: "2026-12-01T22:45:07Z"))
        #expect(ClusterRelay.date(stamp: "2026-12-01T22:45:07Z")?.timeIntervalSince1970 == 1_796_165_107)
        #expect(ClusterRelay.date(stamp: "yesterday") == nil)
        let session = UUID()
        #expect(ClusterRelay.session(ofSubject: ClusterRelay.subject(for: session)) == session)
        #expect(ClusterRelay.session(ofSubject: "tandem.s.9.\(session.uuidString.lowercased())") == nil)
        #expect(ClusterRelay.session(ofSubject: "tandem.u.\(session.uuidString.lowercased())") == nil)
    }
}
