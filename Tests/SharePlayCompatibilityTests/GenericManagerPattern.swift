import Foundation
import Testing
import Tandem

// MARK: The pattern: a generic session manager, as SharePlay programs write one, whose
// `messages(of:)` starts a task over the messenger's sequence; and both delivery modes.

struct Sketching: GroupActivity {
    static let activityIdentifier = "com.example.tandem.compat.sketching"
}

struct CursorMoved: Codable {
    var x: Double
    var y: Double
}

struct Note: Codable, Equatable {
    var text: String
}

final class SessionManager<Activity: GroupActivity> {
    let session: GroupSession<Activity>
    let reliableMessenger: GroupSessionMessenger
    let unreliableMessenger: GroupSessionMessenger

    init(session: GroupSession<Activity>) {
        self.session = session
        reliableMessenger = GroupSessionMessenger(session: session, deliveryMode: .reliable)
        unreliableMessenger = GroupSessionMessenger(session: session, deliveryMode: .unreliable)
    }

    func send<T: Codable>(_ message: T, reliably: Bool = true) async throws {
        let messenger = reliably ? reliableMessenger : unreliableMessenger
        try await messenger.send(message)
    }

    func messages<T: Codable>(of type: T.Type, reliably: Bool = true) -> AsyncThrowingStream<(T, Participant), Error> {
        let messenger = reliably ? reliableMessenger : unreliableMessenger
        // Made here, not in the task: the sequence is subscribed when made, and a task may start
        // after the first messages arrived (this test hung once in a few dozen runs so).
        let messages = messenger.messages(of: type)
        return AsyncThrowingStream { continuation in
            let task = Task {
                for await (message, context) in messages {
                    continuation.yield((message, context.source))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

// MARK: The test.

@Suite struct GenericManagerPatternIOTests {
    @Test(arguments: [true, false])
    func theGenericManagerSendsAndReceives(reliably: Bool) async throws {
        let host = try Harness.participant("host-\(reliably)")
        var sessions = host.sessions(for: Sketching.self).makeAsyncIterator()
        try await host.start(Sketching())
        let session = try #require(await sessions.next())
        session.join()
        try await until(session.$state.values, "joined") { if case .joined = $0 { true } else { false } }
        let guest = try await Harness.join(session.invitation, on: try Harness.participant("ana"), as: Sketching.self)
        try await until(session.$activeParticipants.values, "two active") { $0.count == 2 }

        let hostManager = SessionManager(session: session)
        let guestManager = SessionManager(session: guest)
        let received = guestManager.messages(of: CursorMoved.self, reliably: reliably)
        let notes = guestManager.messages(of: Note.self)
        // The sequence is subscribed when made; what the host sends from now on arrives.
        for step in 0..<20 { try await hostManager.send(CursorMoved(x: Double(step), y: 1), reliably: reliably) }
        try await hostManager.send(Note(text: "done"))

        var iterator = notes.makeAsyncIterator()
        let (note, noteSender) = try #require(try await iterator.next())
        #expect(note == Note(text: "done") && noteSender.displayName == "host-\(reliably)")
        var cursors = received.makeAsyncIterator()
        let (first, sender) = try #require(try await cursors.next())
        #expect(sender.id == session.localParticipant.id)
        // Unreliable may lose some on loopback in principle; the first that arrives is one sent.
        #expect((0..<20).contains(Int(first.x)) && first.y == 1)
        session.end()
        guest.leave()
    }
}
