import Foundation
import Synchronization
import Testing
import TandemCluster
import TandemNATS
import TandemNet
import TandemTestKit
import TandemHarness
import TandemWire

/// Issue 16's gaps, over a real NATS: existing sessions told when NATS is lost and back; ended
/// sessions' subjects purged.
@Suite("Cluster gaps", .serialized)
struct ClusterGapsProcessTests {
    @Test("every NATS node stopped: the participants on both relays are told at once; started again, told it is back, and the session goes on")
    func natsLostTellsEveryone() async throws {
        let world = try await TwoRelays.start()
        defer { world.nats.stop() }
        let (ana, ben) = (world.ana, world.ben)
        try ana.link.sendOrdered("before".bytes)
        #expect(await ben.wait { $0.ordered.count == 1 })
        for node in world.nats.nodes { node.kill() }
        // The relays hear their connections break at once (the sockets close), and tell after the
        // hold-off (0.5 s) that keeps a failover to another node quiet.
        #expect(await ana.wait(5) { $0.availability == [false] }, "\(ana.availability)")
        #expect(await ben.wait(5) { $0.availability == [false] }, "\(ben.availability)")
        // A proposal made meanwhile is held, and takes effect once NATS is back.
        try ana.link.sendOrdered("meanwhile".bytes)
        for node in world.nats.nodes { try node.start(waitUntilReady: false) }
        for node in world.nats.nodes { try node.waitUntilHealthy(timeout: 30) }
        // Back: told at once where nothing waited, else once the log took what waited. A stream
        // still electing its leader after the whole cluster's restart may keep a relay's newer
        // entries waiting 2 s more, which is said too, and cleared.
        #expect(await ana.wait(20) { $0.availability.last == true && $0.ordered.count == 2 }, "\(ana.availability)")
        #expect(await ben.wait(20) { $0.availability.last == true }, "\(ben.availability)")
        for heard in [ana.availability, ben.availability] {
            #expect(heard.count % 2 == 0 && heard.enumerated().allSatisfy { $0.element == ($0.offset % 2 == 1) }, "\(heard)")
        }
        #expect(await ben.wait(20) { $0.ordered.count == 2 })
        #expect(ana.ordered.map { String(decoding: $0.body, as: UTF8.self) } == ["before", "meanwhile"])
        #expect(ben.ordered == ana.ordered)
        await ana.link.leave()
        await ben.link.leave()
        await world.stop()
    }

