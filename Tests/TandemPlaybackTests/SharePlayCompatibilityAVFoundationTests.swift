import Testing
import TandemAVFoundation

/// AVFoundation's coordinator names and Core Media's `CMTime` from `TandemAVFoundation`, the one
/// import an AVFoundation program changes: Apple's reference pages for `AVPlaybackCoordinator`,
/// `AVDelegatingPlaybackCoordinator` and `AVPlaybackCoordinationMedium` give declarations rather
/// than programs, so each declaration is called here as it is declared (Apple's type names,
/// labels and argument types, no `try` where Apple has none), on a virtual-time group of real
/// coordinator shells (`VirtualCoordinatedGroup`). The medium with real players is
/// `SharePlayCompatibilityAVPlayerIOTests`.
@Suite struct SharePlayCompatibilityAVFoundationTests {
    static let second: Int64 = 1_000_000_000

    /// A program's own player, as a delegating coordinator's delegate is. It holds no state, so
    /// nothing in it needs confining.
    final class CustomPlayer: PlaybackCoordinatorDelegate, @unchecked Sendable {
        var currentItemIdentifier: String? { "film" }
        var currentItemIdentity: String? { nil }
        func playbackCoordinator(_ coordinator: PlaybackCoordinator, didIssue command: PlaybackCommand,
                                 completion: @escaping @Sendable () -> Void) { completion() }
    }

    @Test func aDelegatingCoordinatorIsMadeWithApplesLabel() {
        let player = CustomPlayer()
        let coordinator = AVDelegatingPlaybackCoordinator(playbackControlDelegate: player)
        #expect(coordinator.playbackControlDelegate === player)
        #expect(!coordinator.isCoordinating && coordinator.playbackCoordinationMedium == nil)
    }

    @Test func theDelegatingCoordinatorTakesApplesNamesAndCMTimes() throws {
        let group = VirtualCoordinatedGroup()
        defer { group.shutdown() }
        let host = try group.join("host")
        let guest = try group.join("guest")
        group.run(for: 200)

        // As AVFoundation declares it.
        let coordinator: AVDelegatingPlaybackCoordinator = host.coordinator
        coordinator.suspensionReasonsThatTriggerWaiting = [.stallRecovery, .userIsChangingCurrentTime]
        coordinator.coordinateRateChange(to: 1.0, options: [])
        group.run(for: 1_200)
        #expect(guest.coordinator.timeline.rate == 1)

        let seekOptions: AVDelegatingPlaybackCoordinatorSeekOptions = [.resumeImmediately]
        coordinator.coordinateSeek(to: CMTime(seconds: 30, preferredTimescale: 600), options: seekOptions)
        group.run(for: 500)
        #expect(guest.coordinator.timeline.anchorMediaTime == ItemTime(nanoseconds: 30 * Self.second))
        let sought = guest.player.commands.compactMap { if case .seek(let seek) = $0 { seek.itemTime } else { nil } }
        #expect(sought.last == ItemTime(nanoseconds: 30 * Self.second))

        let reason: AVCoordinatedPlaybackSuspension.Reason = .userIsChangingCurrentTime
        let suspension: AVCoordinatedPlaybackSuspension = guest.coordinator.beginSuspension(for: reason)
        group.run(for: 100)
        let others: [AVCoordinatedPlaybackParticipant] = coordinator.otherParticipants
        #expect(others.map(\.identifier) == [guest.id] && others.first?.suspensionReasons == [reason])
        suspension.end(proposingNewTime: CMTime(value: 45 * 90_000, timescale: 90_000))
        group.run(for: 1_200)
        #expect(host.coordinator.timeline.anchorMediaTime == ItemTime(nanoseconds: 45 * Self.second))

        // Where the group says the player should be, at a host time as a `CMTime`: the same as
        // Tandem's answer, exactly; the invalid time for a host time that is none.
        let now = host.scheduler.now
        let expected = coordinator.expectedItemTime(atHostTime: CMTime(value: now.nanoseconds, timescale: CMTime.nanosecondTimescale))
        #expect(ItemTime(expected) == coordinator.expectedItemTime(atHostTime: now) && expected.isNumeric)
        #expect(!coordinator.expectedItemTime(atHostTime: CMTime.invalid).isValid)

        // `.zero`, which Tandem's overload takes too, is the same time by either.
        coordinator.coordinateSeek(to: .zero, options: [])
        group.run(for: 500)
        #expect(guest.coordinator.timeline.anchorMediaTime == .zero)
    }

