import Foundation
import Testing
@testable import TandemPlayback
@testable import TandemAVFoundation

/// A player written for AVFoundation's `AVDelegatingPlaybackCoordinator`, as Apple's reference
/// declares its delegate protocol (four overloads, Apple's command classes with `CMTime`s, a
/// `Float` rate, `Date`s, a plain completion handler), driven by a coordinator of a
/// virtual-time group (`VirtualCoordinatedGroup`).
@Suite struct SharePlayCompatibilityControlDelegateTests {
    /// As a program written for Apple's platforms writes its player's delegate.
    final class CustomPlayer: NSObject, AVPlaybackCoordinatorPlaybackControlDelegate {
        var plays: [AVDelegatingPlaybackCoordinatorPlayCommand] = []
        var pauses: [AVDelegatingPlaybackCoordinatorPauseCommand] = []
        var seeks: [AVDelegatingPlaybackCoordinatorSeekCommand] = []
        var buffers: [AVDelegatingPlaybackCoordinatorBufferingCommand] = []
        var rate: Float = 0

        func playbackCoordinator(_ coordinator: AVDelegatingPlaybackCoordinator, didIssue playCommand: AVDelegatingPlaybackCoordinatorPlayCommand,
                                 completionHandler: @escaping () -> Void) {
            if coordinator.currentItemIdentifier == playCommand.expectedCurrentItemIdentifier {
                rate = playCommand.rate
            }
            plays.append(playCommand)
            completionHandler()
        }

        func playbackCoordinator(_ coordinator: AVDelegatingPlaybackCoordinator, didIssue pauseCommand: AVDelegatingPlaybackCoordinatorPauseCommand,
                                 completionHandler: @escaping () -> Void) {
            rate = 0
            pauses.append(pauseCommand)
            completionHandler()
        }

        func playbackCoordinator(_ coordinator: AVDelegatingPlaybackCoordinator, didIssue seekCommand: AVDelegatingPlaybackCoordinatorSeekCommand,
                                 completionHandler: @escaping () -> Void) {
            seeks.append(seekCommand)
            completionHandler()
        }

        func playbackCoordinator(_ coordinator: AVDelegatingPlaybackCoordinator, didIssue bufferingCommand: AVDelegatingPlaybackCoordinatorBufferingCommand,
                                 completionHandler: @escaping () -> Void) {
            buffers.append(bufferingCommand)
            completionHandler()
        }
    }

    @Test func aCoordinatorIsMadeWithApplesDelegateAndHoldsItWeakly() {
        var player: CustomPlayer? = CustomPlayer()
        let coordinator = AVDelegatingPlaybackCoordinator(playbackControlDelegate: player!)
        #expect(coordinator.playbackControlDelegate === player)
        player = nil
        #expect(coordinator.playbackControlDelegate == nil)
        // The adapter outlives the player it was made for: the coordinator keeps it.
        #expect(coordinator.delegate is PlaybackControlDelegateAdapter)
    }

    @Test func applesCommandClassesCarryTheGroupsChanges() throws {
        let group = VirtualCoordinatedGroup()
        defer { group.shutdown() }
        let host = try group.join("host")
        let guest = try group.join("guest")
        group.run(for: 200)
        let player = CustomPlayer()
        let coordinator: AVDelegatingPlaybackCoordinator = guest.coordinator
        coordinator.adoptDelegate(PlaybackControlDelegateAdapter(player))
        coordinator.transitionToItem(withIdentifier: "film", proposingInitialTimingBasedOn: nil)
        #expect(coordinator.currentItemIdentifier == "film")
        group.run(for: 500)

        // The host plays: a play command, in Apple's types, from the host.
        host.coordinator.coordinateRateChange(to: 1, options: [])
        group.run(for: 1_500)
        let play = try #require(player.plays.last { $0.command.originator == host.id })
        #expect(play.rate == Float(play.command.rate) && abs(play.rate - 1) < 0.001)
        #expect(player.rate == play.rate)
        #expect(play.expectedCurrentItemIdentifier == "film")
        #expect(play.originator?.identifier == host.id)
        // Every other play is this participant's own or the coordinator's: no other participant.
        for other in player.plays where other.command.originator != host.id { #expect(other.originator == nil) }
        #expect(play.hostClockTime == CMTime(value: play.command.hostTime.nanoseconds, timescale: CMTime.nanosecondTimescale))
        #expect(ItemTime(play.itemTime) == play.command.itemTime)

        // A seek to 30 s: Apple's seek command, its due date on the wall clock.
        host.coordinator.coordinateSeek(to: CMTime(seconds: 30, preferredTimescale: 600), options: [])
        group.run(for: 1_500)
        let seek = try #require(player.seeks.last)
        #expect(seek.itemTime.seconds == 30)
        #expect(seek.originator?.identifier == host.id)
        let due = try #require(seek.completionDueDate)
        // Virtual time stands still while the test reads it: the date is the due instant's
        // distance ahead of the host clock's present, from the wall clock's.
        let ahead = (seek.command.completionDueDate - group.members[1].scheduler.now).seconds
        #expect(abs(due.timeIntervalSinceNow - ahead) < 5, "due \(due), \(ahead) s ahead")

        // This participant's own pause: a pause command with no other participant behind it.
        coordinator.coordinateRateChange(to: 0, options: [])
        group.run(for: 1_500)
        let pause = try #require(player.pauses.last)
        #expect(pause.originator == nil)
        #expect(pause.anticipatedPlaybackRate == 0 && !pause.shouldBufferInAnticipationOfPlayback)
        #expect(player.rate == 0)
        #expect(host.coordinator.timeline.rate == 0)
    }

    @Test func aPlayerGoneLeavesTheCoordinatorGoingOn() throws {
        let group = VirtualCoordinatedGroup()
        defer { group.shutdown() }
        let host = try group.join("host")
        let guest = try group.join("guest")
        group.run(for: 200)
        var player: CustomPlayer? = CustomPlayer()
        guest.coordinator.adoptDelegate(PlaybackControlDelegateAdapter(player!))
        guest.coordinator.transitionToItem(withIdentifier: "film", proposingInitialTimingBasedOn: CMTime(seconds: 2, preferredTimescale: 1))
        group.run(for: 500)
        #expect(host.coordinator.timeline.anchorMediaTime == ItemTime(nanoseconds: 2_000_000_000))
        player = nil
        host.coordinator.coordinateRateChange(to: 1, options: [])
        group.run(for: 1_500)
        // Commands to no player are completed at once: none waits for its due date.
        #expect(guest.coordinator.timeline.rate == 1)
        #expect(!guest.coordinator.core.isWaiting)
    }
}
