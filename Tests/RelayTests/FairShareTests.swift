import Foundation
import TandemNet
import TandemWire
import Testing

/// The relay's fair shares on virtual time: sources (an IPv4 address, an IPv6 /64), the places
/// of connections not yet admitted, admission proofs, the memory budget and fan-out, each
/// shared so that the largest holder gives way and a newcomer with nothing is let in.
@Suite("Relay fair shares (core)")
struct FairShareTests {
    private let key = [UInt8](repeating: 3, count: 32)
    private let entropy = [UInt8](repeating: 7, count: RelayCore.entropyLength)

    private func admission(_ session: UUID) -> CoreAdmission { CoreAdmission(key: key, session: session) }

    private func address(_ host: String) -> SocketAddress {
        // swiftlint:disable:next force_try
        try! SocketAddress(host: host, port: 40_000)
    }

    private func welcomed(_ directives: [RelayDirective]) -> Bool {
        directives.contains { if case .send(_, .welcome) = $0 { true } else { false } }
    }

    private func refused(_ directives: [RelayDirective], _ connection: RelayConnectionID) -> RelayFault? {
        for case let .send(id, .refusal(fault)) in directives where id == connection { return fault }
        return nil
    }

    private func paused(_ directives: [RelayDirective], _ connection: RelayConnectionID) -> Int64? {
        for case let .pauseReading(id, until) in directives where id == connection { return until }
        return nil
    }

    private func outcomes(_ directives: [RelayDirective], to connection: RelayConnectionID) -> [RelayFault?] {
        CoreAdmission.frames(directives, to: connection).compactMap { if case let .outcome(_, _, fault) = $0 { fault } else { nil } }
    }

    // MARK: Sources

    @Test("a source is an IPv4 address or an IPv6 /64, with its /48 as the wider prefix")
    func sources() {
        #expect(RelaySource(address("203.0.113.5")).key == "203.0.113.5")
        #expect(RelaySource(address("203.0.113.5")).wider == nil)
        #expect(RelaySource(address("::ffff:203.0.113.5")).key == "203.0.113.5")
        let one = RelaySource(address("2001:db8:1:2::1"))
        let other = RelaySource(address("2001:db8:1:2:ffff:ffff:ffff:ffff"))
        #expect(one.key == "2001:db8:1:2::/64")
        #expect(one == other, "one /64 is one source whatever its low bits")
        #expect(one.wider == "2001:db8:1::/48")
        #expect(RelaySource(address("2001:db8:1:3::1")).key != one.key)
        #expect(RelaySource(address("2001:db8:1:3::1")).wider == one.wider)
    }

    // MARK: Connections not yet admitted

    @Test("connections not yet admitted are capped per source, an IPv6 /64 as one; other sources still connect")
    func unadmittedPerSource() {
        var configuration = RelayCoreConfiguration()
        configuration.maximumUnadmittedPerSource = 2
        var core = RelayCore(configuration: configuration)
        #expect(core.onOpen(RelayConnectionID(1), entropy: entropy, at: 0, peer: address("2001:db8:1:2::1")).isEmpty)
        #expect(core.onOpen(RelayConnectionID(2), entropy: entropy, at: 0, peer: address("2001:db8:1:2::2")).isEmpty)
        let third = core.onOpen(RelayConnectionID(3), entropy: entropy, at: 0, peer: address("2001:db8:1:2::3"))
        #expect(refused(third, RelayConnectionID(3))?.code == .limitReached)
        #expect(core.onOpen(RelayConnectionID(4), entropy: entropy, at: 0, peer: address("2001:db8:1:3::1")).isEmpty)
        #expect(core.onOpen(RelayConnectionID(5), entropy: entropy, at: 0, peer: address("198.51.100.7")).isEmpty)
        // A place comes back when one of them goes.
        _ = core.onClose(RelayConnectionID(3), at: 1)
        _ = core.onClose(RelayConnectionID(1), at: 1)
        #expect(core.onOpen(RelayConnectionID(6), entropy: entropy, at: 1, peer: address("2001:db8:1:2::6")).isEmpty)
    }