    /// Bounded in time: the events are read until the refusal, which a broken overload would
    /// never cause.
    @Test(.timeLimit(.minutes(1))) func aTimeThatNamesNoPositionIsRefusedAndSentToNoOne() async throws {
        let group = VirtualCoordinatedGroup()
        defer { group.shutdown() }
        let host = try group.join("host")
        let guest = try group.join("guest")
        group.run(for: 200)
        var events = host.coordinator.events.makeAsyncIterator()
        let before = guest.coordinator.timeline
        host.coordinator.coordinateSeek(to: .invalid, options: [])
        group.run(for: 500)
        var refused: String?
        while refused == nil, let event = await events.next() {
            if case .requestRefused(_, let reason) = event { refused = reason }
        }
        #expect(refused != nil)
        #expect(guest.coordinator.timeline == before)
    }

    // MARK: CMTime

    static let timescales: [CMTimeScale] = [600, 1_000, 44_100, 48_000, 90_000]

    /// Values of a timescale worth checking: small, a unit short of a second, ten hours and more.
    static func values(_ timescale: CMTimeScale) -> [CMTimeValue] {
        let scale = Int64(timescale)
        let positive: [Int64] = [0, 1, 2, scale / 3, scale - 1, scale, scale + 1, 7 * scale + scale / 7, 36_000 * scale + 12_345, 1 << 40]
        return positive + positive.map { -$0 }
    }

    @Test(arguments: timescales) func conversionToNanosecondsIsTheNearestAndComesBackExactly(timescale: CMTimeScale) throws {
        for value in Self.values(timescale) {
            let time = CMTime(value: value, timescale: timescale)
            let itemTime = try #require(ItemTime(time))
            // The nearest nanosecond, checked in 128 bits: within half a unit of the exact product.
            let error = Int128(itemTime.nanoseconds) * Int128(timescale) - Int128(value) * 1_000_000_000
            #expect(2 * error.magnitude <= UInt128(timescale), "\(value)/\(timescale) -> \(itemTime.nanoseconds) ns")
            // A nanosecond is finer than half of any of these units: back in the timescale, exactly.
            let back = CMTime(itemTime).convertScale(timescale, method: .default)
            #expect(back.value == value && back.timescale == timescale && back == time, "\(value)/\(timescale) came back as \(back)")
            #expect(back.seconds == time.seconds)
        }
    }

    @Test(arguments: timescales) func sumsAndDifferencesAreExact(timescale: CMTimeScale) {
        for other in Self.timescales {
            for (a, b) in zip(Self.values(timescale), Self.values(other).reversed()) {
                let x = CMTime(value: a, timescale: timescale), y = CMTime(value: b, timescale: other)
                let sum = x + y
                // Exact: sum == a/timescale + b/other, in 128 bits.
                let left = Int128(sum.value) * Int128(timescale) * Int128(other)
                let right = (Int128(a) * Int128(other) + Int128(b) * Int128(timescale)) * Int128(sum.timescale)
                #expect(left == right && !sum.hasBeenRounded, "\(x) + \(y) = \(sum)")
                #expect(sum - y == x && sum - x == y)
                #expect(sum.timescale == (timescale == other ? timescale : Self.leastCommonMultiple(timescale, other)))
            }
        }
        // A frame's duration added a thousand times lands on the frame's time, with no drift.
        let frame = CMTime(value: Int64(timescale) / 30, timescale: timescale)
        var time = CMTime.zero
        for _ in 0..<1_000 { time += frame }
        #expect(time == CMTime(value: 1_000 * (Int64(timescale) / 30), timescale: timescale))
    }

