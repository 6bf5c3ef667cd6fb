import Foundation
import Testing
import Tandem

// MARK: The pattern: an activity and the manager that configures its sessions, as SharePlay's
// documentation has them ("Configure the group session"). Combine's `.sink` became `for await
// … values`; the UI became `screen.show`.

struct WatchParty: GroupActivity {
    static let activityIdentifier = "com.example.tandem.compat.watch-party"
    var movie: String

    var metadata: GroupActivityMetadata {
        var metadata = GroupActivityMetadata()
        metadata.title = movie
        metadata.type = .watchTogether
        return metadata
    }
}

struct UpvoteMessage: Codable {
    var count: Int
}

@MainActor
final class WatchPartyManager {
    let screen: Screen
    var groupSession: GroupSession<WatchParty>?
    var messenger: GroupSessionMessenger?
    var tasks = Set<Task<Void, Never>>()
    var upvotes = 0

    init(screen: Screen) { self.screen = screen }

    func receiveSessions() async {
        for await session in WatchParty.sessions() {
            configureGroupSession(session)
        }
    }

    func configureGroupSession(_ groupSession: GroupSession<WatchParty>) {
        self.groupSession = groupSession
        let messenger = GroupSessionMessenger(session: groupSession)
        self.messenger = messenger

        tasks.insert(Task {
            for await state in groupSession.$state.values {
                if case .invalidated = state {
                    self.groupSession = nil
                    self.screen.show("invalidated")
                    self.reset()
                }
            }
            self.screen.show("state stream finished")
        })
        tasks.insert(Task {
            for await activeParticipants in groupSession.$activeParticipants.values {
                self.screen.show("active \(activeParticipants.count)")
            }
        })
        tasks.insert(Task {
            for await (message, context) in messenger.messages(of: UpvoteMessage.self) {
                self.upvotes += message.count
                self.screen.show("upvotes \(self.upvotes) from \(context.source.displayName)")
            }
        })
        groupSession.join()
    }

    func upvote() async throws {
        try await messenger?.send(UpvoteMessage(count: 1))
    }

    func reset() {
        messenger = nil
        upvotes = 0
    }
}

// MARK: The test: the harness plays a guest.

@MainActor
@Suite struct SessionManagerPatternIOTests {
    @Test func theManagerConfiguresJoinsCountsAndResetsOnInvalidation() async throws {
        _ = try Harness.configureShared()
        let screen = Screen()
        let manager = WatchPartyManager(screen: screen)
        let receiving = Task { await manager.receiveSessions() }
        defer { receiving.cancel() }

        #expect(try await WatchParty(movie: "Big Buck Bunny").activate())
        try await screen.waitFor("the host joined") { $0 == "active 1" }
        let session = try #require(manager.groupSession)
        #expect(session.isLocallyInitiated)
        #expect(session.activity.metadata.title == "Big Buck Bunny")

        let ben = try await Harness.join(session.invitation, on: try Harness.participant("ben"), as: WatchParty.self)
        try await screen.waitFor("the guest is active") { $0 == "active 2" }
        let benMessenger = GroupSessionMessenger(session: ben)
        try await benMessenger.send(UpvoteMessage(count: 2))
        try await screen.waitFor("an upvote") { $0 == "upvotes 2 from ben" }

        session.leave()
        try await screen.waitFor("the reset") { $0 == "invalidated" }
        // Every `values` stream finishes once the session is invalidated, even one taken after.
        try await screen.waitFor("the end of the state stream") { $0 == "state stream finished" }
        var late = session.$state.values.makeAsyncIterator()
        #expect(await late.next() != nil)
        #expect(await late.next() == nil)
        #expect(manager.groupSession == nil && manager.messenger == nil)
        ben.leave()
    }
}