    @Test("at the relay-wide cap the oldest of the source holding the most makes room for a newcomer")
    func oldestOfTheLargestMakesRoom() {
        var configuration = RelayCoreConfiguration()
        configuration.maximumUnauthenticatedConnections = 4
        configuration.maximumUnadmittedPerSource = 3
        var core = RelayCore(configuration: configuration)
        for index in 1...3 {
            #expect(core.onOpen(RelayConnectionID(UInt64(index)), entropy: entropy, at: Int64(index), peer: address("10.0.0.1")).isEmpty)
        }
        #expect(core.onOpen(RelayConnectionID(4), entropy: entropy, at: 4, peer: address("10.0.0.2")).isEmpty)
        let newcomer = core.onOpen(RelayConnectionID(5), entropy: entropy, at: 5, peer: address("10.0.0.3"))
        #expect(refused(newcomer, RelayConnectionID(5)) == nil, "the newcomer keeps its place")
        #expect(refused(newcomer, RelayConnectionID(1))?.code == .limitReached, "the largest source's oldest goes")
        #expect(newcomer.contains { if case .close(RelayConnectionID(1)) = $0 { true } else { false } })
        #expect(core.limitCounts.unauthenticated == 1)
        // The newcomer is admitted as usual.
        let session = UUID()
        let hello = RelayHello(sessionID: session, participant: TestIdentities.entry(TestIdentities.make(), "p"), create: true,
                               activity: [], resume: false, received: 0)
        #expect(CoreAdmission.frames(core.onFrame(.hello(hello), from: RelayConnectionID(5), at: 6), to: RelayConnectionID(5))
            .contains { if case .challenge = $0 { true } else { false } })
    }

    @Test("a connection that sends no hello is closed after the hello timeout; one that did waits for the handshake's")
    func silentConnections() {
        var core = RelayCore()
        _ = core.onOpen(RelayConnectionID(1), entropy: entropy, at: 0, peer: address("10.0.0.1"))
        _ = core.onOpen(RelayConnectionID(2), entropy: entropy, at: 0, peer: address("10.0.0.2"))
        let hello = RelayHello(sessionID: UUID(), participant: TestIdentities.entry(TestIdentities.make(), "p"), create: true,
                               activity: [], resume: false, received: 0)
        _ = core.onFrame(.hello(hello), from: RelayConnectionID(2), at: 500_000_000)
        #expect(refused(core.onTick(at: 1_900_000_000), RelayConnectionID(1)) == nil)
        let tick = core.onTick(at: 2_100_000_000)
        #expect(refused(tick, RelayConnectionID(1))?.text.contains("no hello") == true)
        #expect(refused(tick, RelayConnectionID(2)) == nil)
        #expect(core.limitCounts.silentStrangers == 1)
    }

    // MARK: Proofs

    @Test("admission proofs are limited per source; another source is still admitted")
    func proofsPerSource() {
        var configuration = RelayCoreConfiguration()
        configuration.proofsPerSecondPerSource = 2
        configuration.proofBurstPerSource = 2
        var core = RelayCore(configuration: configuration)
        let session = UUID()
        #expect(welcomed(admission(session).admit(&core, RelayConnectionID(1), TestIdentities.make(), create: true, at: 0, peer: address("10.0.0.1"))))
        #expect(welcomed(admission(session).admit(&core, RelayConnectionID(2), TestIdentities.make(), create: false, at: 0, peer: address("10.0.0.1"))))
        let third = admission(session).admit(&core, RelayConnectionID(3), TestIdentities.make(), create: false, at: 0, peer: address("10.0.0.1"))
        #expect(refused(third, RelayConnectionID(3))?.code == .limitReached)
        #expect(core.limitCounts.proofs == 1)
        #expect(welcomed(admission(session).admit(&core, RelayConnectionID(4), TestIdentities.make(), create: false, at: 0, peer: address("10.0.0.2"))))
        // Half a second later the source has earned one more.
        #expect(welcomed(admission(session).admit(&core, RelayConnectionID(5), TestIdentities.make(), create: false, at: 500_000_000, peer: address("10.0.0.1"))))
    }

    @Test("past the relay's own proof limit, a source that used its share is refused and one below it is still checked")
    func proofsRelayWide() {
        var configuration = RelayCoreConfiguration()
        configuration.proofsPerSecond = 2
        var core = RelayCore(configuration: configuration)
        let session = UUID()
        var next: UInt64 = 0
        func admit(from host: String) -> [RelayDirective] {
            next += 1
            return admission(session).admit(&core, RelayConnectionID(next), TestIdentities.make(), create: next == 1, at: 0, peer: address(host))
        }
        // The relay's burst is 4: one source spends it, then is refused.
        for _ in 0..<4 { #expect(welcomed(admit(from: "10.0.0.1"))) }
        let over = admit(from: "10.0.0.1")
        #expect(refused(over, RelayConnectionID(next))?.code == .limitReached)
        // Another source, below its share of the burst (4 ÷ 2 sources), is still checked.
        #expect(welcomed(admit(from: "10.0.0.2")))
        #expect(welcomed(admit(from: "10.0.0.2")))
        #expect(refused(admit(from: "10.0.0.2"), RelayConnectionID(next))?.code == .limitReached)
        #expect(core.limitCounts.proofs == 2)
    }

    // MARK: Memory

    /// Uploads `size` bytes as attachment of `session`'s participant on `connection`, in chunks;
    /// the directives of the announcement and the outcome's fault.
    private func upload(_ core: inout RelayCore, _ connection: RelayConnectionID, sequence: inout UInt64, size: Int,
                        at now: Int64) -> (announced: [RelayDirective], outcome: RelayFault??) {
        let entry = RelayAttachmentEntry(id: UUID(), owner: UUID(), size: size, metadata: [])
        sequence += 1
        let announced = core.onFrame(.attachmentAdd(sequence: sequence, entry: entry), from: connection, at: now)
        var outcome: RelayFault??
        var sent = 0
        while sent < size {
            let count = min(256 * 1024, size - sent)
            sequence += 1
            let directives = core.onFrame(.attachmentChunk(sequence: sequence, id: entry.id, data: [UInt8](repeating: 5, count: count)[...]),
                                          from: connection, at: now)
            sent += count
            if let first = outcomes(directives, to: connection).first { outcome = first }
        }
        return (announced, outcome)
    }

    @Test("at the memory budget a newcomer with nothing is let in, and an upload that fits its share makes the largest holder give way")
    func largestHolderGivesWay() throws {
        var configuration = RelayCoreConfiguration()
        configuration.memoryLimit = 4 * 1024 * 1024
        var core = RelayCore(configuration: configuration)
        // A stranger fills the whole budget with a session of its own.
        let (hog, hogSession) = (RelayConnectionID(1), UUID())
        #expect(welcomed(admission(hogSession).admit(&core, hog, TestIdentities.make(), create: true, at: 0, peer: address("10.0.0.1"))))
        var hogSequence: UInt64 = 0
        for _ in 0..<4 {
            #expect(upload(&core, hog, sequence: &hogSequence, size: 1024 * 1024, at: 1).outcome == .some(nil))
        }
        #expect(core.admissionBytes >= configuration.memoryLimit)
        // Its own source gets nothing more: a fifth upload and another join of its own are refused.
        #expect(upload(&core, hog, sequence: &hogSequence, size: 1024, at: 2).outcome??.code == .limitReached)
        let hogAgain = admission(hogSession).admit(&core, RelayConnectionID(2), TestIdentities.make(), create: false, at: 2, peer: address("10.0.0.1"))
        #expect(refused(hogAgain, RelayConnectionID(2))?.code == .limitReached)
        // Newcomers with nothing create and join.
        let (host, guest, session) = (RelayConnectionID(3), RelayConnectionID(4), UUID())
        #expect(welcomed(admission(session).admit(&core, host, TestIdentities.make(), create: true, at: 3, peer: address("10.0.0.2"))))
        #expect(welcomed(admission(session).admit(&core, guest, TestIdentities.make(), create: false, at: 3, peer: address("10.0.0.3"))))
        // The host's upload within its share fits: the hog's newest attachments go, and it hears so.
        var hostSequence: UInt64 = 0
        let (announced, outcome) = upload(&core, host, sequence: &hostSequence, size: 3 * 512 * 1024, at: 4)
        #expect(outcome == .some(nil), "the upload was taken")
        let removed = CoreAdmission.frames(announced, to: hog).filter { if case .attachmentRemoved = $0 { true } else { false } }
        #expect(removed.count == 2)
        #expect(core.limitCounts.shed == 2)
        #expect(core.budgetBytes <= configuration.memoryLimit)
    }

    @Test("over the budget the largest holder's uploads in progress go first, then its attachments; a newcomer's stay")
    func overBudgetShedsTheLargest() {
        var configuration = RelayCoreConfiguration()
        configuration.memoryLimit = 2 * 1024 * 1024
        var core = RelayCore(configuration: configuration)
        let (hog, hogSession) = (RelayConnectionID(1), UUID())
        _ = admission(hogSession).admit(&core, hog, TestIdentities.make(), create: true, at: 0, peer: address("10.0.0.1"))
        var sequence: UInt64 = 0
        #expect(upload(&core, hog, sequence: &sequence, size: 1024 * 1024, at: 1).outcome == .some(nil))
        // An upload announced, half sent: its reservation counts.
        let entry = RelayAttachmentEntry(id: UUID(), owner: UUID(), size: 900 * 1024, metadata: [])
        sequence += 1
        _ = core.onFrame(.attachmentAdd(sequence: sequence, entry: entry), from: hog, at: 2)
        sequence += 1
        _ = core.onFrame(.attachmentChunk(sequence: sequence, id: entry.id, data: [UInt8](repeating: 1, count: 400 * 1024)[...]), from: hog, at: 2)
        // The shell's queues push the budget over: the upload in progress goes first.
        core.shellBytes = 200 * 1024
        _ = core.onOverBudget(at: 3)
        #expect(core.limitCounts.shed == 1)
        #expect(core.budgetBytes <= configuration.memoryLimit)
        sequence += 1
        let rest = core.onFrame(.attachmentChunk(sequence: sequence, id: entry.id, data: [UInt8](repeating: 1, count: 500 * 1024)[...]), from: hog, at: 4)
        #expect(outcomes(rest, to: hog).first??.code == .limitReached, "the shed upload still ends, and its outcome says why")
        // Further over: its attachment goes too.
        core.shellBytes = 1_500 * 1024
        let shed = core.onOverBudget(at: 5)
        #expect(CoreAdmission.frames(shed, to: hog).contains { if case .attachmentRemoved = $0 { true } else { false } })
        #expect(core.limitCounts.shed == 2)
    }

    // MARK: Fan-out

    @Test("a session's fan-out debt pauses its heavy sender; a light one waits far less, and acknowledgements never wait")
    func fanoutPausesWhoMadeTheDebt() {
        var configuration = RelayCoreConfiguration()
        configuration.fanoutDeliveriesPerSecond = 100
        configuration.fanoutBurst = 0.1
        var core = RelayCore(configuration: configuration)
        let session = UUID()
        let connections = (1...4).map { RelayConnectionID(UInt64($0)) }
        for (index, connection) in connections.enumerated() {
            _ = admission(session).admit(&core, connection, TestIdentities.make(), create: index == 0, at: 0)
        }
        let (heavy, light) = (connections[0], connections[1])
        _ = core.onFrame(.message(sequence: 1, recipients: .everyone, reliable: true, body: [1]), from: light, at: 0)
        var heavyPause: Int64?
        for sequence in UInt64(1)...20 {
            let directives = core.onFrame(.message(sequence: sequence, recipients: .everyone, reliable: true, body: [1]), from: heavy, at: 1_000)
            if let until = paused(directives, heavy) { heavyPause = until }
        }
        let heavyUntil = try! #require(heavyPause)
        // Acknowledgements and pings from anyone pass while the session is in debt.
        let ack = core.onFrame(.ack(1), from: light, at: 2_000)
        #expect(paused(ack, light) == nil)
        #expect(paused(core.onFrame(.ping(7), from: light, at: 2_000), light) == nil)
        let lightMessage = core.onFrame(.message(sequence: 2, recipients: .everyone, reliable: true, body: [1]), from: light, at: 2_000)
        let lightWait = (paused(lightMessage, light) ?? 2_000) - 2_000
        #expect(lightWait * 5 < heavyUntil - 1_000, "the light sender waits a fraction of the heavy one's pause")
        #expect(core.participants(of: session).count == 4, "nobody is dropped")
    }

    /// A flooder sending as fast as the relay reads it (4,000 frames a virtual second), a reader
    /// acknowledging 1,000 a second, a fast reader and a light sender, over five virtual seconds.
    /// Returns how many frames the flooder got in, whether the light sender was ever paused, who
    /// is still in the session, and what the slow reader hears when it then tries to resume.
    /// With `slowStops`, the slow reader stops reading at that instant (still connected).
    private func flood(_ configuration: RelayCoreConfiguration, slowStops: Int64 = .max)
        -> (sent: Int, lightPaused: Bool, present: Int, resumption: [RelayFrame]) {
        var core = RelayCore(configuration: configuration)
        let session = UUID()
        let (flooder, slow, fast, light) = (RelayConnectionID(1), RelayConnectionID(2), RelayConnectionID(3), RelayConnectionID(4))
        let slowID = TestIdentities.make()
        for (index, connection) in [flooder, slow, fast, light].enumerated() {
            _ = admission(session).admit(&core, connection, connection == slow ? slowID : TestIdentities.make(), create: index == 0, at: 0)
        }
        var delivered: [RelayConnectionID: UInt64] = [:]
        var acknowledged: [RelayConnectionID: UInt64] = [:]
        func note(_ directives: [RelayDirective]) {
            for case let .send(id, frame) in directives {
                if let sequence = frame.sequence { delivered[id] = max(delivered[id] ?? 0, sequence) }
            }
        }
        var (sent, lightSequence, lightPaused) = (0, UInt64(0), false)
        var pausedUntil: Int64 = 0
        let step: Int64 = 250_000
        for tick in 1...20_000 {
            let now = Int64(tick) * step
            if now >= pausedUntil {
                sent += 1
                let directives = core.onFrame(.message(sequence: UInt64(sent), recipients: .everyone, reliable: true, body: [1]),
                                              from: flooder, at: now)
                note(directives)
                if let until = paused(directives, flooder) { pausedUntil = until }
            }
            guard tick % 40 == 0 else { continue }
            // Every 10 ms: the slow reader takes 10 more frames, the others all of theirs.
            for reader in [slow, fast, light] where reader != slow || now < slowStops {
                let through = reader == slow ? min(delivered[reader] ?? 0, (acknowledged[reader] ?? 0) + 10) : delivered[reader] ?? 0
                acknowledged[reader] = through
                note(core.onFrame(.ack(through), from: reader, at: now))
            }
            if tick % 4_000 == 0 {
                lightSequence += 1
                let directives = core.onFrame(.message(sequence: lightSequence, recipients: .everyone, reliable: true, body: [2]),
                                              from: light, at: now)
                note(directives)
                if paused(directives, light) != nil { lightPaused = true }
            }
            note(core.onTick(at: now))
        }
        let present = core.participants(of: session).count
        _ = core.onClose(slow, at: 5_000_000_000)
        let resumed = admission(session).admit(&core, RelayConnectionID(9), slowID, create: false, resume: true, at: 5_000_000_001)
        return (sent, lightPaused, present, CoreAdmission.frames(resumed, to: RelayConnectionID(9)))
    }

    @Test("a flood waits for the slowest reader that keeps reading, which stays; a light sender is not held")
    func floodWaitsForTheSlowestReader() {
        var configuration = RelayCoreConfiguration()
        configuration.maximumOutboxFrames = 1_000
        let paced = flood(configuration)
        #expect(paced.present == 4, "the reader that keeps reading stays")
        #expect(paced.sent > 4_000 && paced.sent < 6_500, "the flood goes at about the slow reader's pace: \(paced.sent) frames")
        #expect(!paced.lightPaused)
        #expect(paced.resumption.contains { if case .welcome = $0 { true } else { false } })
        // Without the backlog's pause the same flood fills the slow reader's outbox, and it is
        // removed; trying to resume, it is told why.
        configuration.backlogHighWater = 2
        let unpaced = flood(configuration)
        #expect(unpaced.present == 3)
        #expect(unpaced.sent == 20_000)
        let refusal = unpaced.resumption.compactMap { if case let .refusal(fault) = $0 { fault } else { nil } }.first
        #expect(refusal?.text.contains("dropped by the relay: too far behind") == true, "\(String(describing: refusal))")
    }

    @Test("a reader that stops reading is waited for only as long as the patience, then overflows and goes")
    func aReaderThatStopsIsNotWaitedFor() {
        var configuration = RelayCoreConfiguration()
        configuration.maximumOutboxFrames = 1_000
        configuration.backlogPatience = .seconds(1)
        let stopped = flood(configuration, slowStops: 1_000_000_000)
        #expect(stopped.present == 3, "the reader that stopped is removed")
        #expect(stopped.sent > 12_000, "the flood goes on at full pace once the patience is over: \(stopped.sent) frames")
        #expect(!stopped.lightPaused)
    }

    @Test("one source's senders share one fan-out allowance over every session they send into")
    func fanoutPerSource() {
        var configuration = RelayCoreConfiguration()
        configuration.fanoutBytesPerSecondPerSource = 1000
        configuration.fanoutBurst = 1
        var core = RelayCore(configuration: configuration)
        var senders: [RelayConnectionID] = []
        var next: UInt64 = 1
        for (index, host) in ["10.0.0.1", "10.0.0.1", "10.0.0.2"].enumerated() {
            let session = UUID()
            let sender = RelayConnectionID(next)
            _ = admission(session).admit(&core, sender, TestIdentities.make(), create: true, at: 0, peer: address(host))
            _ = admission(session).admit(&core, RelayConnectionID(next + 1), TestIdentities.make(), create: false, at: 0,
                                         peer: address("10.1.0.\(index)"))
            senders.append(sender)
            next += 2
        }
        let body = [UInt8](repeating: 1, count: 600)
        let first = core.onFrame(.message(sequence: 1, recipients: .everyone, reliable: true, body: body), from: senders[0], at: 1)
        #expect(paused(first, senders[0]) == nil)
        let second = core.onFrame(.message(sequence: 1, recipients: .everyone, reliable: true, body: body), from: senders[1], at: 1)
        #expect(paused(second, senders[1]) != nil, "the same source's second session is over the source's allowance")
        let other = core.onFrame(.message(sequence: 1, recipients: .everyone, reliable: true, body: body), from: senders[2], at: 1)
        #expect(paused(other, senders[2]) == nil, "another source has its own")
    }

    // MARK: The welcome

    @Test("the welcome of a session of participants with the largest names and presences fits in a frame; the rest follow it")
    func welcomeFitsAFrame() throws {
        var core = RelayCore()
        let session = UUID()
        let sessionKey = SigningKeyPair(seed: key)
        let name = String(repeating: "n", count: RelayWireLimits.maximumNameLength)
        let presence = [UInt8](repeating: 0x70, count: RelayWireLimits.maximumPresence)
        /// Admits a participant with the largest name and presence; the directives.
        func join(_ index: Int) -> [RelayDirective] {
            let connection = RelayConnectionID(UInt64(index))
            _ = core.onOpen(connection, entropy: entropy, at: 0)
            let id = TestIdentities.make()
            let identity = TestIdentities.key(of: id)
            let entry = RelayParticipantEntry(id: id, publicKey: identity.publicKey, displayName: name, presence: presence)
            let hello = RelayHello(sessionID: session, participant: entry, create: index == 1, activity: [], resume: false, received: 0)
            guard case let .send(_, .challenge(nonce, exists))? = core.onFrame(.hello(hello), from: connection, at: 0).first else { return [] }
            let answer = CoreAdmission.answer(nonce: nonce, exists: exists, session: session, sessionKey: sessionKey, participant: id, identity: identity)
            return core.onFrame(answer, from: connection, at: 0)
        }
        for index in 1...800 { _ = join(index) }
        let late = RelayConnectionID(801)
        let frames = CoreAdmission.frames(join(801), to: late)
        guard case let .welcome(welcome)? = frames.first else {
            Issue.record("no welcome: \(frames.prefix(1))")
            return
        }
        let encoded = RelayFrame.welcome(welcome).encoded()
        #expect(encoded.count <= RelayWireLimits.maximumFrameLength, "a welcome of \(encoded.count) bytes")
        var reader = RelayFrameReader()
        reader.append(encoded[...])
        #expect(try reader.next() != nil, "a joiner reads it")
        let following = frames.compactMap { if case let .participantJoined(_, entry) = $0 { entry.id } else { nil } }
        #expect(!following.isEmpty, "some follow the welcome")
        // The joiner, last to join, is past the welcome's half frame: it is not told of itself.
        let others = core.participants(of: session).dropLast()
        #expect(Set(welcome.participants.map(\.id) + following).count == 800, "everyone else is named once")
        #expect(welcome.participants.map(\.id) + following == Array(others), "in the order they joined")
    }
}
