import Foundation
import Testing
import Tandem
import TandemTestKit

/// Why a wait on `$activeParticipants.values` once timed out where a poll saw the value: the
/// session published who is active from two places (its join, and the link's events) each with
/// a set computed under the session's lock but published after it, so a set computed before the
/// other's change could be published after it, and stay published until the next change. The
/// session now computes and publishes under its lock (`GroupSession.publishActive()`): the set
/// published last is the newest. Here, participants join at once, again and again, and each
/// session's published set must come to everyone (the wait is only a bound).
@Suite(.serialized, .timeLimit(.minutes(1))) struct ActiveParticipantsPublishingIOTests {
    @Test func everySessionPublishesEveryoneWhenParticipantsJoinAtOnce() async throws {
        for _ in 0..<6 {
            let relay = try TestRelay(.inMemory)
            defer { relay.shutdown() }
            let host = try await CoordinatingPlaybackArticleIOTests.joined("host", relay: relay, invitation: nil)
            let invitation = host.invitation
            async let ana = CoordinatingPlaybackArticleIOTests.joined("ana", relay: relay, invitation: invitation)
            async let ben = CoordinatingPlaybackArticleIOTests.joined("ben", relay: relay, invitation: invitation)
            async let cleo = CoordinatingPlaybackArticleIOTests.joined("cleo", relay: relay, invitation: invitation)
            let sessions = [host] + (try await [ana, ben, cleo])
            let everyone = Set(sessions.map(\.localParticipant.id))
            for session in sessions {
                let published = await awaitValue(session.$activeParticipants.values, within: 5) { Set($0.map(\.id)) == everyone }
                #expect(published, "\(session.localParticipant.displayName) published \(session.activeParticipants.map(\.displayName))")
            }
            for session in sessions { session.leave() }
        }
    }
}
