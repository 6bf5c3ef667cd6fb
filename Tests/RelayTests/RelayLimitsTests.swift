import Foundation
import TandemNet
import TandemWire
import Testing

/// Every resource cap of the relay core, on virtual time: what each refuses or cuts, and that
/// everyone else goes on.
@Suite("Relay limits (core)")
struct RelayLimitsTests {
    private let key = [UInt8](repeating: 1, count: 32)

    private func admission(_ session: UUID) -> CoreAdmission { CoreAdmission(key: key, session: session) }

    private func frames(_ directives: [RelayDirective], to connection: RelayConnectionID) -> [RelayFrame] {
        CoreAdmission.frames(directives, to: connection)
    }

    private func welcomed(_ directives: [RelayDirective]) -> Bool {
        directives.contains { if case .send(_, .welcome) = $0 { true } else { false } }
    }

    private func refusal(_ directives: [RelayDirective]) -> RelayFault? {
        for case let .send(_, .refusal(fault)) in directives { return fault }
        return nil
    }

    private func error(_ directives: [RelayDirective], to connection: RelayConnectionID) -> RelayFault? {
        for case let .error(fault) in frames(directives, to: connection) { return fault }
        return nil
    }

    private func closes(_ directives: [RelayDirective], _ connection: RelayConnectionID) -> Bool {
        directives.contains { if case .close(connection) = $0 { true } else { false } }
    }

    private func address(_ last: Int) -> SocketAddress {
        // swiftlint:disable:next force_try
        try! SocketAddress(host: "127.0.0.\(last)", port: 40_000)
    }

    private func outcomes(_ directives: [RelayDirective], to connection: RelayConnectionID) -> [RelayFault?] {
        frames(directives, to: connection).compactMap { if case let .outcome(_, _, fault) = $0 { fault } else { nil } }
    }

    // MARK: Acknowledgements

    @Test("an ack beyond what the relay sent is a violation: dropped, and the others go on")
    func forgedAck() {
        var core = RelayCore()
        let session = UUID()
        let (alice, bob) = (RelayConnectionID(1), RelayConnectionID(2))
        #expect(welcomed(admission(session).admit(&core, alice, TestIdentities.make(), create: true, at: 0)))
        #expect(welcomed(admission(session).admit(&core, bob, TestIdentities.make(), create: false, at: 0)))
        // Alice was sent one frame since her welcome (bob's arrival): acknowledging it is fine.
        #expect(core.onFrame(.ack(1), from: alice, at: 1).isEmpty)
        let forged = core.onFrame(.ack(UInt64.max), from: alice, at: 2)
        #expect(error(forged, to: alice)?.code == .protocolViolation)
        #expect(closes(forged, alice))
        #expect(core.participants(of: session).count == 1)
        #expect(core.limitCounts.forgedAcknowledgements == 1)
        let message = core.onFrame(.message(sequence: 1, recipients: .everyone, reliable: true, body: [1]), from: bob, at: 3)
        #expect(message.isEmpty || error(message, to: bob) == nil)
    }

    // MARK: Connections and sessions per address, strangers

    @Test("connections per source address are capped; another address still connects")
    func connectionsPerAddress() {
        var configuration = RelayCoreConfiguration()
        configuration.maximumConnectionsPerAddress = 3
        var core = RelayCore(configuration: configuration)
        let entropy = [UInt8](repeating: 7, count: RelayCore.entropyLength)
        for index in 1...3 {
            #expect(core.onOpen(RelayConnectionID(UInt64(index)), entropy: entropy, at: 0, peer: address(2)).isEmpty)
        }
        let fourth = core.onOpen(RelayConnectionID(4), entropy: entropy, at: 0, peer: address(2))
        #expect(refusal(fourth)?.code == .limitReached)
        #expect(closes(fourth, RelayConnectionID(4)))
        #expect(core.onOpen(RelayConnectionID(5), entropy: entropy, at: 0, peer: address(3)).isEmpty)
        // A closed connection frees its place.
        _ = core.onClose(RelayConnectionID(4), at: 1)
        _ = core.onClose(RelayConnectionID(1), at: 1)
        #expect(core.onOpen(RelayConnectionID(6), entropy: entropy, at: 2, peer: address(2)).isEmpty)
        #expect(core.limitCounts.connectionsPerAddress == 1)
    }

