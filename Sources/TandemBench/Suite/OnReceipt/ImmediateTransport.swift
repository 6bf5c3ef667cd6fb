import TandemClock
import TandemMedia
import TandemMpv
import TandemPlayback
import TandemMediaTypes

/// A player's own transport, applied now on the local clock, with no coordinator in between:
/// what `OnReceiptFollower` drives. Both players conform, through their public, uncoordinated
/// API (their own coordinators never join the session, so that their transport acts at once).
public protocol ImmediateTransport: AnyObject, Sendable {
    /// The item the player has now (its identifier).
    var currentItemIdentifier: String? { get }
    /// The current item's content identity, as the group is told it (with the duration read).
    var currentItemIdentity: String? { get }
    /// Whether the player is paused now (its own state, not the group's).
    var isPausedNow: Bool { get }
    /// Carries `directive` out now; `clock` is this participant's clock, whose drift a player
    /// that paces frames by the raw monotonic clock plays at (nobody corrects it).
    func applyNow(_ directive: ReceiptFollower.Directive, clock: (any MonotonicDerivedClock)?) async
    /// Told the coordinator that drives it from now on (its own never coordinates).
    func drivenBy(_ coordinator: PlaybackCoordinator)
}

extension ImmediateTransport {
    /// Nothing to take up by default.
    public func drivenBy(_ coordinator: PlaybackCoordinator) {}
}

extension HeadlessPlayer: ImmediateTransport {
    /// The current item's identifier (`ImmediateTransport`).
    public var currentItemIdentifier: String? { itemIdentifier }

    /// The identity the player's own coordinator would report (`ImmediateTransport`).
    public var currentItemIdentity: String? { playbackCoordinator.delegate?.currentItemIdentity }

    /// Whether the newest timeline is paused (`ImmediateTransport`).
    public var isPausedNow: Bool { timeline.rate == 0 }

    /// Sets the timeline the directive says, anchored at its instant (`ImmediateTransport`); a
    /// switch to an item the player does not have (`item(withIdentifier:)`) does nothing.
    public func applyNow(_ directive: ReceiptFollower.Directive, clock: (any MonotonicDerivedClock)?) async {
        let timeline: PresentationTimeline
        let item: String?
        switch directive {
        case .prepare(let identifier, let at):
            if preparedItem?.identifier != identifier, let named = self.item(withIdentifier: identifier) { try? prepare(named, at: ItemTime(nanoseconds: at)) }
            return
        case .pause(let at, let now, let switching):
            timeline = .paused(at: ItemTime(nanoseconds: at), from: HostInstant(nanoseconds: now))
            item = switching
        case .play(let from, let rate, let now, _, let switching):
            // Playing at `rate` of this participant's clock: its drift goes uncorrected.
            let drift = clock.map { Self.localSecondsPerMonotonicSecond($0, near: now) } ?? 1
            let paced = min(max(rate * drift, PresentationTimeline.minimumRate), PresentationTimeline.maximumRate)
            timeline = PresentationTimeline(rate: paced, anchorItemTime: ItemTime(nanoseconds: from), anchorHostTime: HostInstant(nanoseconds: now))
            item = switching
        }
        guard let item else {
            try? setTimeline(timeline)
            return
        }
        guard let named = self.item(withIdentifier: item) else { return }
        if preparedItem?.identifier == item {
            try? switchToPreparedItem(timeline: timeline)
        } else {
            try? replaceCurrentItem(with: named, timeline: timeline)
        }
    }

    /// How many seconds of `clock` pass per raw monotonic second near `instant`: 1 for the
    /// system clock, 1 + drift for a clock with an injected drift.
    static func localSecondsPerMonotonicSecond(_ clock: any MonotonicDerivedClock, near instant: Int64) -> Double {
        let span: Int64 = 10_000_000_000
        let host = HostInstant(nanoseconds: instant)
        let elapsed = clock.localInstant(atHost: host + TimeSpan(nanoseconds: span)) - clock.localInstant(atHost: host)
        return elapsed > .zero ? Double(elapsed.nanoseconds) / Double(span) : 1
    }
}

extension MpvPlayer: ImmediateTransport {
    /// mpv's readings are scheduled against `coordinator`'s timeline (`readingsCoordinator`).
    public func drivenBy(_ coordinator: PlaybackCoordinator) { readingsCoordinator = coordinator }

    /// Whether mpv is paused (`ImmediateTransport`).
    public var isPausedNow: Bool { isPaused }

    /// Carries the directive out over mpv's IPC, uncoordinated (`ImmediateTransport`): a pause
    /// pauses, then seeks to its media time; a play seeks when the directive says so (mpv keeps
    /// its position across a pause), then plays at the directive's rate. mpv paces by the
    /// system clock: `clock`'s drift does not apply. A switch loads the item first
    /// (`replaceCurrentItemLocally(with:)`), when mpv has it (`makeAvailable(_:)`).
    public func applyNow(_ directive: ReceiptFollower.Directive, clock: (any MonotonicDerivedClock)?) async {
        let switching: String?
        switch directive {
        case .prepare: return
        case .pause(_, _, let item), .play(_, _, _, _, let item): switching = item
        }
        if let switching {
            guard let item = availableItem(withIdentifier: switching) else { return }
            do { try await replaceCurrentItemLocally(with: item) } catch { return }
        }
        switch directive {
        case .prepare:
            return
        case .pause(let at, _, _):
            try? await setRate(0)
            try? await setPosition(at)
        case .play(let from, let rate, _, let seek, let item):
            if seek || item != nil { try? await self.setPosition(from) }
            try? await setRate(min(max(rate, Self.transportRates.lowerBound), Self.transportRates.upperBound))
        }
    }
}
