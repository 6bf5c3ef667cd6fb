import Foundation
import Testing
import Tandem

// MARK: The pattern: the members the other patterns do not reach, as Apple's documentation
// writes them: an activity that leaves its identifier to the default, metadata with every
// field, every activity type, a send with a completion handler, a session's id and state.

struct Meditation: GroupActivity {
    var minutes: Int

    var metadata: GroupActivityMetadata {
        var metadata = GroupActivityMetadata()
        metadata.title = NSLocalizedString("Meditate together", comment: "Title of group activity")
        metadata.subtitle = "\(minutes) minutes"
        metadata.fallbackURL = URL(string: "https://example.com/meditation")
        metadata.type = .generic
        return metadata
    }
}

struct Bell: Codable {
    var strikes: Int
}

@MainActor
final class MeditationRoom {
    let screen: Screen
    var messenger: GroupSessionMessenger?

    init(screen: Screen) { self.screen = screen }

    func ring(_ strikes: Int) {
        messenger?.send(Bell(strikes: strikes), to: .all) { error in
            if let error {
                self.screen.show("the bell did not ring: \(error)")
            } else {
                self.screen.show("rang \(strikes)")
            }
        }
    }
}

// MARK: The test

@MainActor
@Suite struct SharePlayCompatibilityIOTests {
    @Test func anActivityMayLeaveItsIdentifierToTheDefaultAndItsMetadataHasApplesFields() {
        #expect(Meditation.activityIdentifier.hasSuffix("Meditation"))
        let metadata = Meditation(minutes: 10).metadata
        #expect(metadata.title == "Meditate together")
        #expect(metadata.subtitle == "10 minutes")
        #expect(metadata.fallbackURL?.host == "example.com")
        #expect(metadata.type == .generic)
        let types: [GroupActivityMetadata.ActivityType] = [.generic, .watchTogether, .listenTogether, .createTogether, .exploreTogether,
                                                           .learnTogether, .readTogether, .shopTogether, .workoutTogether]
        #expect(Set(types.map { "\($0)" }).count == types.count)
    }

    /// Bounded in time: the guest's reading ends only with the bell.
    @Test(.timeLimit(.minutes(1))) func aSendWithACompletionHandlerIsToldWhenItIsSentAndTheSessionSaysWhoAndWhat() async throws {
        _ = try Harness.configureShared()
        let screen = Screen()
        let room = MeditationRoom(screen: screen)
        _ = try await Meditation(minutes: 5).activate()
        var sessions = Meditation.sessions().makeAsyncIterator()
        let session = try #require(await sessions.next())
        session.join()
        try await until(session.$state.values, "joined") { if case .joined = $0 { true } else { false } }
        if case .joined = session.state {} else { Issue.record("state \(session.state)") }
        room.messenger = GroupSessionMessenger(session: session)

        let guest = try await Harness.join(session.invitation, on: try Harness.participant("ana"), as: Meditation.self)
        #expect(guest.id == session.id)
        try await until(session.$activeParticipants.values, "two present") { $0.count == 2 }
        let everyone = Set(session.activeParticipants)
        #expect(everyone.contains(session.localParticipant) && everyone.contains(guest.localParticipant))
        #expect(session.localParticipant.id != guest.localParticipant.id)

        let guestMessenger = GroupSessionMessenger(session: guest)
        let bells = guestMessenger.messages(of: Bell.self)
        let heard = Task {
            for await (bell, context) in bells {
                return (bell.strikes, context.source == session.localParticipant)
            }
            return (0, false)
        }
        room.ring(3)
        try await screen.waitFor("the completion") { $0.hasPrefix("rang") || $0.hasPrefix("the bell") }
        #expect(screen.shown.contains("rang 3"))
        let (strikes, fromHost) = await heard.value
        #expect(strikes == 3 && fromHost)

        guest.leave()
        session.end()
        try await until(session.$state.values, "invalidated") { if case .invalidated = $0 { true } else { false } }
    }
}
