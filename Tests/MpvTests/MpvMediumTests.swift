import Foundation
import Testing
import TandemClock
import TandemMedia
import TandemPlayback
import TandemTestKit
import TandemMpv

/// mpv on a coordination medium: a real headless mpv and the built-in player in this process,
/// connected to one `PlaybackCoordinationMedium` as Apple's pattern connects players, with no
/// session and no relay. mpv follows the built-in player's play and pause, on the timeline.
@Suite(.serialized, .timeLimit(.minutes(1))) struct MpvMediumProcessTests {
    typealias Coordination = MpvCoordinationProcessTests

    @Test func mpvFollowsAPlayAndAPauseOnTheMedium() async throws {
        let clip = try MpvFixture.longClip()
        let item = URL(fileURLWithPath: clip).lastPathComponent
        let builtin = try MpvGroup.builtin(clip)
        defer { builtin.close() }
        let mpv = try await MpvPlayer.launch(file: clip, options: MpvFixture.headless(ipcPath: MpvFixture.socketPath()))
        do {
            let medium = PlaybackCoordinationMedium()
            try builtin.playbackCoordinator.coordinate(using: medium)
            try mpv.playbackCoordinator.coordinate(using: medium)
            #expect(medium.connectedPlaybackCoordinators.count == 2)
            try builtin.playbackCoordinator.transitionToItem(identifier: item)
            #expect(await awaitTimeline(of: mpv.playbackCoordinator) { $0.item == item })
            let other = try MpvConnection(path: mpv.ipcPath)
            defer { other.close() }

            builtin.playbackCoordinator.coordinateRateChange(to: 1)
            #expect(await other.awaitProperty("pause") { $0.bool == false })
            try await Task.sleep(for: .seconds(1.5))
            let playing = try await Coordination.errors(of: other, against: mpv.playbackCoordinator, count: 8)
            #expect(playing.count == 8)
            #expect(playing.allSatisfy { abs($0) < Coordination.tolerance }, "errors while playing (ms): \(Coordination.milliseconds(playing))")

            builtin.playbackCoordinator.coordinateRateChange(to: 0)
            #expect(await awaitTimeline(of: mpv.playbackCoordinator) { $0.rate == 0 })
            #expect(await other.awaitProperty("pause") { $0.bool == true })

            // Disconnected, mpv no longer follows: the built-in player plays alone.
            try mpv.playbackCoordinator.coordinate(using: nil)
            #expect(medium.connectedPlaybackCoordinators.count == 1)
            builtin.playbackCoordinator.coordinateRateChange(to: 1)
            try await Task.sleep(for: .milliseconds(500))
            #expect((try? await other.get("pause"))?.bool == true)
        } catch {
            await mpv.close()
            throw error
        }
        await mpv.close()
    }
}
