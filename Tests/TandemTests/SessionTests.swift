import Foundation
import Testing
import Tandem
import TandemNet
import TandemTestKit

/// The GroupActivities model end to end, on the in-memory relay and on the real one over
/// loopback: the same test bodies for both, for the wiring of messages, the journal and the
/// end. The lifecycle, messages in order and their size limit are `VirtualSessionTests`, with
/// whole participants in virtual time.
@Suite struct SessionIOTests {
    /// A host that started a quiz and has joined it.
    struct Hosted {
        let relay: RelayFixture
        let center: ActivityCenter
        let session: GroupSession<Quiz>
    }

    /// Starts a session on a fresh relay and joins it as "host".
    static func host(_ transport: TransportKind, topic: String = "rivers") async throws -> Hosted {
        let relay = try await RelayFixture(transport)
        let center = relay.center(named: "host")
        var sessions = center.sessions(for: Quiz.self).makeAsyncIterator()
        #expect(try await center.start(Quiz(topic: topic)))
        let session = try #require(await sessions.next())
        #expect(session.isLocallyInitiated)
        #expect(session.activity == Quiz(topic: topic))
        session.join()
        #expect(await awaitValue(session.$state.values) { $0.isJoined })
        return Hosted(relay: relay, center: center, session: session)
    }

    /// A guest named `name` who accepts the host's invite and joins.
    static func guest(_ name: String, of hosted: Hosted, join: Bool = true) async throws -> GroupSession<Quiz> {
        let center = hosted.relay.center(named: name)
        var sessions = center.sessions(for: Quiz.self).makeAsyncIterator()
        let identifier = try await center.accept(hosted.session.invitation)
        #expect(identifier == Quiz.activityIdentifier)
        let session = try #require(await sessions.next())
        #expect(!session.isLocallyInitiated)
        #expect(session.activity == hosted.session.activity)
        #expect(session.id == hosted.session.id)
        if join {
            session.join()
            #expect(await awaitValue(session.$state.values) { $0.isJoined })
        }
        return session
    }