    @Test("connections not yet admitted are capped over the whole relay: the oldest makes room; admission frees a place")
    func unauthenticatedConnections() {
        var configuration = RelayCoreConfiguration()
        configuration.maximumUnauthenticatedConnections = 2
        var core = RelayCore(configuration: configuration)
        let session = UUID()
        #expect(welcomed(admission(session).admit(&core, RelayConnectionID(1), TestIdentities.make(), create: true, at: 0, peer: address(2))))
        let entropy = [UInt8](repeating: 7, count: RelayCore.entropyLength)
        #expect(core.onOpen(RelayConnectionID(2), entropy: entropy, at: 0, peer: address(3)).isEmpty)
        #expect(core.onOpen(RelayConnectionID(3), entropy: entropy, at: 0, peer: address(4)).isEmpty)
        #expect(core.unauthenticatedCount == 2)
        // Every source holds one: the oldest of them makes room for the newcomer.
        let over = core.onOpen(RelayConnectionID(4), entropy: entropy, at: 0, peer: address(5))
        #expect(refusal(over)?.code == .limitReached)
        #expect(closes(over, RelayConnectionID(2)))
        #expect(!core.isUnauthenticated(RelayConnectionID(2)))
        #expect(core.isUnauthenticated(RelayConnectionID(3)))
        #expect(core.isUnauthenticated(RelayConnectionID(4)))
        #expect(!core.isUnauthenticated(RelayConnectionID(1)))
        #expect(core.limitCounts.unauthenticated == 1)
    }

    @Test("sessions per creating address are capped; joining them is not")
    func sessionsPerAddress() {
        var configuration = RelayCoreConfiguration()
        configuration.maximumSessionsPerAddress = 2
        var core = RelayCore(configuration: configuration)
        let sessions = [UUID(), UUID(), UUID()]
        #expect(welcomed(admission(sessions[0]).admit(&core, RelayConnectionID(1), TestIdentities.make(), create: true, at: 0, peer: address(2))))
        #expect(welcomed(admission(sessions[1]).admit(&core, RelayConnectionID(2), TestIdentities.make(), create: true, at: 0, peer: address(2))))
        let third = admission(sessions[2]).admit(&core, RelayConnectionID(3), TestIdentities.make(), create: true, at: 0, peer: address(2))
        #expect(refusal(third)?.code == .limitReached)
        #expect(core.sessionCount == 2)
        // The same address joins an existing session, and another address creates one.
        #expect(welcomed(admission(sessions[0]).admit(&core, RelayConnectionID(4), TestIdentities.make(), create: false, at: 0, peer: address(2))))
        #expect(welcomed(admission(sessions[2]).admit(&core, RelayConnectionID(5), TestIdentities.make(), create: true, at: 0, peer: address(3))))
        #expect(core.limitCounts.sessionsPerAddress == 1)
    }

    // MARK: The memory budget

    /// By the budget's own count (the shell's queues), or by the process's footprint that the
    /// shell measures (`footprintBytes`, `tandem serve`) while the budget's count is low.
    @Test("at the memory budget new sessions, joins and uploads are refused; existing sessions keep flowing",
          arguments: [false, true])
    func memoryBudget(byFootprint: Bool) {
        var configuration = RelayCoreConfiguration()
        configuration.memoryLimit = 1024 * 1024
        var core = RelayCore(configuration: configuration)
        let session = UUID()
        let (alice, bob) = (RelayConnectionID(1), RelayConnectionID(2))
        #expect(welcomed(admission(session).admit(&core, alice, TestIdentities.make(), create: true, at: 0)))
        #expect(welcomed(admission(session).admit(&core, bob, TestIdentities.make(), create: false, at: 0)))
        // The shell reports its queues at the budget, or the process's footprint there.
        if byFootprint {
            core.footprintBytes = configuration.memoryLimit
            #expect(core.budgetBytes < configuration.memoryLimit, "shedding goes by the budget, which is not at its limit")
        } else {
            core.shellBytes = configuration.memoryLimit
        }
        #expect(refusal(admission(UUID()).admit(&core, RelayConnectionID(3), TestIdentities.make(), create: true, at: 1))?.code == .limitReached)
        #expect(refusal(admission(session).admit(&core, RelayConnectionID(4), TestIdentities.make(), create: false, at: 1))?.code == .limitReached)
        let message = core.onFrame(.message(sequence: 1, recipients: .everyone, reliable: true, body: [1, 2, 3]), from: alice, at: 2)
        #expect(frames(message, to: bob).count == 1, "an existing session keeps flowing")
        let entry = RelayAttachmentEntry(id: UUID(), owner: UUID(), size: 10, metadata: [])
        _ = core.onFrame(.attachmentAdd(sequence: 2, entry: entry), from: alice, at: 3)
        let refused = core.onFrame(.attachmentChunk(sequence: 3, id: entry.id, data: [UInt8](repeating: 0, count: 10)[...]), from: alice, at: 4)
        #expect(outcomes(refused, to: alice).first??.code == .limitReached)
        #expect(core.limitCounts.memory == 3)
        // Below the budget again, a newcomer is let in.
        core.shellBytes = 0
        core.footprintBytes = configuration.memoryLimit - 64 * 1024
        #expect(welcomed(admission(session).admit(&core, RelayConnectionID(5), TestIdentities.make(), create: false, at: 5)))
    }

