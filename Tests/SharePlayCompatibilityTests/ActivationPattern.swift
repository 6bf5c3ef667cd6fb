import Foundation
import Testing
import Tandem

// MARK: The pattern: activation with eligibility, and an activity that changes while the group
// is in it (SharePlay: `groupSession.activity = newActivity`, observed through `$activity`).

struct ListeningParty: GroupActivity {
    static let activityIdentifier = "com.example.tandem.compat.listening-party"
    var song: String

    var metadata: GroupActivityMetadata {
        var metadata = GroupActivityMetadata()
        metadata.title = song
        metadata.type = .listenTogether
        return metadata
    }
}

@MainActor
final class PartyController {
    let screen: Screen
    var groupSession: GroupSession<ListeningParty>?
    var tasks: [Task<Void, Never>] = []

    init(screen: Screen) { self.screen = screen }

    func startSharing(_ song: String) async {
        let activity = ListeningParty(song: song)
        switch await activity.prepareForActivation() {
        case .activationPreferred:
            do {
                _ = try await activity.activate()
            } catch {
                screen.show("Unable to activate the activity: \(error)")
            }
        case .activationDisabled:
            screen.show("playing \(song) alone")
        case .cancelled:
            break
        @unknown default:
            break
        }
    }

    func receiveSessions() async {
        for await session in ListeningParty.sessions() {
            groupSession = session
            tasks.append(Task {
                for await activity in session.$activity.values {
                    self.screen.show("now playing \(activity.song)")
                }
            })
            session.join()
        }
    }

    func play(_ song: String) {
        groupSession?.activity = ListeningParty(song: song)
    }
}

// MARK: The test: a change reaches a guest at once and a late joiner from the history;
// activating while in the session replaces its activity rather than starting another.

@MainActor
@Suite struct ActivationPatternIOTests {
    @Test func activityChangesReachEveryoneInOrderLateJoinersIncluded() async throws {
        _ = try Harness.configureShared()
        let screen = Screen()
        let controller = PartyController(screen: screen)
        let receiving = Task { await controller.receiveSessions() }
        defer { receiving.cancel() }
        #expect(GroupStateObserver().isEligibleForGroupSession)

        await controller.startSharing("Blue")
        try await screen.waitFor("the first song") { $0 == "now playing Blue" }
        let session = try #require(controller.groupSession)
        try await until(session.$state.values, "joined") { if case .joined = $0 { true } else { false } }

        let guest = try await Harness.join(session.invitation, on: try Harness.participant("ana"), as: ListeningParty.self)
        #expect(guest.activity.song == "Blue")
        // Apple's `isLocallyInitiated` (iOS 18): the activating participant's session only.
        #expect(session.isLocallyInitiated)
        #expect(!guest.isLocallyInitiated)
        controller.play("Green")
        try await until(guest.$activity.values, "the guest hears the change") { $0.song == "Green" }
        controller.play("Red")
        try await until(guest.$activity.values, "the second change") { $0.song == "Red" }

        // A change the guest proposes reaches the host too.
        guest.activity = ListeningParty(song: "Gold")
        try await screen.waitFor("the guest's change at the host") { $0 == "now playing Gold" }

        // Activating while in the session replaces the activity, as SharePlay does.
        await controller.startSharing("Silver")
        try await until(guest.$activity.values, "the replacement") { $0.song == "Silver" }
        #expect(controller.groupSession === session)

        let late = try await Harness.join(session.invitation, on: try Harness.participant("late"), as: ListeningParty.self)
        #expect(late.activity.song == "Silver")
        #expect(late.activity.metadata.title == "Silver")

        late.leave()
        guest.leave()
        session.end()
        try await screen.waitFor("nothing after the end") { _ in true }
    }
}