    @Test(arguments: TransportKind.allCases)
    func messagesReachAllOneOrASet(transport: TransportKind) async throws {
        let hosted = try await Self.host(transport)
        defer { hosted.relay.shutDown() }
        let ana = try await Self.guest("ana", of: hosted)
        let ben = try await Self.guest("ben", of: hosted)
        for session in [hosted.session, ana, ben] { #expect(await awaitValue(session.$activeParticipants.values) { $0.count == 3 }) }

        for mode in [GroupSessionMessenger.DeliveryMode.reliable, .unreliable] {
            let messengers = [hosted.session, ana, ben].map { GroupSessionMessenger(session: $0, deliveryMode: mode) }
            let inboxes = messengers.map { Inbox($0, Answer.self) }
            try await Task.sleep(for: .milliseconds(50))
            let anaParticipant = ana.localParticipant
            let benParticipant = ben.localParticipant
            try await messengers[0].send(Answer(question: 1, text: "to all"))
            try await messengers[0].send(Answer(question: 2, text: "to ana"), to: .only(anaParticipant))
            try await messengers[1].send(Answer(question: 3, text: "to a set"), to: .only([hosted.session.localParticipant, benParticipant]))
            for (inbox, count) in zip(inboxes, [1, 2, 2]) {
                #expect(await inbox.awaitReceived(count), "\(mode): \(inboxes.map(\.received.count))")
            }
            #expect(inboxes.map(\.received.count) == [1, 2, 2], "\(mode)")
            #expect(inboxes[1].received.map(\.0.text) == ["to all", "to ana"])
            #expect(inboxes[1].received.allSatisfy { $0.1 == hosted.session.localParticipant })
            #expect(Set(inboxes[2].received.map(\.0.text)) == ["to all", "to a set"])
            #expect(inboxes[0].received.map(\.0.text) == ["to a set"])
            #expect(inboxes[0].received.first?.1.displayName == "ana")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func journalReachesLateJoinersAndRemovalReachesEveryone(transport: TransportKind) async throws {
        let hosted = try await Self.host(transport)
        defer { hosted.relay.shutDown() }
        let journal = GroupSessionJournal(session: hosted.session)
        let photo = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let attachment = try await journal.add(photo, name: "photo.png")
        #expect(attachment.size == photo.count)
        // A late joiner gets it, and its data.
        let ana = try await Self.guest("ana", of: hosted)
        let anaJournal = GroupSessionJournal(session: ana)
        let seen = await next(anaJournal.attachments)
        #expect(seen?.map(\.name) == ["photo.png"])
        let loaded = try await anaJournal.load(try #require(seen?.first))
        #expect(loaded == photo)
        // Removal reaches everyone.
        var updates = anaJournal.attachments.makeAsyncIterator()
        _ = await updates.next()
        try await journal.remove(attachment)
        #expect(await updates.next()?.isEmpty == true)
    }

    @Test func journalRefusesAttachmentsOverTheLimitBeforeReadingThem() async throws {
        let hosted = try await Self.host(.inMemory)
        defer { hosted.relay.shutDown() }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("huge-\(UUID().uuidString).bin")
        // A sparse file of 100 MiB + 1 byte: refused from its size alone.
        _ = FileManager.default.createFile(atPath: path.path, contents: nil)
        let handle = try FileHandle(forWritingTo: path)
        try handle.truncate(atOffset: UInt64(GroupSessionJournal.maximumAttachmentSize + 1))
        try handle.close()
        defer { try? FileManager.default.removeItem(at: path) }
        let journal = GroupSessionJournal(session: hosted.session)
        do {
            try await journal.add(contentsOf: path)
            Issue.record("an attachment over 100 MiB was accepted")
        } catch let error as GroupSessionError {
            #expect(error.code == .tooLarge)
            #expect(error.detail.contains("over the limit"))
        }
    }

    @Test(arguments: TransportKind.allCases)
    func wrongSecretCannotJoinOrRead(transport: TransportKind) async throws {
        let hosted = try await Self.host(transport)
        defer { hosted.relay.shutDown() }
        var forged = hosted.session.invitation
        forged.secret = SessionSecret()
        let intruder = hosted.relay.center(named: "mallory")
        _ = intruder.sessions(for: Quiz.self)
        do {
            try await intruder.accept(forged)
            Issue.record("a wrong secret was admitted")
        } catch let error as GroupSessionError {
            #expect(error.code == .relay)
            #expect(error.detail.contains("wrong secret"))
        }
        // The session goes on for its members.
        let ana = try await Self.guest("ana", of: hosted)
        #expect(await awaitValue(ana.$activeParticipants.values) { $0.count == 2 })
    }

    @Test func unreachableRelayInvalidatesTheJoinWithAClearReason() async throws {
        let center = ActivityCenter()
        center.configure(relay: UnreachableRelay(), host: "127.0.0.1", port: 9)
        var sessions = center.sessions(for: Quiz.self).makeAsyncIterator()
        try await center.start(Quiz(topic: "nowhere"))
        let session = try #require(await sessions.next())
        session.join()
        #expect(await awaitValue(session.$state.values) { $0.isInvalidated(.relay) })
        #expect(!center.isEligible)
    }

    /// A host that ends its session and stops its relay straight away (as `tandem host` exits):
    /// the others hear that it ended, not that the relay went silent.
    @Test func anEndIsHeardEvenWhenTheRelayStopsRightAfter() async throws {
        let hosted = try await Self.host(.network)
        let ben = try await Self.guest("ben", of: hosted)
        for session in [hosted.session, ben] { #expect(await awaitValue(session.$activeParticipants.values) { $0.count == 2 }) }
        hosted.session.end()
        await hosted.session.departureDelivered()
        hosted.relay.shutDown()
        #expect(await awaitValue(ben.$state.values) { $0.isInvalidated(.ended) }, "\(ben.state)")
        // Nothing to deliver: returns at once.
        await ben.departureDelivered()
    }
}

extension GroupSession.State {
    var isJoined: Bool { if case .joined = self { true } else { false } }
    var isWaiting: Bool { if case .waiting = self { true } else { false } }
    func isInvalidated(_ code: GroupSessionError.Code) -> Bool {
        if case .invalidated(let reason) = self { reason.code == code } else { false }
    }
}