    @Test("what the budget counts comes back when it goes: outboxes, history, journal")
    func accounting() {
        var core = RelayCore()
        let session = UUID()
        let (alice, bob) = (RelayConnectionID(1), RelayConnectionID(2))
        _ = admission(session).admit(&core, alice, TestIdentities.make(), create: true, at: 0)
        _ = admission(session).admit(&core, bob, TestIdentities.make(), create: false, at: 0)
        _ = core.onFrame(.message(sequence: 1, recipients: .everyone, reliable: true, body: [UInt8](repeating: 1, count: 1000)), from: alice, at: 1)
        #expect(core.accountedBytes == 1000, "bob's outbox holds the body")
        _ = core.onFrame(.proposal(sequence: 2, body: [UInt8](repeating: 2, count: 500)), from: alice, at: 2)
        #expect(core.accountedBytes == 1000 + 500 + 2 * 500, "the history and both outboxes")
        let entry = RelayAttachmentEntry(id: UUID(), owner: UUID(), size: 0, metadata: [UInt8](repeating: 3, count: 4096))
        _ = core.onFrame(.attachmentAdd(sequence: 3, entry: entry), from: alice, at: 3)
        #expect(core.accountedBytes == 1000 + 1500 + 4096)
        _ = core.onFrame(.leave(sequence: 1), from: bob, at: 4)
        _ = core.onFrame(.leave(sequence: 4), from: alice, at: 5)
        #expect(core.sessionCount == 0)
        #expect(core.accountedBytes == 0)
    }

    @Test("one who joins and leaves again and again costs the budget nothing more than once")
    func rejoiningDoesNotLeakTheBudget() {
        var core = RelayCore()
        let session = UUID()
        _ = admission(session).admit(&core, RelayConnectionID(1), TestIdentities.make(), create: true, at: 0)
        let bob = TestIdentities.make()
        var afterFirst: Int?
        for round in 0..<20 {
            let connection = RelayConnectionID(UInt64(2 + round))
            #expect(welcomed(admission(session).admit(&core, connection, bob, create: false, at: Int64(round))))
            _ = core.onFrame(.leave(sequence: 1), from: connection, at: Int64(round))
            if afterFirst == nil { afterFirst = core.accountedBytes }
            #expect(core.accountedBytes == afterFirst, "round \(round)")
        }
        #expect((afterFirst ?? 0) > 0, "the departed presence is counted")
    }

    @Test("an ended session stays ended: nobody creates it again while the relay remembers it")
    func anEndedSessionCannotBeCreatedAgain() {
        var core = RelayCore()
        let session = UUID()
        let alice = RelayConnectionID(1)
        _ = admission(session).admit(&core, alice, TestIdentities.make(), create: true, at: 0)
        _ = core.onFrame(.end(sequence: 1, reason: "good night"), from: alice, at: 1)
        #expect(core.sessionCount == 0)
        let again = CoreAdmission(key: [UInt8](repeating: 9, count: 32), session: session)
            .admit(&core, RelayConnectionID(2), TestIdentities.make(), create: true, at: 2)
        #expect(refusal(again)?.code == .sessionEnded)
        #expect(core.sessionCount == 0)
    }

