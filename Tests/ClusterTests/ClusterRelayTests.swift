import Foundation
import Synchronization
import Testing
import TandemCluster
import TandemNATS
import TandemNet
import TandemTestKit
import TandemWire
import TandemHarness

/// Relays sharing sessions through a real three-node NATS cluster (user and password), on
/// loopback: a session spanning relays, a relay killed, a NATS node killed, a relay restarted.
@Suite("Relay cluster on NATS", .serialized, .enabled(if: NATSServerProcess.isAvailable))
struct ClusterRelayProcessTests {
    @Test("a session spans two relays: messages of both modes, proposals in one order everywhere, a late joiner's history")
    func aSessionSpansRelays() async throws {
        let world = try await TwoRelays.start()
        defer { world.nats.stop() }
        let (second, session, key, ana, ben) = (world.second, world.session, world.key, world.ana, world.ben)
        #expect(ana.link.welcome.created && !ben.link.welcome.created)
        #expect(Set(ben.link.welcome.participants.map(\.displayName)) == ["ana", "ben"])

        try ana.link.send("to ben".bytes, to: .everyone, reliable: true)
        try ben.link.send("to ana".bytes, to: .everyone, reliable: true)
        #expect(await ben.wait { $0.messages(reliable: true) == ["to ben"] })
        #expect(await ana.wait { $0.messages(reliable: true) == ["to ana"] })
        // Datagrams cross relays over core NATS (loopback loses none in practice; a few tries).
        #expect(await ben.wait(10) { participant in
            try? ana.link.send("datagram".bytes, to: .everyone, reliable: false)
            return participant.messages(reliable: false).contains("datagram")
        })

        // Proposals from both relays at once take one order, the same for everyone.
        for index in 0..<10 {
            try ana.link.sendOrdered("a\(index)".bytes)
            try ben.link.sendOrdered("b\(index)".bytes)
        }
        let bothHeard = await ana.wait { $0.ordered.count == 20 }
        let benHeard = await ben.wait { $0.ordered.count == 20 }
        #expect(bothHeard && benHeard)
        #expect(ana.ordered == ben.ordered)
        #expect(ana.ordered.map(\.order) == Array(1...20))
        // Each proposer's own proposals keep their order.
        let bodies = ana.ordered.map { String(decoding: $0.body, as: UTF8.self) }
        #expect(bodies.filter { $0.hasPrefix("a") } == (0..<10).map { "a\($0)" })
        #expect(bodies.filter { $0.hasPrefix("b") } == (0..<10).map { "b\($0)" })

        // A late joiner on the other relay from the creator gets the whole history and everyone.
        let cem = try await Participant.join(session, key: key, "cem", relays: [second.endpoint])
        #expect(cem.link.welcome.orderedHistory == ana.ordered)
        #expect(Set(cem.link.welcome.participants.map(\.displayName)) == ["ana", "ben", "cem"])
        #expect(await ana.wait { $0.events.contains { if case let .participantJoined(record) = $0 { record.displayName == "cem" } else { false } } })

        // A departure crosses relays too.
        await ben.link.leave()
        #expect(await ana.wait { $0.events.contains { if case .participantLeft = $0 { true } else { false } } })
        await ana.link.leave()
        await cem.link.leave()
        // Everyone gone, neither relay follows the session any more.
        #expect(await ana.wait { _ in world.first.cluster.followedSessions == 0 && second.cluster.followedSessions == 0 })
        // Hellos for sessions no log holds (a stranger's made-up ones) are refused and leave no
        // session followed behind them (no consumer, no subscription).
        for _ in 0..<3 {
            await #expect(throws: (any Error).self) { _ = try await Participant.join(UUID(), key: key, "eve", relays: [second.endpoint]) }
        }
        #expect(second.cluster.followedSessions == 0)
        await world.stop()
    }

    @Test("a relay loading a session while its log keeps taking proposals hands over from the replay to its stream's follower with none lost or twice; followed sessions cost no consumer of their own")
    func aSessionLoadedWhileProposalsFlowLosesNone() async throws {
        let world = try await TwoRelays.start()
        defer { world.nats.stop() }
        let (first, second, session, key, ana) = (world.first, world.second, world.session, world.key, world.ana)
        // Bounded: one proposal every millisecond or so, until 100 have gone after cem joined
        // (so that the third relay's replay runs while the log goes on, however long it takes
        // to start), at most 5,000.
        final class Flag: Sendable { let raised = Atomic<Bool>(false) }
        let cemJoined = Flag()
        let sender = Task { () throws -> Int in
            var sent = 0, afterJoin = 0
            while sent < 5_000, afterJoin < 100 {
                try ana.link.sendOrdered("p\(sent)".bytes)
                sent += 1
                if cemJoined.raised.load(ordering: .relaxed) { afterJoin += 1 }
                try await Task.sleep(for: .milliseconds(1))
            }
            return sent
        }
        #expect(await ana.wait { $0.ordered.count >= 50 })
        // cem's hello makes nothing load (the second relay follows the session for ben), so a
        // third relay loads it: its replay runs while the log goes on.
        let third = try await InProcessRelay.start(world.nats.url)
        let cem = try await Participant.join(session, key: key, "cem", relays: [third.endpoint])
        cemJoined.raised.store(true, ordering: .relaxed)
        let total = try await sender.value
        // Both have heard all of them (ana hears her own through the log too, and may be last).
        #expect(await cem.wait { $0.ordered.count >= total })
        #expect(await ana.wait { $0.ordered.count >= total })
        let bodies = cem.ordered.map { String(decoding: $0.body, as: UTF8.self) }
        #expect(cem.ordered.map(\.order) == Array(1...UInt64(total)), "history \(cem.link.welcome.orderedHistory.count), then \(cem.ordered.count - cem.link.welcome.orderedHistory.count)")
        #expect(bodies == (0..<total).map { "p\($0)" })
        #expect(cem.ordered == ana.ordered)
        #expect(!cem.link.welcome.orderedHistory.isEmpty && cem.link.welcome.orderedHistory.count < total)

        // Six more sessions over the first two relays: their consumers are the three streams'
        // followers of each relay (the third's too), none per session.
        var others: [Participant] = []
        for index in 0..<6 {
            let other = UUID()
            others.append(try await Participant.join(other, key: key, "a\(index)", relays: [first.endpoint], create: true))
            others.append(try await Participant.join(other, key: key, "b\(index)", relays: [second.endpoint]))
        }
        #expect(first.cluster.followedSessions == 7 && second.cluster.followedSessions == 7)
        let connection = try await NATSConnection.connect(to: world.nats.url)
        let jetStream = JetStream(connection: connection)
        var consumers: [Int] = []
        // The replays' consumers are deleted aside: bounded wait for the count to settle.
        for _ in 0..<100 {
            consumers = []
            for shard in 0..<ClusterRelay.streamCount {
                consumers.append(try await jetStream.streamInfo("TANDEM_SESSIONS_\(shard)").state.consumers ?? -1)
            }
            if consumers == Array(repeating: 3, count: ClusterRelay.streamCount) { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        await connection.close()
        #expect(consumers == Array(repeating: 3, count: ClusterRelay.streamCount), "consumers by stream \(consumers)")
        for participant in others + [cem] { await participant.link.leave() }
        await ana.link.leave()
        await world.ben.link.leave()
        await third.stop()
        await world.stop()
    }

    @Test("the journal spans relays: an attachment added on one relay is listed and loaded on the other; the end reaches everyone")
    func theJournalAndTheEndSpanRelays() async throws {
        let world = try await TwoRelays.start()
        defer { world.nats.stop() }
        let (first, session, key, ana, ben) = (world.first, world.session, world.key, world.ana, world.ben)
        // Three chunks and a bit, sealed or not: the relays never look inside.
        let data = (0..<(3 * RelayWireLimits.attachmentChunkSize + 1000)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let id = UUID()
        try await ana.link.addAttachment(id: id, metadata: "meta".bytes, data: data)
        #expect(await ben.wait { $0.events.contains { if case let .attachmentAdded(record) = $0 { record.id == id } else { false } } })
        #expect(try await ben.link.loadAttachment(id: id) == data)
        // A late joiner on the first relay finds it in the journal.
        let cem = try await Participant.join(session, key: key, "cem", relays: [first.endpoint])
        #expect(cem.link.welcome.attachments.map(\.id) == [id])
        #expect(try await cem.link.loadAttachment(id: id) == data)
        await ben.link.end(reason: "good night")
        for member in [ana, cem] {
            #expect(await member.wait { $0.events.contains { if case let .ended(_, reason) = $0 { reason == "good night" } else { false } } })
        }
        await world.stop()
    }

    @Test("a relay killed with SIGKILL: its participant resumes on another relay of the invite with nothing lost or twice")
    func aKilledRelaysParticipantsMove() async throws {
        let nats = try startNATSCluster()
        defer { nats.stop() }
        let doomed = try ServeProcess(arguments: ["--cluster", nats.url])
        defer { doomed.stop() }
        #expect(!doomed.printedText.contains("cluster-secret"))
        let survivor = try await InProcessRelay.start(nats.url)
        let session = UUID(), key = SigningKeyPair()
        let doomedEndpoint = RelayEndpoint(host: "127.0.0.1", port: doomed.port)
        // The creator starts at the first relay of its list: the one that will die.
        let ben = try await Participant.join(session, key: key, "ben", relays: [doomedEndpoint, survivor.endpoint], create: true)
        let ana = try await Participant.join(session, key: key, "ana", relays: [survivor.endpoint])
        for index in 0..<10 {
            try ana.link.send("m\(index)".bytes, to: .everyone, reliable: true)
            try ana.link.sendOrdered("o\(index)".bytes)
        }
        #expect(await ben.wait { $0.messages(reliable: true).count == 10 && $0.ordered.count == 10 })
        kill(doomed.pid, SIGKILL)
        // Sent while ben's relay is dead, and after.
        for index in 10..<20 {
            try ana.link.send("m\(index)".bytes, to: .everyone, reliable: true)
            try ana.link.sendOrdered("o\(index)".bytes)
        }
        let clock = ContinuousClock()
        let killed = clock.now
        #expect(await ben.wait(15) { $0.messages(reliable: true).count >= 20 && $0.ordered.count >= 20 })
        let back = clock.now - killed
        #expect(ben.messages(reliable: true) == (0..<20).map { "m\($0)" })
        #expect(ben.ordered.map(\.order) == Array(1...20))
        #expect(ben.events.contains { if case .connectionResumed = $0 { true } else { false } })
        // And ben speaks again, from the survivor.
        try ben.link.send("after".bytes, to: .everyone, reliable: true)
        #expect(await ana.wait { $0.messages(reliable: true) == ["after"] })
        print("cluster failover: ben back and caught up \(back) after its relay was killed")
        await ana.link.leave()
        await ben.link.leave()
        await survivor.stop()
    }

    // The time ordering takes to resume is JetStream's election (4-10 s here): the test prints it
    // and allows it 30 s, so that a loaded machine fails only a real loss, never a slow election.
    @Test("a NATS node killed: no proposal lost or duplicated, ordering resumes")
    func aKilledNATSNodeLosesNothing() async throws {
        let world = try await TwoRelays.start()
        defer { world.nats.stop() }
        let (nats, session, ana, ben) = (world.nats, world.session, world.ana, world.ben)
        try ana.link.sendOrdered("before".bytes)
        #expect(await ben.wait { $0.ordered.count == 1 })
        // The leader of the session's stream goes.
        let connection = try await NATSConnection.connect(to: nats.url)
        let info = try await JetStream(connection: connection).streamInfo(ClusterRelay.stream(for: session))
        await connection.close()
        let leader = try #require(info.cluster?.leader.flatMap { nats.node(named: $0) })
        leader.kill()
        let clock = ContinuousClock()
        let killed = clock.now
        for index in 0..<10 {
            try ana.link.sendOrdered("a\(index)".bytes)
            try ben.link.sendOrdered("b\(index)".bytes)
        }
        let anaHeard = await ana.wait(30) { $0.ordered.count == 21 }
        let benHeard = await ben.wait(8) { $0.ordered.count == 21 }
        print("NATS node killed: ordering resumed and all 20 proposals applied \(clock.now - killed) after the stream leader's node was killed")
        #expect(anaHeard && benHeard, "ana \(ana.ordered.map(\.order)), ben \(ben.ordered.map(\.order)), ben's events \(ben.events.filter { if case .ordered = $0 { false } else { true } })")
        #expect(ana.ordered == ben.ordered)
        #expect(ana.ordered.map(\.order) == Array(1...21))
        #expect(Set(ana.ordered.map { String(decoding: $0.body, as: UTF8.self) }).count == 21)
        await ana.link.leave()
        await ben.link.leave()
        await world.stop()
    }

    @Test("a relay restarted: its sessions still exist, with their history and participants")
    func aRestartedRelayKeepsItsSessions() async throws {
        let nats = try startNATSCluster()
        defer { nats.stop() }
        let relay = try await InProcessRelay.start(nats.url)
        let session = UUID(), key = SigningKeyPair()
        let ana = try await Participant.join(session, key: key, "ana", relays: [relay.endpoint], create: true)
        for index in 0..<5 { try ana.link.sendOrdered("o\(index)".bytes) }
        #expect(await ana.wait { $0.ordered.count == 5 })
        await relay.stop()
        let again = try await InProcessRelay.start(nats.url)
        let ben = try await Participant.join(session, key: key, "ben", relays: [again.endpoint])
        #expect(ben.link.welcome.orderedHistory.map { String(decoding: $0.body, as: UTF8.self) } == (0..<5).map { "o\($0)" })
        #expect(ben.link.welcome.participants.contains { $0.displayName == "ana" })
        await ben.link.leave()
        await again.stop()
    }

    @Test("NATS lost while serving: nobody new is admitted, with the fault unavailable; back, they are, and the session goes on")
    func natsLostThenBack() async throws {
        let nats = try NATSServerProcess(authentication: .token("cluster-token"))
        defer { nats.stop() }
        try nats.start()
        let relay = try await InProcessRelay.start(nats.url)
        let session = UUID(), key = SigningKeyPair()
        let ana = try await Participant.join(session, key: key, "ana", relays: [relay.endpoint], create: true)
        nats.kill()
        // The relay hears its NATS connection break at once (the socket closes).
        try await Task.sleep(for: .milliseconds(300))
        let error = await #expect(throws: RelayError.self) {
            _ = try await Participant.join(session, key: key, "ben", relays: [relay.endpoint])
        }
        #expect("\(error.map { "\($0)" } ?? "")".contains("cluster is unavailable"))
        // A proposal made meanwhile takes effect once NATS is back.
        try ana.link.sendOrdered("meanwhile".bytes)
        try nats.start()
        #expect(await ana.wait(15) { $0.ordered.count == 1 })
        var joined: Participant?
        for _ in 0..<100 where joined == nil {
            joined = try? await Participant.join(session, key: key, "ben", relays: [relay.endpoint])
            if joined == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        let ben = try #require(joined)
        #expect(ben.link.welcome.orderedHistory.map { String(decoding: $0.body, as: UTF8.self) } == ["meanwhile"])
        await ana.link.leave()
        await ben.link.leave()
        await relay.stop()
    }

    @Test("NATS unreachable at start: tandem serve --cluster exits 1 with one line, the secret masked")
    func unreachableAtStart() throws {
        // Nothing listens on port 1 of loopback: the connection is refused at once.
        let port = 1
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ProcessInfo.processInfo.environment["TANDEM_EXECUTABLE"] ?? TandemProcess.executablePath)
        process.arguments = ["serve", "--bind", "127.0.0.1", "--port", "0", "--cluster", "nats://tandem:hunter2@127.0.0.1:\(port)"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        process.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 1)
        #expect(text.split(separator: "\n").count == 1, "\(text)")
        #expect(text.contains("cannot reach the NATS cluster") && !text.contains("hunter2"), "\(text)")
    }
}
