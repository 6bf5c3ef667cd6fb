import Foundation
import Testing
import Tandem
import TandemNet
import TandemTestKit

/// Two message types of the same short name, as two modules would declare them.
enum Left { struct Ping: Codable, Sendable, Equatable { var side: String } }
enum Right { struct Ping: Codable, Sendable, Equatable { var side: String } }

/// Two differently named types that share a route through their identifier.
struct Greeting: Codable, Sendable, CustomMessageIdentifiable {
    static let messageIdentifier = "com.example.greeting"
    var text: String
}
struct Salutation: Codable, Sendable, CustomMessageIdentifiable {
    static let messageIdentifier = "com.example.greeting"
    var text: String
}

/// An activity that does not describe itself: metadata is optional.
struct Bare: GroupActivity, Equatable {
    var round: Int
}

/// What must be as SharePlay's, checked where it could go wrong, through the activity center.
/// Message routes and activity changes are `SharePlayParityTests`, with whole participants in
/// virtual time.
@Suite struct SharePlayParityIOTests {
    @Test func anInviteAcceptedBeforeSessionsIsIteratedIsDeliveredWhenItIs() async throws {
        let relay = try await RelayFixture(.inMemory)
        defer { relay.shutDown() }
        let host = relay.center(named: "host")
        var hostSessions = host.sessions(for: Bare.self).makeAsyncIterator()
        try await host.start(Bare(round: 1))
        let session = try #require(await hostSessions.next())
        session.join()
        #expect(await awaitValue(session.$state.values) { $0.isJoined })

        let early = relay.center(named: "early")
        #expect(try await early.accept(session.invitation) == Bare.activityIdentifier)
        var sessions = early.sessions(for: Bare.self).makeAsyncIterator()
        let accepted = try #require(await sessions.next())
        #expect(accepted.id == session.id && accepted.activity == Bare(round: 1))
        #expect(accepted.activity.metadata == GroupActivityMetadata())
        accepted.join()
        #expect(await awaitValue(session.$activeParticipants.values) { $0.count == 2 })
        session.end()
    }

    @Test func everyValuesStreamFinishesOnceTheSessionIsInvalidated() async throws {
        let hosted = try await SessionIOTests.host(.inMemory)
        defer { hosted.relay.shutDown() }
        let session = hosted.session
        let before = session.$activeParticipants.values
        session.leave()
        for stream in [session.$state.values.map { _ in () }.eraseToStream(), before.map { _ in () }.eraseToStream(),
                       session.$activeParticipants.values.map { _ in () }.eraseToStream(),
                       session.$activity.values.map { _ in () }.eraseToStream(),
                       GroupSessionJournal(session: session).attachments.map { _ in () }.eraseToStream()] {
            var count = 0
            for await _ in stream { count += 1 }
            #expect(count <= 2)
        }
    }

    @Test(arguments: [
        (UTType.png, UTType.image, true), (.png, .data, true), (.utf8PlainText, .text, true), (.json, .plainText, false),
        (.mpeg4Movie, .movie, true), (.data, .png, false), (UTType(exportedAs: "com.example.todo"), .data, true),
        (UTType(exportedAs: "com.example.clip", conformingTo: .movie), .audiovisualContent, true),
    ])
    func contentTypesConformAsApplesDo(type: UTType, to parent: UTType, conforms: Bool) {
        #expect(type.conforms(to: parent) == conforms)
        #expect(type.conforms(to: .item))
    }
}

extension AsyncSequence where Self: Sendable, Element: Sendable {
    /// The sequence as a stream of its elements.
    func eraseToStream() -> AsyncStream<Element> {
        AsyncStream { continuation in
            let task = Task {
                do { for try await element in self { continuation.yield(element) } } catch {}
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// `Published` under concurrent changes: a subscriber keeps only the newest value, so no older
/// value may ever overtake a newer one into its buffer.
@Suite struct PublishedOrderingIOTests {
    @Test func subscribersTakenDuringChangesEndOnTheNewestValue() async {
        // The last change is the one that matters (as `.joined` is, after `.waiting`): one change,
        // made on another thread while subscribers are being taken, each of whose first value
        // races it.
        for _ in 0..<300 {
            let property = Published(wrappedValue: 0)
            let last = 1
            let setter = Task.detached { property.wrappedValue = last }
            var subscriptions: [AsyncStream<Int>] = []
            for _ in 0..<100 { subscriptions.append(property.projectedValue.values) }
            await setter.value
            let stale = await withTaskGroup(of: Bool.self) { group in
                for values in subscriptions {
                    group.addTask {
                        // The newest value is buffered by now; a stream without it is stale for good.
                        await withTaskGroup(of: Bool.self) { race in
                            race.addTask {
                                for await value in values where value == last { return false }
                                return true
                            }
                            race.addTask {
                                try? await Task.sleep(for: .seconds(2))
                                return true
                            }
                            let first = await race.next() ?? true
                            race.cancelAll()
                            return first
                        }
                    }
                }
                var any = false
                for await isStale in group { any = any || isStale }
                return any
            }
            #expect(!stale)
            if stale { return }
        }
    }
}
