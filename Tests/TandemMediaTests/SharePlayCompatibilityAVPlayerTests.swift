import Testing
import TandemTestKit
import TandemAVFoundation

/// `AVPlayer` and `AVPlaybackCoordinationMedium` from `TandemAVFoundation`, on built-in players
/// in one process with no session: the calls as AVFoundation declares them (`AVPlayer`'s
/// `play()`, `pause()`, `rate`, `seek(to:)` with a `CMTime`, `currentTime()`, `timeControlStatus`;
/// `AVPlaybackCoordinationMedium()`, `coordinate(using:)`, `connectedPlaybackCoordinators`),
/// Apple's type names spelt out. The players are made and given their item as Tandem makes them
/// (`HeadlessPlayer(item:)` opens the file, so it throws), by the medium suite's helpers.
@Suite(.serialized) struct SharePlayCompatibilityAVPlayerIOTests {
    typealias Fixture = CoordinatedTransportIOTests
    typealias Screens = SharePlayCompatibilityMediumIOTests

    @Test func avPlayersOnACoordinationMediumPlaySeekAndPauseTogether() async throws {
        let all = try Screens.screens()
        defer { all.forEach { $0.player.close() } }
        let screens = all.prefix(2)

        // As AVFoundation declares it.
        let players: [AVPlayer] = screens.map(\.player)
        let medium = AVPlaybackCoordinationMedium()
        for player in players {
            try player.playbackCoordinator.coordinate(using: medium)
        }
        let coordinators: [AVPlayerPlaybackCoordinator] = medium.connectedPlaybackCoordinators
        #expect(coordinators.count == 2)
        try await Screens.shareItem(players)

        players[0].play()
        for player in players { try await Fixture.timeline(of: player.playbackCoordinator, "play") { $0.rate == 1 } }
        Screens.waitForFrame(3, screens.map(\.recorder), "a player did not start")
        try await Fixture.within(10, "the second player plays") {
            for await status in players[1].$timeControlStatus.values where status == AVPlayer.TimeControlStatus.playing { return }
        }

        // A seek by a `CMTime` in the video's own timescale: every player's timeline is at
        // exactly that time, to the nanosecond.
        let target = CMTime(value: 2 * 90_000, timescale: 90_000)
        players[1].seek(to: target)
        for player in players {
            try await Fixture.timeline(of: player.playbackCoordinator, "the seek") { $0.anchorMediaTime == ItemTime(target) }
        }

        players[1].rate = 0
        for player in players {
            try await Fixture.timeline(of: player.playbackCoordinator, "pause") { $0.rate == 0 }
            try await Fixture.within(10, "a player pauses") {
                for await status in player.$timeControlStatus.values where status == .paused { return }
            }
        }
        let waitingReason: AVPlayer.WaitingReason? = players[0].reasonForWaitingToPlay
        #expect(waitingReason == nil)
        // Paused, the current time holds still: the player's own media time, exactly.
        let now = players[0].currentTime()
        #expect(now.isNumeric && now == CMTime(ItemTime(nanoseconds: players[0].mediaTime())))
        #expect(now == players[1].currentTime(), "both players paused at the same media time")

        // A seek with tolerances, as AVFoundation writes a precise one: exact, like every seek.
        let precise = CMTime(seconds: 1.25, preferredTimescale: 600)
        players[0].seek(to: precise, toleranceBefore: .zero, toleranceAfter: .zero)
        for player in players {
            try await Fixture.timeline(of: player.playbackCoordinator, "the precise seek") { $0.anchorMediaTime == ItemTime(precise) }
        }

        // A seek to a time that names no position is not made, and nothing fails.
        let before = players[0].playbackCoordinator.timeline
        players[0].seek(to: CMTime.invalid)
        #expect(players[0].playbackCoordinator.timeline == before)
        #expect(players.allSatisfy { $0.error == nil })
    }
}
