import Foundation
import Testing
import TandemClock
import TandemMedia
import TandemPlayback
import TandemTestKit
import TandemMediaTypes

/// AVFoundation's coordination medium on the built-in player, written as Apple's documentation
/// writes it (`try player.playbackCoordinator.coordinate(using: medium)`, then the players' own
/// `play()`, `seek(to:)` and `pause()`), on three real players in one process with no session
/// and no relay: they present the same frames at the same instants. `scripts/check-porting-table`
/// checks that the table names the first test.
@Suite(.serialized) struct SharePlayCompatibilityMediumIOTests {
    typealias Fixture = CoordinatedTransportIOTests
    static let clip = SampleClip.h264BFrames

    /// Three built-in players on the clip, video only, each with a recorder of its presentations.
    static func screens() throws -> [(player: HeadlessPlayer, recorder: ItemRecorder)] {
        try (0..<3).map { _ in
            let recorder = ItemRecorder()
            var options = HeadlessPlayer.Options()
            options.decodeAudio = false
            return (try HeadlessPlayer(item: PlaybackItem(file: clip.path), options: options, videoSinks: [recorder]), recorder)
        }
    }

    /// Each frame numbered in `frames` that every recorder presented moving, by its first such
    /// showing at or after `since`: the spread of its presented instants and of its scheduled ones.
    static func spreads(_ recorders: [ItemRecorder], frames: Range<Int>, since: Int64) -> [(presented: Int64, scheduled: Int64)] {
        let showings = recorders.map { recorder in
            var first: [Int: Presentation] = [:]
            for entry in recorder.all where !entry.presentation.isStill && frames.contains(entry.number)
                && entry.presentation.presented >= since && first[entry.number] == nil {
                first[entry.number] = entry.presentation
            }
            return first
        }
        return frames.compactMap { number in
            let all = showings.compactMap { $0[number] }
            guard all.count == recorders.count else { return nil }
            let presented = all.map(\.presented), scheduled = all.map(\.scheduled)
            return (presented.max()! - presented.min()!, scheduled.max()! - scheduled.min()!)
        }
    }

    /// Makes the clip the group's item, by the first player's `replaceCurrentItem(with:)`, and
    /// waits until every coordinator has it.
    static func shareItem(_ players: [HeadlessPlayer]) async throws {
        try players[0].replaceCurrentItem(with: PlaybackItem(file: clip.path))
        for player in players { try await Fixture.timeline(of: player.playbackCoordinator, "the item") { $0.item == clip.name } }
    }

    /// Waits until every recorder presented a moving frame numbered at least `number`.
    static func waitForFrame(_ number: Int, _ recorders: [ItemRecorder], _ what: String) {
        for recorder in recorders {
            #expect(recorder.wait(timeout: 10) { $0.contains { !$0.presentation.isStill && $0.number >= number } }, "\(what)")
        }
    }

    @Test func theMediumPatternCoordinatesLocalPlayersWithoutASession() async throws {
        let screens = try Self.screens()
        defer { screens.forEach { $0.player.close() } }
        let players = screens.map(\.player)

        // As Apple writes it.
        let medium = PlaybackCoordinationMedium()
        for player in players {
            try player.playbackCoordinator.coordinate(using: medium)
        }
        #expect(medium.connectedPlaybackCoordinators.count == 3)
        #expect(players.allSatisfy { $0.playbackCoordinator.playbackCoordinationMedium === medium })
        try await Self.shareItem(players)

        players[1].play()
        for player in players { try await Fixture.timeline(of: player.playbackCoordinator, "play") { $0.rate == 1 } }
        Self.waitForFrame(10, screens.map(\.recorder), "a player did not start")

        players[2].pause()
        for player in players {
            try await Fixture.timeline(of: player.playbackCoordinator, "pause") { $0.rate == 0 }
            try await Fixture.within(10, "a player pauses") {
                for await status in player.$timeControlStatus.values where status == .paused { return }
            }
        }
        #expect(players.allSatisfy { $0.error == nil })

        // Disconnected, a player is on its own: the others play without it.
        try players[2].playbackCoordinator.coordinate(using: nil)
        #expect(players[2].playbackCoordinator.playbackCoordinationMedium == nil)
        #expect(medium.connectedPlaybackCoordinators.count == 2)
        players[0].play()
        try await Fixture.timeline(of: players[1].playbackCoordinator, "play without the third") { $0.rate == 1 }
        #expect(players[2].playbackCoordinator.timeline.rate == 0)
        #expect(players[2].rate == 0)
    }

    @Test func threePlayersOnOneMediumPresentTheSameFramesTogether() async throws {
        let screens = try Self.screens()
        defer { screens.forEach { $0.player.close() } }
        let players = screens.map(\.player), recorders = screens.map(\.recorder)
        let medium = PlaybackCoordinationMedium()
        for player in players { try player.playbackCoordinator.coordinate(using: medium) }
        try await Self.shareItem(players)

        let started = HostInstant.now().nanoseconds
        players[0].play()
        Self.waitForFrame(20, recorders, "a player did not start")
        let playing = Self.spreads(recorders, frames: 5..<15, since: started)

        let sought = HostInstant.now().nanoseconds
        players[2].seek(to: Self.clip.time(ofFrame: 70))
        Self.waitForFrame(95, recorders, "a player did not seek")
        let afterSeek = Self.spreads(recorders, frames: 75..<90, since: sought)

        for (what, spreads, frames) in [("playing", playing, 10), ("after the seek", afterSeek, 15)] {
            // Nearly every frame reached every player (one may drop a late frame under load).
            #expect(spreads.count >= frames - 3, "\(what): \(spreads.count) of \(frames) frames shown by all three")
            // One timeline on one exact clock: every player scheduled each frame at the same instant.
            #expect(spreads.allSatisfy { $0.scheduled == 0 }, "\(what): scheduled spreads \(spreads.map(\.scheduled))")
            // And presented it together: the median frame within 2 ms, which a player a frame off
            // (33 ms) or a change taking effect at different instants would exceed.
            let presented = spreads.map(\.presented).sorted()
            let median = presented.isEmpty ? .max : presented[presented.count / 2]
            #expect(median < 2_000_000, "\(what): presented spreads (ns) \(presented)")
        }
    }
}
