import Foundation
import Testing
import TandemClock
import TandemTestKit
@testable import TandemPlayback

/// The porting table's "Same" rows of AVFoundation's coordinator, each written as Apple's
/// documentation writes it (no `try` where Apple has none, Apple's labels and argument types),
/// run on a virtual-time group of real coordinator shells (`VirtualCoordinatedGroup`).
/// `scripts/check-porting-table` checks that every such row names its test here or in the other
/// `SharePlayCompatibility…` suites.
@Suite struct SharePlayCompatibilityCoordinatorTests {
    /// A host and a guest on the film, their clocks known.
    static func pair() throws -> (VirtualCoordinatedGroup, VirtualCoordinatedGroup.Member, VirtualCoordinatedGroup.Member) {
        let group = VirtualCoordinatedGroup()
        let host = try group.join("host")
        let guest = try group.join("guest")
        group.run(for: 200)
        return (group, host, guest)
    }

    @Test func coordinateRateChangeTakesAFloatAndOptionsAndDoesNotThrow() throws {
        let (group, host, guest) = try Self.pair()
        defer { group.shutdown() }
        let coordinator = host.coordinator
        coordinator.coordinateRateChange(to: 1.0, options: [])
        group.run(for: 1_200)
        #expect(guest.coordinator.timeline.rate == 1)
        coordinator.coordinateRateChange(to: 0, options: [])
        group.run(for: 200)
        #expect(guest.coordinator.timeline.rate == 0)
        let rate: Float = 2
        coordinator.coordinateRateChange(to: rate, options: .playImmediately)
        group.run(for: 200)
        #expect(guest.coordinator.timeline.rate == 2 && guest.coordinator.core.waiting.gate == nil)
    }

    @Test func suspensionsTheirReasonsAndTheWaitingSettingsAreSpeltAsApplesAre() throws {
        let (group, host, guest) = try Self.pair()
        defer { group.shutdown() }
        let coordinator = guest.coordinator
        coordinator.suspensionReasonsThatTriggerWaiting = [.stallRecovery, .coordinatedPlaybackNotPossible, .userActionRequired]
        #expect(coordinator.suspensionReasonsThatTriggerWaiting.contains(.userActionRequired))
        coordinator.setParticipantLimit(2, forWaitingOutSuspensionsWithReason: .userActionRequired)
        #expect(coordinator.participantLimitForWaitingOutSuspensions(withReason: .userActionRequired) == 2)
        #expect(coordinator.participantLimitForWaitingOutSuspensions(withReason: .playingInterstitial) == .max)
        let reasons: [SuspensionReason] = [.stallRecovery, .userIsChangingCurrentTime, .userActionRequired, .playingInterstitial,
                                           .coordinatedPlaybackNotPossible]
        #expect(Set(reasons).count == 5)

        host.coordinator.coordinateRateChange(to: 1, options: [])
        group.run(for: 1_200)
        let suspension = coordinator.beginSuspension(for: .userActionRequired)
        #expect(suspension.reason == .userActionRequired)
        group.run(for: 100)
        #expect(host.coordinator.core.isWaiting, "a group of two is within the limit: it waits")
        suspension.end()
        group.run(for: 1_200)
        #expect(!host.coordinator.core.isWaiting && host.coordinator.timeline.rate == 1)

        // Over the limit (three participants, a limit of two), the others play on.
        _ = try group.join("third")
        group.run(for: 300)
        let second = coordinator.beginSuspension(for: .userActionRequired)
        group.run(for: 100)
        #expect(!host.coordinator.core.isWaiting && host.coordinator.timeline.rate == 1)
        second.end()
    }

    @Test func pauseSnapsToMediaTimeOfOriginatorIsSettable() throws {
        let (group, host, guest) = try Self.pair()
        defer { group.shutdown() }
        #expect(host.coordinator.pauseSnapsToMediaTimeOfOriginator)
        host.coordinator.pauseSnapsToMediaTimeOfOriginator = false
        group.run(for: 100)
        #expect(!guest.coordinator.pauseSnapsToMediaTimeOfOriginator)
    }

    /// Bounded in time: the events are read until the abandonment, which a broken coordinator
    /// would never emit.
    @Test(.timeLimit(.minutes(1))) func commandsNameTheExpectedItemAndACompletionNeverCalledIsAbandoned() async throws {
        let group = VirtualCoordinatedGroup()
        defer { group.shutdown() }
        let host = try group.join("host")
        // A delegate that never calls its completion handlers.
        let guest = try group.join("guest", completionDelay: nil)
        var events = guest.coordinator.events.makeAsyncIterator()
        group.run(for: 200)
        #expect(guest.player.currentItemIdentifier == "film")
        host.coordinator.coordinateRateChange(to: 1, options: .playImmediately)
        group.run(for: 200)
        let play = try #require(guest.player.plays.last)
        #expect(play.expectedCurrentItemIdentifier == "film")
        // Abandoned at its due date, with an event, and the coordinator goes on.
        group.run(for: 3_000)
        var abandoned: PlaybackCommand?
        while abandoned == nil, let event = await events.next() {
            if case .commandAbandoned(let command) = event { abandoned = command }
        }
        #expect(abandoned?.expectedCurrentItemIdentifier == "film")
        host.coordinator.coordinateRateChange(to: 0, options: [])
        group.run(for: 200)
        #expect(guest.player.lastTransport.map { if case .pause = $0 { true } else { false } } == true)
    }

    @Test func otherParticipantsSaySuspensionReasonsAndReadinessAndSuspensionsTheirBeginDate() throws {
        let (group, host, guest) = try Self.pair()
        defer { group.shutdown() }
        let coordinator = host.coordinator
        #expect(coordinator.otherParticipants.map(\.identifier) == [guest.id])
        #expect(coordinator.otherParticipants.allSatisfy { $0.isReadyToPlay && $0.suspensionReasons.isEmpty })
        #expect(coordinator.suspensionReasons.isEmpty)

        let suspension = guest.coordinator.beginSuspension(for: .playingInterstitial)
        // The wall clock's reading when it began (read, not waited on): a moment ago.
        #expect(abs(suspension.beginDate.timeIntervalSinceNow) < 60)
        group.run(for: 100)
        let other = try #require(coordinator.otherParticipants.first)
        #expect(other.suspensionReasons == [.playingInterstitial])
        #expect(guest.coordinator.suspensionReasons == [.playingInterstitial])
        suspension.end()
        group.run(for: 100)
        #expect(coordinator.otherParticipants.first?.suspensionReasons == [])
        #expect(guest.coordinator.suspensionReasons.isEmpty)
    }

    @Test func reapplyingTheCurrentItemStateIssuesTheGroupsTimelineAfresh() throws {
        let (group, host, guest) = try Self.pair()
        defer { group.shutdown() }
        host.coordinator.coordinateRateChange(to: 1, options: .playImmediately)
        group.run(for: 1_200)
        let before = guest.player.commands.count
        let timeline = guest.coordinator.timeline
        guest.coordinator.reapplyCurrentItemStateToPlaybackControlDelegate()
        group.run(for: 500)
        let reissued = Array(guest.player.commands.dropFirst(before))
        // A seek to where the group is, then the play on the same timeline; nothing sent.
        guard case .seek(let seek)? = reissued.first else {
            Issue.record("the state was not reissued as a seek first: \(reissued)")
            return
        }
        #expect(seek.expectedCurrentItemIdentifier == "film")
        #expect(guest.coordinator.timeline == timeline, "nothing went to the group")
        #expect(CoordinatedGroupTests.transportOnTimeline([host, guest]))
    }
}