    // MARK: The journal

    @Test("the journal counts metadata: empty attachments with large metadata fill it")
    func journalCountsMetadata() {
        var configuration = RelayCoreConfiguration()
        configuration.maximumJournalBytes = 100 * 1024
        var core = RelayCore(configuration: configuration)
        let session = UUID()
        let alice = RelayConnectionID(1)
        _ = admission(session).admit(&core, alice, TestIdentities.make(), create: true, at: 0)
        var results: [RelayFault?] = []
        for sequence in UInt64(1)...3 {
            let entry = RelayAttachmentEntry(id: UUID(), owner: UUID(), size: 0, metadata: [UInt8](repeating: 0, count: 40 * 1024))
            results += outcomes(core.onFrame(.attachmentAdd(sequence: sequence, entry: entry), from: alice, at: Int64(sequence)), to: alice)
        }
        #expect(results.count == 3)
        #expect(results[0] == nil && results[1] == nil)
        #expect(results[2]?.code == .limitReached)
    }

    @Test("uploads announced together are reserved: they cannot all pass the journal's cap")
    func concurrentAnnouncements() {
        var configuration = RelayCoreConfiguration()
        configuration.maximumJournalBytes = 1024 * 1024
        var core = RelayCore(configuration: configuration)
        let session = UUID()
        let connections = (1...3).map { RelayConnectionID(UInt64($0)) }
        for (index, connection) in connections.enumerated() {
            _ = admission(session).admit(&core, connection, TestIdentities.make(), create: index == 0, at: 0)
        }
        let entries = connections.map { _ in RelayAttachmentEntry(id: UUID(), owner: UUID(), size: 400 * 1024, metadata: []) }
        for (connection, entry) in zip(connections, entries) {
            _ = core.onFrame(.attachmentAdd(sequence: 1, entry: entry), from: connection, at: 1)
        }
        // Each sends its data in two chunks; the third was refused at its announcement already.
        var results: [RelayFault?] = []
        for (connection, entry) in zip(connections, entries) {
            for half in 0..<2 {
                let chunk = [UInt8](repeating: 9, count: 200 * 1024)[...]
                let directives = core.onFrame(.attachmentChunk(sequence: UInt64(2 + half), id: entry.id, data: chunk), from: connection, at: 2)
                results += outcomes(directives, to: connection)
            }
        }
        #expect(results.count == 3)
        #expect(results.filter { $0 == nil }.count == 2)
        #expect(results[2]?.code == .limitReached)
    }

    @Test("attachments per session are capped, uploads in progress included")
    func attachmentsPerSession() {
        var configuration = RelayCoreConfiguration()
        configuration.maximumAttachments = 2
        var core = RelayCore(configuration: configuration)
        let session = UUID()
        let alice = RelayConnectionID(1)
        _ = admission(session).admit(&core, alice, TestIdentities.make(), create: true, at: 0)
        var results: [RelayFault?] = []
        for sequence in UInt64(1)...3 {
            let entry = RelayAttachmentEntry(id: UUID(), owner: UUID(), size: 0, metadata: [1])
            results += outcomes(core.onFrame(.attachmentAdd(sequence: sequence, entry: entry), from: alice, at: 1), to: alice)
        }
        #expect(results.map { $0?.code } == [nil, nil, .limitReached])
        #expect(core.limitCounts.journal == 1)
    }

    // MARK: Fan-out

    @Test("at the fan-out cap the sender is paused until an instant, and nobody is dropped")
    func fanoutPause() {
        var configuration = RelayCoreConfiguration()
        configuration.fanoutDeliveriesPerSecond = 100
        configuration.fanoutBurst = 0.1
        var core = RelayCore(configuration: configuration)
        let session = UUID()
        let alice = RelayConnectionID(1)
        _ = admission(session).admit(&core, alice, TestIdentities.make(), create: true, at: 0)
        for index in 2...5 { _ = admission(session).admit(&core, RelayConnectionID(UInt64(index)), TestIdentities.make(), create: false, at: 0) }
        var pause: Int64?
        var sequence: UInt64 = 0
        // Four recipients a message; ten deliveries of burst: the third message goes over it.
        while pause == nil, sequence < 10 {
            sequence += 1
            let directives = core.onFrame(.message(sequence: sequence, recipients: .everyone, reliable: true, body: [1]), from: alice, at: 1_000)
            for case let .pauseReading(connection, until) in directives where connection == alice { pause = until }
            #expect(frames(directives, to: RelayConnectionID(2)).count == 1, "every message is still delivered")
        }
        #expect(sequence == 3)
        let until = try! #require(pause)
        // Two deliveries over: paid back at 100 a second, 20 ms later.
        #expect(until > 1_000 && until <= 1_000 + 21_000_000)
        #expect(core.participants(of: session).count == 5)
        #expect(core.limitCounts.fanoutPauses == 1)
        // After the instant the sender is not paused by its next message.
        let later = core.onFrame(.message(sequence: sequence + 1, recipients: .only([]), reliable: true, body: [1]), from: alice, at: until + 40_000_000)
        #expect(!later.contains { if case .pauseReading = $0 { true } else { false } })
    }

