import Foundation
import Synchronization
import TandemTestKit
import Testing
import Tandem
import TandemNet

/// docs/EMBEDDING.md's "Embedding sessions" example, as written, on a real relay in this process, with
/// two centers standing for two programs.
@Suite struct ReadmeExampleIOTests {
    struct WatchTogether: GroupActivity {
        var movie: String
        var metadata: GroupActivityMetadata {
            var metadata = GroupActivityMetadata()
            metadata.title = movie
            metadata.type = .watchTogether
            return metadata
        }
    }

    struct Chat: Codable {
        var text: String
    }

    @Test func hostAndGuestChatAsTheReadmeShows() async throws {
        let relay = try RelayServer(address: SocketAddress(host: "127.0.0.1", port: 0))
        relay.start()
        defer { relay.stop() }
        let host = ActivityCenter()
        host.displayName = "host"
        host.configure(relay: NetworkRelayConnector(host: "127.0.0.1", port: relay.port), host: "127.0.0.1", port: relay.port)
        let (lineStream, lineContinuation) = AsyncStream.makeStream(of: String.self)
        let lines = StreamRecording(lineStream)
        let (inviteStream, inviteContinuation) = AsyncStream.makeStream(of: String.self)
        let invites = StreamRecording(inviteStream)
        let hostTask = Task {
            for await session in host.sessions(for: WatchTogether.self) {
                let messenger = GroupSessionMessenger(session: session)
                session.join()
                // Printed at once in the example; a person passes it on only later, so the test
                // hands it over once the host is joined (an invite accepted before that finds no
                // session on the relay).
                for await state in session.$state.values where state.isJoined { break }
                inviteContinuation.yield(session.invitation.url.absoluteString)
                for await (message, context) in messenger.messages(of: Chat.self) {
                    lineContinuation.yield("\(context.source.displayName): \(message.text)")
                }
            }
        }
        defer { hostTask.cancel() }
        try await host.start(WatchTogether(movie: "Big Buck Bunny"))
        #expect(await invites.awaitCount(1))

        // The guest, as the example's second block.
        let inviteText = try #require(invites.elements.first)
        let guest = ActivityCenter()
        guest.displayName = "ana"
        var guestSessions = guest.sessions(for: WatchTogether.self).makeAsyncIterator()
        let invitation = try Invitation(parsing: inviteText)
        guest.configure(relay: NetworkRelayConnector(host: invitation.host, port: invitation.port),
                        host: invitation.host, port: invitation.port)
        try await guest.accept(invitation)
        let session = try #require(await guestSessions.next())
        #expect(session.activity.movie == "Big Buck Bunny")
        session.join()
        // Both present and this session joined (the presences can be published before the
        // state is): a send needs the join.
        #expect(await awaitValue(session.$activeParticipants.values) { $0.count == 2 })
        #expect(await awaitValue(session.$state.values) { $0.isJoined })
        try await GroupSessionMessenger(session: session).send(Chat(text: "hello"))
        #expect(await lines.awaitElements { $0 == ["ana: hello"] })
    }
}
