import Foundation
import Testing
import Tandem
import TandemClock
import TandemMedia
import TandemPlayback
import TandemTestKit
import TandemMediaTypes

/// The porting table's "Same" rows of `AVPlayer` under a coordinator, written as Apple's
/// documentation writes them (`player.playbackCoordinator.coordinateWithSession(session)`, then
/// `play()`, `pause()` and `rate` without `try`), on two built-in players in a session on the
/// in-memory relay. `scripts/check-porting-table` checks that the table names these tests.
@Suite(.serialized) struct SharePlayCompatibilityPlayerIOTests {
    typealias Fixture = CoordinatedTransportIOTests

    @Test func theAVPlayerPatternPlaysPausesAndChangesTheRateOfEveryPlayer() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        // `Fixture.peer` does what Apple's pattern does: `player.playbackCoordinator.coordinateWithSession(session)`.
        let host = try await Fixture.peer("host", relay: relay, invitation: nil)
        let guest = try await Fixture.peer("guest", relay: relay, invitation: host.session.invitation)
        defer { [host, guest].forEach { $0.player.close() } }
        try await Fixture.within(10, "both present") {
            for await participants in host.session.$activeParticipants.values where participants.count == 2 { return }
        }
        let player = host.player
        #expect(player.playbackCoordinator.isCoordinating)
        // The group's item (`replaceCurrentItem(with:)` throws here: a row of its own in the table).
        try player.replaceCurrentItem(with: PlaybackItem(file: Fixture.clip.path))
        try await Fixture.timeline(of: guest.coordinator, "the host's item") { $0.item == Fixture.clip.name }

        player.play()
        try await Fixture.timeline(of: guest.coordinator, "play") { $0.rate == 1 }
        for peer in [host, guest] {
            #expect(peer.recorder.wait(timeout: 10) { $0.contains { !$0.presentation.isStill } }, "a player did not start")
        }
        #expect(player.rate == 1)

        #expect(player.timeControlStatus == .playing && player.reasonForWaitingToPlay == nil)

        // The guest holds the group up: the host's player waits for coordinated playback.
        let suspension = guest.coordinator.beginSuspension(for: .stallRecovery)
        try await Fixture.within(10, "the host waits") {
            for await status in player.$timeControlStatus.values where status == .waitingToPlayAtSpecifiedRate { return }
        }
        #expect(player.reasonForWaitingToPlay == .waitingForCoordinatedPlayback)
        suspension.end()
        try await Fixture.within(10, "the host plays again") {
            for await status in player.$timeControlStatus.values where status == .playing { return }
        }
        #expect(player.reasonForWaitingToPlay == nil)

        player.rate = 1.5
        try await Fixture.timeline(of: guest.coordinator, "rate 1.5") { $0.rate == 1.5 }

        player.pause()
        try await Fixture.timeline(of: guest.coordinator, "pause") { $0.rate == 0 }
        try await Fixture.within(10, "the guest's player pauses") {
            for await status in guest.player.$timeControlStatus.values where status == .paused { return }
        }
        #expect(player.error == nil)

        // A rate every participant would refuse: nothing is sent, and the player says why in
        // `error`, as AVPlayer reports a failure.
        player.rate = 9
        let error = try #require(player.error)
        #expect(error.isProposalRefused, "\(error)")
        #expect(guest.coordinator.timeline.rate == 0)
    }
}