    @Test("an ended session's subject is purged; another session in the same stream keeps its log, and a relay replaying it gets its history")
    func endedSubjectPurged() async throws {
        let nats = try startNATSNode()
        defer { nats.stop() }
        let relay = try await InProcessRelay.start(nats.url, purgeDelay: .milliseconds(200))
        let ended = UUID(), key = SigningKeyPair()
        var kept = UUID()
        while ClusterRelay.stream(for: kept) != ClusterRelay.stream(for: ended) { kept = UUID() }
        let ana = try await Participant.join(ended, key: key, "ana", relays: [relay.endpoint], create: true)
        let cat = try await Participant.join(kept, key: key, "cat", relays: [relay.endpoint], create: true)
        for index in 0..<3 {
            try ana.link.sendOrdered("e\(index)".bytes)
            try cat.link.sendOrdered("k\(index)".bytes)
        }
        #expect(await ana.wait { $0.ordered.count == 3 })
        #expect(await cat.wait { $0.ordered.count == 3 })
        let connection = try await NATSConnection.connect(to: try NATSURL(parsing: nats.url))
        let jetStream = JetStream(connection: connection)
        let stream = ClusterRelay.stream(for: ended)
        #expect(try await jetStream.lastMessage(stream: stream, subject: ClusterRelay.subject(for: ended)).sequence > 0)
        await ana.link.end(reason: "done")
        // The relay purges 0.2 s after the end, retrying a purge NATS did not answer (five times,
        // a second apart): on a busy machine that can take some seconds.
        var purged = false
        let deadline = Date().addingTimeInterval(30)
        while !purged && Date() < deadline {
            do throws(JetStreamError) {
                _ = try await jetStream.lastMessage(stream: stream, subject: ClusterRelay.subject(for: ended))
                try? await Task.sleep(for: .milliseconds(50))
            } catch {
                purged = error.kind == .messageNotFound
            }
        }
        #expect(purged, "the ended session's subject is empty")
        #expect(relay.cluster.followedSessions == 1)
        // The other session is untouched: a relay that has never seen it replays it whole.
        #expect(try await jetStream.lastMessage(stream: stream, subject: ClusterRelay.subject(for: kept)).sequence > 0)
        let other = try await InProcessRelay.start(nats.url)
        let dan = try await Participant.join(kept, key: key, "dan", relays: [other.endpoint])
        #expect(dan.link.welcome.orderedHistory.map { String(decoding: $0.body, as: UTF8.self) } == ["k0", "k1", "k2"])
        // The ended session stays ended where it is remembered.
        let error = await #expect(throws: RelayError.self) {
            _ = try await Participant.join(ended, key: key, "eve", relays: [relay.endpoint])
        }
        #expect(error?.code == .sessionEnded, "\(String(describing: error))")
        await connection.close()
        await cat.link.leave()
        await dan.link.leave()
        await other.stop()
        await relay.stop()
    }

    @Test("a journal load larger than the relay's output cap reaches its participant whole, paced as the connection drains")
    func loadOverTheOutputCap() async throws {
        let nats = try startNATSNode()
        defer { nats.stop() }
        var configuration = RelayCoreConfiguration()
        configuration.maximumOutputBytes = 3 * 1024 * 1024
        let relay = try await InProcessRelay.start(nats.url, configuration: configuration)
        let other = try await InProcessRelay.start(nats.url, configuration: configuration)
        let session = UUID(), key = SigningKeyPair()
        let ana = try await Participant.join(session, key: key, "ana", relays: [relay.endpoint], create: true)
        let ben = try await Participant.join(session, key: key, "ben", relays: [other.endpoint])
        let data = (0..<(8 * 1024 * 1024 + 7)).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 12) }
        let id = UUID()
        try await ana.link.addAttachment(id: id, metadata: [1], data: data)
        // Loaded on the other relay, whose output cap is under the attachment's size.
        let loaded = try await ben.link.loadAttachment(id: id)
        #expect(loaded == data)
        // Still joined, and in sequence: a message after the load arrives.
        try ana.link.send("after".bytes, to: .everyone, reliable: true)
        #expect(await ben.wait { $0.messages(reliable: true) == ["after"] })
        await ana.link.leave()
        await ben.link.leave()
        await other.stop()
        await relay.stop()
    }

    @Test("a relay asked for many sessions at once replays at most its limit of logs at a time, and admits everyone")
    func loadsAreCapped() async throws {
        let nats = try startNATSNode()
        defer { nats.stop() }
        let first = try await InProcessRelay.start(nats.url)
        let key = SigningKeyPair()
        let sessions = (0..<6).map { _ in UUID() }
        for session in sessions {
            let host = try await Participant.join(session, key: key, "host", relays: [first.endpoint], create: true)
            for index in 0..<20 { try host.link.sendOrdered("\(index)".bytes) }
            #expect(await host.wait { $0.ordered.count == 20 })
        }
        let restarted = try await InProcessRelay.start(nats.url, concurrentLoads: 2)
        let histories = try await withThrowingTaskGroup(of: Int.self) { group in
            for session in sessions {
                group.addTask {
                    let late = try await Participant.join(session, key: key, "late", relays: [restarted.endpoint])
                    return late.link.welcome.orderedHistory.count
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(histories == Array(repeating: 20, count: 6))
        #expect(restarted.cluster.maximumConcurrentLoads == 2)
        #expect((1...2).contains(restarted.cluster.peakConcurrentLoads), "\(restarted.cluster.peakConcurrentLoads)")
        await restarted.stop()
        await first.stop()
    }

    @Test("tandem host on a cluster relay prints the relay event when NATS is lost, and again when it is back")
    func hostPrintsRelayEvents() async throws {
        let nats = try startNATSNode()
        defer { nats.stop() }
        let serve = try ServeProcess(arguments: ["--cluster", nats.url])
        defer { serve.stop() }
        let host = Process()
        host.executableURL = URL(fileURLWithPath: ProcessInfo.processInfo.environment["TANDEM_EXECUTABLE"] ?? TandemProcess.executablePath)
        host.arguments = ["host", SampleClip.directory + "/watch-together.mp4", "--relay", "127.0.0.1:\(serve.port)",
                          "--video", "none", "--events", "json"]
        let output = Pipe()
        host.standardInput = FileHandle.nullDevice
        host.standardOutput = output
        host.standardError = output
        let printed = Mutex("")
        output.fileHandleForReading.readabilityHandler = { handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            printed.withLock { $0 += text }
        }
        try host.run()
        defer {
            host.terminate()
            host.waitUntilExit()
            output.fileHandleForReading.readabilityHandler = nil
        }
        func printedLine(_ seconds: Double, _ needle: String) async -> Bool {
            let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
            while ContinuousClock.now < deadline {
                if printed.withLock({ $0.contains(needle) }) { return true }
                try? await Task.sleep(for: .milliseconds(20))
            }
            return printed.withLock { $0.contains(needle) }
        }
        #expect(await printedLine(30, #""event":"joined""#), "\(printed.withLock { $0 })")
        nats.kill()
        #expect(await printedLine(10, #""event":"relay","reason":"the relay cluster is unavailable (NATS cannot be reached)","state":"unavailable"}"#),
                "\(printed.withLock { $0 })")
        try nats.start()
        #expect(await printedLine(20, #"{"event":"relay","state":"available"}"#), "\(printed.withLock { $0 })")
    }
}