    // MARK: Streamed loads

    @Test("a load goes out a window at a time as the connection drains, every byte once, in order")
    func streamedLoad() {
        var configuration = RelayCoreConfiguration()
        configuration.loadWindowBytes = 512 * 1024
        var core = RelayCore(configuration: configuration)
        let session = UUID()
        let alice = RelayConnectionID(1)
        _ = admission(session).admit(&core, alice, TestIdentities.make(), create: true, at: 0)
        let size = 3 * 1024 * 1024 + 5
        let data = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let entry = RelayAttachmentEntry(id: UUID(), owner: UUID(), size: size, metadata: [])
        _ = core.onFrame(.attachmentAdd(sequence: 1, entry: entry), from: alice, at: 0)
        var sequence: UInt64 = 1
        var offset = 0
        while offset < size {
            sequence += 1
            let end = min(offset + RelayWireLimits.attachmentChunkSize, size)
            _ = core.onFrame(.attachmentChunk(sequence: sequence, id: entry.id, data: data[offset..<end]), from: alice, at: 0)
            offset = end
        }
        sequence += 1
        var directives = core.onFrame(.loadRequest(sequence: sequence, id: entry.id), from: alice, at: 1)
        var loaded: [UInt8] = []
        var rounds = 0
        var finished = false
        while !finished, rounds < 100 {
            rounds += 1
            var chunkBytes = 0
            for frame in frames(directives, to: alice) {
                if case let .loadChunk(_, request, chunk) = frame, request == sequence {
                    loaded += chunk
                    chunkBytes += chunk.count
                }
                if case let .outcome(_, request, fault) = frame, request == sequence {
                    #expect(fault == nil)
                    finished = true
                }
            }
            #expect(chunkBytes <= configuration.loadWindowBytes, "never more than a window at once")
            let asks = directives.contains { if case .notifyWhenDrained(alice) = $0 { true } else { false } }
            #expect(asks == !finished)
            directives = core.onDrained(alice, at: Int64(1 + rounds))
        }
        #expect(finished)
        #expect(rounds == 7, "3 MiB and 5 bytes in windows of 512 KiB")
        #expect(loaded == data)
        // A drained report with nothing left to send does nothing.
        #expect(core.onDrained(alice, at: 1_000).isEmpty)
    }

    // MARK: Datagram registration