    static func leastCommonMultiple(_ a: CMTimeScale, _ b: CMTimeScale) -> CMTimeScale {
        var (x, y) = (a, b)
        while y != 0 { (x, y) = (y, x % y) }
        return a / x * b
    }

    @Test func secondsZeroInvalidAndOrderAreCoreMedias() {
        #expect(CMTime(seconds: 1.5, preferredTimescale: 600).value == 900)
        #expect(CMTime(seconds: 1.0 / 3, preferredTimescale: 600).value == 200)
        #expect(CMTime(seconds: -0.0125, preferredTimescale: 48_000) == CMTime(value: -600, timescale: 48_000))
        #expect(CMTime(seconds: 2.5, preferredTimescale: 1).value == 3, "halfway rounds away from zero")
        #expect(CMTime(value: 3, timescale: 4).seconds == 0.75)
        #expect(CMTime.zero.seconds == 0 && CMTime.zero.isNumeric && CMTime.zero == CMTime(value: 0, timescale: 90_000))
        #expect(!CMTime.invalid.isValid && CMTime.invalid.seconds.isNaN)
        #expect(!CMTime(seconds: .nan, preferredTimescale: 600).isValid)
        #expect(!CMTime(value: 1, timescale: 0).isValid)
        #expect(CMTime(seconds: .infinity, preferredTimescale: 600).isPositiveInfinity)
        #expect(CMTime(seconds: 1e300, preferredTimescale: 600).isPositiveInfinity)

        // Equal by value, whatever the timescale, and hashed so.
        #expect(CMTime(value: 1, timescale: 600) == CMTime(value: 100, timescale: 60_000))
        #expect(Set([CMTime(value: 1, timescale: 600), CMTime(value: 100, timescale: 60_000), CMTime(value: 75, timescale: 44_100)]).count == 2)
        #expect(CMTime(value: 1, timescale: 44_100) < CMTime(value: 1, timescale: 44_000))

        // Core Media's order of the kinds of time.
        let ordered: [CMTime] = [.negativeInfinity, CMTime(value: -1, timescale: 1), .zero, CMTime(value: 1 << 62, timescale: 1),
                                 .indefinite, .positiveInfinity, .invalid]
        #expect(ordered.shuffled().sorted() == ordered)
        #expect((CMTime.positiveInfinity + CMTime.negativeInfinity).isValid == false)
        #expect((CMTime.positiveInfinity - CMTime.positiveInfinity).isValid == false)
        #expect((CMTime.indefinite + CMTime.zero).isIndefinite)
        #expect((CMTime.zero - CMTime.positiveInfinity).isNegativeInfinity)
        #expect((CMTime(value: .max, timescale: 1) + CMTime(value: 1, timescale: 1)).isPositiveInfinity)

        // No position, no item time.
        #expect(ItemTime(CMTime.invalid) == nil && ItemTime(CMTime.indefinite) == nil && ItemTime(CMTime.positiveInfinity) == nil)
        #expect(ItemTime(CMTime(value: .max, timescale: 1)) == .distantFuture)
        // Rounding methods, on -7/4 and 7/4 to whole units.
        let methods: [(CMTimeRoundingMethod, Int64, Int64)] = [(.default, 2, -2), (.roundTowardZero, 1, -1), (.roundAwayFromZero, 2, -2),
                                                                (.roundTowardPositiveInfinity, 2, -1), (.roundTowardNegativeInfinity, 1, -2)]
        for (method, up, down) in methods {
            #expect(CMTime(value: 7, timescale: 4).convertScale(1, method: method).value == up, "\(method)")
            #expect(CMTime(value: -7, timescale: 4).convertScale(1, method: method).value == down, "\(method)")
        }
        #expect(CMTime(value: 7, timescale: 4).convertScale(1, method: .default).hasBeenRounded)
        #expect(!CMTime(value: 8, timescale: 4).convertScale(1, method: .default).hasBeenRounded)
    }
}