    @Test("a registration binds only from the TCP peer's address, after the cookie comes back")
    func datagramRegistration() throws {
        var core = RelayCore(cookieKey: [UInt8](repeating: 5, count: 32))
        let session = UUID()
        let (alice, bob) = (RelayConnectionID(1), RelayConnectionID(2))
        let aliceID = TestIdentities.make()
        let aliceWelcome = admission(session).admit(&core, alice, aliceID, create: true, at: 0, peer: address(2))
        let bobWelcome = admission(session).admit(&core, bob, TestIdentities.make(), create: false, at: 0, peer: address(3))
        func token(_ directives: [RelayDirective], _ connection: RelayConnectionID) -> [UInt8]? {
            for case let .welcome(welcome) in frames(directives, to: connection) { return welcome.token }
            return nil
        }
        let aliceToken = try #require(token(aliceWelcome, alice))
        let bobToken = try #require(token(bobWelcome, bob))
        let aliceUDP = try SocketAddress(host: "127.0.0.2", port: 50_000)
        let bobUDP = try SocketAddress(host: "127.0.0.3", port: 50_001)
        let spoofed = try SocketAddress(host: "127.0.0.9", port: 50_000)

        // From another address than alice's TCP peer: nothing at all is answered.
        #expect(core.onDatagram(.register(token: aliceToken), from: spoofed, at: 1).isEmpty)
        // From hers: a cookie no larger than the request, sent back to where it came from.
        let answered = core.onDatagram(.register(token: aliceToken), from: aliceUDP, at: 1)
        guard case let .answerDatagram(to, .cookie(cookieToken, cookie))? = answered.first else {
            Issue.record("no cookie: \(answered)")
            return
        }
        #expect(to == aliceUDP && cookieToken == aliceToken)
        #expect(RelayDatagram.cookie(token: cookieToken, cookie: cookie).encoded().count
            <= RelayDatagram.register(token: aliceToken).encoded().count)
        // A wrong cookie, or the right one from another port, binds nothing.
        var forged = cookie
        forged[20] ^= 1
        #expect(core.onDatagram(.confirm(token: aliceToken, cookie: forged), from: aliceUDP, at: 2).isEmpty)
        let otherPort = try SocketAddress(host: "127.0.0.2", port: 50_009)
        #expect(core.onDatagram(.confirm(token: aliceToken, cookie: cookie), from: otherPort, at: 2).isEmpty)
        // A stale cookie binds nothing either.
        var stale = core
        #expect(stale.onDatagram(.confirm(token: aliceToken, cookie: cookie), from: aliceUDP,
                                 at: 2 + core.configuration.datagramCookieLifetime).isEmpty)
        let bound = core.onDatagram(.confirm(token: aliceToken, cookie: cookie), from: aliceUDP, at: 2)
        #expect(bound.contains { if case .bindDatagrams(RelayToken(aliceToken), aliceUDP) = $0 { true } else { false } })
        #expect(bound.contains { if case .answerDatagram(aliceUDP, .registered(aliceToken)) = $0 { true } else { false } })

        // Bob is not registered: alice's datagram fans out to nobody.
        let unreliable = RelayDatagram.unreliable(token: aliceToken, recipients: .everyone, body: [UInt8](repeating: 1, count: 1000))
        #expect(core.onDatagram(unreliable, from: aliceUDP, at: 3).isEmpty)
        guard case let .answerDatagram(_, .cookie(_, bobCookie))? = core.onDatagram(.register(token: bobToken), from: bobUDP, at: 3).first else {
            Issue.record("no cookie for bob")
            return
        }
        _ = core.onDatagram(.confirm(token: bobToken, cookie: bobCookie), from: bobUDP, at: 3)
        #expect(core.onDatagram(unreliable, from: aliceUDP, at: 4).count == 1)
        // Alice's token from a spoofed source gets no fan-out.
        #expect(core.onDatagram(unreliable, from: spoofed, at: 5).isEmpty)
        // Registrations expire unless refreshed.
        let lifetime = core.configuration.datagramRegistrationLifetime
        let expiry = core.onTick(at: 4 + lifetime)
        #expect(expiry.contains { if case .forgetToken(RelayToken(aliceToken)) = $0 { true } else { false } })
        #expect(core.onDatagram(unreliable, from: aliceUDP, at: 5 + lifetime).isEmpty)
        #expect(core.limitCounts.datagramRegistrations >= 3)
    }

    @Test("datagrams of a participant without a live connection are dropped")
    func datagramsNeedAConnection() throws {
        var core = RelayCore(cookieKey: [UInt8](repeating: 5, count: 32))
        let session = UUID()
        let alice = RelayConnectionID(1)
        let welcome = admission(session).admit(&core, alice, TestIdentities.make(), create: true, at: 0, peer: address(2))
        _ = admission(session).admit(&core, RelayConnectionID(2), TestIdentities.make(), create: false, at: 0, peer: address(3))
        var token: [UInt8] = []
        for case let .welcome(body) in frames(welcome, to: alice) { token = body.token }
        let udp = try SocketAddress(host: "127.0.0.2", port: 50_000)
        _ = core.onClose(alice, at: 1)
        #expect(core.onDatagram(.register(token: token), from: udp, at: 2).isEmpty)
        #expect(core.onDatagram(.unreliable(token: token, recipients: .everyone, body: [1]), from: udp, at: 2).isEmpty)
    }
}
