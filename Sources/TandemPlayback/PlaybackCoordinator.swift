import Foundation
import Synchronization
import Tandem
import TandemClock

/// Keeps a player on the group's shared timeline, modelled on AVFoundation's
/// `AVDelegatingPlaybackCoordinator`.
///
/// The player asks for changes (`coordinateRateChange`, `coordinateSeek`, `transitionToItem`);
/// the relay orders them; every participant's coordinator applies the same changes at the same
/// session instants and issues its delegate the commands that carry them out, each with the local
/// instant at which it takes effect. The built-in `HeadlessPlayer` is its own delegate
/// (`player.playbackCoordinator.coordinateWithSession(session)`); other players implement
/// `PlaybackCoordinatorDelegate`.
public final class PlaybackCoordinator: @unchecked Sendable {
    /// What happened in the group, for programs to show.
    public typealias Event = CoordinationCore.Event

    /// Suspension reasons for which this participant asks the group to wait. By default buffering
    /// and not having the group's item.
    public var suspensionReasonsThatTriggerWaiting: Set<SuspensionReason> {
        get { settings.withLock { $0.waitingReasons } }
        set { settings.withLock { $0.waitingReasons = newValue } }
    }

    /// How many participants may hold the group up at once for a reason; beyond it, a suspended
    /// participant catches up on its own. No entry: no limit.
    public var participantLimits: [SuspensionReason: Int] {
        get { settings.withLock { $0.limits } }
        set { settings.withLock { $0.limits = newValue } }
    }

    /// How far ahead (ns) a player that joins late or resynchronises is told to be on time, so
    /// that it can seek and decode first.
    public var prerollLead: Int64 {
        get { settings.withLock { $0.prerollLead } }
        set { settings.withLock { $0.prerollLead = newValue } }
    }

    /// The shared timeline, observable: `for await timeline in coordinator.$timeline.values`.
    @Published public private(set) var timeline: SharedTimeline = .initial

    /// Whether pauses snap to the media time the originator saw.
    public let pauseSnapsToMediaTimeOfOriginator: Bool

    private struct Settings {
        var waitingReasons: Set<SuspensionReason> = [.stallRecovery, .coordinatedPlaybackNotPossible]
        var limits: [SuspensionReason: Int] = [:]
        var prerollLead: Int64 = 300_000_000
        weak var delegate: (any PlaybackCoordinatorDelegate)?
    }

    private struct Coordination {
        var core: CoordinationCore
        var channel: (any CoordinationChannel)?
        var tasks: [Task<Void, Never>] = []
        var eventReaders: [Int: AsyncStream<Event>.Continuation] = [:]
        var nextReader = 0
        var lastCommand: PlaybackCommand?
        /// This participant's own suspensions, begun and not yet ended: while there is one, the
        /// player is not driven by the group.
        var ownSuspensions: Set<UUID> = []
    }

    private let settings = Mutex(Settings())
    private let state: Mutex<Coordination>

    /// A coordinator for a player; it does nothing until `coordinateWithSession(_:)`.
    public init(delegate: (any PlaybackCoordinatorDelegate)? = nil, pauseSnapsToMediaTimeOfOriginator: Bool = true) {
        self.pauseSnapsToMediaTimeOfOriginator = pauseSnapsToMediaTimeOfOriginator
        state = Mutex(Coordination(core: CoordinationCore(pauseSnapsToMediaTimeOfOriginator: pauseSnapsToMediaTimeOfOriginator)))
        settings.withLock { $0.delegate = delegate }
    }

    deinit {
        for task in state.withLock({ $0.tasks }) { task.cancel() }
    }

    /// The player the coordinator drives.
    public var delegate: (any PlaybackCoordinatorDelegate)? {
        get { settings.withLock { $0.delegate } }
        set { settings.withLock { $0.delegate = newValue } }
    }

    /// Joins the playback of `session`'s group: from now on the player follows the shared
    /// timeline, and its own changes go to the group. A late joiner adopts the timeline so far
    /// and comes in on time.
    public func coordinateWithSession<Activity: GroupActivity>(_ session: GroupSession<Activity>) {
        coordinate(over: SessionChannel(session: session))
    }

    /// What happens in the group from now on (timeline changes with their originators, waiting,
    /// mismatched items).
    public var events: AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self)
        let id = state.withLock { state in
            let id = state.nextReader
            state.nextReader += 1
            state.eventReaders[id] = continuation
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.eventReaders.removeValue(forKey: id) }
        }
        return stream
    }

    /// The coordinator's view of the group: timeline, suspensions, what others have loaded.
    public var core: CoordinationCore { state.withLock { $0.core } }

    // MARK: The player's side

    /// Asks the group to play at `rate` (0 pauses) from the current position. A rate that is not
    /// 0 or within `CoordinationCore.playableRates` (NaN, 1e15, negative) is refused with a
    /// `ProposalRejection`, as every participant would skip it.
    public func coordinateRateChange(to rate: Double) throws {
        if let rejection = CoordinationCore.rateRejection(rate) { throw rejection }
        if rate > 0 {
            try propose(.setRate(rate))
        } else {
            // The timeline plays on past the item's end; a pause there shows the end.
            let seen = expectedItemTime(atLocalTime: localClock?.now()).map(withinItem)
            try propose(.pause(at: seen))
        }
    }

    /// Asks the group to move to media time `time` (ns), keeping the rate. A time outside the
    /// item (`CoordinationCore.mediaTimeRange(ofItem:)`) is refused with a `ProposalRejection`.
    public func coordinateSeek(to time: Int64) throws {
        try propose(.seek(to: time))
    }

    /// Asks the group to switch to the item `identifier` (paused at its start, or at `time`). An
    /// identifier or a time that every participant would skip is refused with a
    /// `ProposalRejection`.
    public func transitionToItem(identifier: String, at time: Int64 = 0) throws {
        try propose(.transition(item: identifier, at: time))
    }

    /// Tells the group what this participant has loaded (its identifier and content identity)
    /// and whether it is ready, so that a mismatch is reported to everyone. Strings longer than
    /// the core's bounds are refused with a `ProposalRejection`.
    public func reportItem(_ identifier: String?, identity: String?, ready: Bool) throws {
        try propose(.state(item: identifier, identity: identity, ready: ready))
    }

    /// Where the shared timeline says the player should be at local instant `localTime`
    /// (ns on this participant's clock), or nil before the session clock is known.
    public func expectedItemTime(atLocalTime localTime: Int64?) -> Int64? {
        guard let localTime, let channel = state.withLock({ $0.channel }),
              let session = channel.clock?.sessionTime(atLocal: localTime) else { return nil }
        return state.withLock { $0.core.timeline }.mediaTime(atSessionTime: session)
    }

    /// Begins a suspension for `reason`; the group waits for it if the reason is one of
    /// `suspensionReasonsThatTriggerWaiting` and within its participant limit.
    ///
    /// As with AVFoundation, a suspended participant's player is not driven by the group: from
    /// now until its last suspension ends, the coordinator issues its delegate no commands
    /// (the timeline and the events still follow the group). When the last one ends, the
    /// delegate is issued the command for the current timeline, a pre-roll ahead
    /// (`prerollLead`) as for a late joiner, so that the player catches up.
    public func beginSuspension(for reason: SuspensionReason) -> PlaybackSuspension {
        let id = UUID()
        let (triggers, limit) = settings.withLock { ($0.waitingReasons.contains(reason), $0.limits[reason]) }
        _ = state.withLock { $0.ownSuspensions.insert(id) }
        try? propose(.beginSuspension(id: id, reason: reason, triggersWaiting: triggers, waitingLimit: limit))
        return PlaybackSuspension(reason: reason, id: id) { [weak self] time in
            guard let self else { return }
            // Ended once: a second `end()` does nothing.
            let (ended, wasLast) = self.state.withLock { state in
                let ended = state.ownSuspensions.remove(id) != nil
                return (ended, ended && state.ownSuspensions.isEmpty)
            }
            guard ended else { return }
            // Within the item, so that the end is never refused (the group would wait on).
            try? self.propose(.endSuspension(id: id, proposedTime: time.map(self.withinItem)))
            guard wasLast else { return }
            Task { [weak self] in
                guard let self else { return }
                await self.issueCommand(for: self.state.withLock { $0.core.timeline }, lead: self.prerollLead)
            }
        }
    }

    /// Whether the coordinator is coordinating with a session: from `coordinateWithSession(_:)`
    /// on, a player's own transport (`play()`, `pause()`, `seek(to:)`) is proposed to the group.
    public var isCoordinating: Bool { state.withLock { $0.channel != nil } }

    /// Whether this participant has a suspension of its own that has begun and not ended.
    public var isSuspended: Bool { state.withLock { !$0.ownSuspensions.isEmpty } }

    /// This participant's clock, once coordinating.
    public var localClock: (any MonotonicDerivedClock)? { state.withLock { $0.channel?.localClock } }

    /// The session time at local instant `localTime`, once the session clock is known.
    public func sessionTime(atLocalTime localTime: Int64) -> Int64? {
        state.withLock { $0.channel }?.clock?.sessionTime(atLocal: localTime)
    }

    /// The session clock minus this participant's clock, and the estimate's error bound (ns), at
    /// local instant `localTime`, once the session clock is known.
    public func clockStatus(atLocalTime localTime: Int64) -> (offset: Int64, errorBound: Int64)? {
        guard let clock = state.withLock({ $0.channel })?.clock, let session = clock.sessionTime(atLocal: localTime) else { return nil }
        return (session - localTime, clock.errorBound(atLocal: localTime) ?? 0)
    }

    /// The local instant at session time `sessionTime`, once the session clock is known; an
    /// instant more than a day from the session clock's present is taken as a day from it.
    public func localTime(atSessionTime sessionTime: Int64) -> Int64? {
        guard let channel = state.withLock({ $0.channel }), let clock = channel.clock,
              let now = clock.sessionTime(atLocal: channel.localClock.now()) else { return nil }
        return clock.localTime(atSession: Self.mappable(sessionTime, near: now))
    }

    // MARK: Running

    func coordinate(over channel: any CoordinationChannel) {
        let deliveries = channel.orderedProposals()
        let departures = channel.departures()
        let tasks = [
            Task { [weak self] in
                for await proposal in deliveries {
                    guard let self else { return }
                    await self.apply(proposal)
                }
            },
            Task { [weak self] in
                for await participant in departures {
                    guard let self else { return }
                    let held = self.state.withLock { $0.core.suspensions.contains { $0.participant == participant } }
                    if held { try? self.propose(.departed(participant)) }
                }
            },
            // While playing, re-map the timeline to local time every second, so that the player
            // follows the session clock's estimate as it improves and tracks its drift.
            Task { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    guard let self else { return }
                    let timeline = self.state.withLock { $0.core.timeline }
                    if timeline.rate > 0 { await self.issueCommand(for: timeline, lead: 50_000_000) }
                }
            },
        ]
        let previous = state.withLock { state in
            defer {
                state.channel = channel
                state.tasks = tasks
            }
            return state.tasks
        }
        for task in previous { task.cancel() }
    }

    /// `time` within the current item, as validation bounds it.
    private func withinItem(_ time: Int64) -> Int64 {
        let core = self.core
        return time.clamped(to: core.mediaTimeRange(ofItem: core.timeline.item))
    }

    /// Sends `proposal` for ordering, unless the group would skip it: then it is refused here,
    /// by the same validation every participant applies, with the `ProposalRejection`.
    private func propose(_ proposal: PlaybackProposal) throws {
        let (channel, core) = state.withLock { ($0.channel, $0.core) }
        guard let channel else {
            throw CoordinatorError("the coordinator is not coordinating with a session yet")
        }
        if let rejection = core.rejection(of: proposal, from: channel.localParticipant) { throw rejection }
        try channel.propose(proposal)
    }

    private func apply(_ input: OrderedInput) async {
        let (events, timeline, readers) = state.withLock { state in
            let events: [Event]
            switch input {
            case .proposal(let proposal): events = state.core.apply(proposal)
            case .unreadable(let originator, let order, let rejection):
                events = state.core.skip(order: order, originator: originator, rejection: rejection)
            }
            return (events, state.core.timeline, Array(state.eventReaders.values))
        }
        guard !events.isEmpty || timeline != self.timeline else { return }
        self.timeline = timeline
        for event in events {
            for reader in readers { reader.yield(event) }
        }
        await issueCommand(for: timeline, lead: settings.withLock { $0.prerollLead })
    }

    /// Turns the timeline into the command that makes the player follow it. A timeline already
    /// in force is picked up `lead` ahead. Nothing is issued while this participant is suspended.
    private func issueCommand(for timeline: SharedTimeline, lead: Int64) async {
        guard let channel = state.withLock({ $0.ownSuspensions.isEmpty ? $0.channel : nil }), let delegate = delegate else { return }
        guard let clock = await waitForClock(channel) else { return }
        let now = channel.localClock.now()
        guard let nowSession = clock.sessionTime(atLocal: now) else { return }
        let command: PlaybackCommand
        if timeline.rate > 0 {
            // A change already in force (a late joiner's, or one that reached us late) is picked
            // up a pre-roll ahead, on the same timeline, so the player comes in on time.
            let wanted = timeline.anchorSessionTime > nowSession ? timeline.anchorSessionTime : nowSession.saturatingAdding(lead)
            let start = Self.mappable(wanted, near: nowSession)
            guard let hostTime = clock.localTime(atSession: start) else { return }
            command = .play(PlayCommand(expectedCurrentItemIdentifier: timeline.item, rate: timeline.rate,
                                        itemTime: timeline.mediaTime(atSessionTime: start), hostTime: hostTime,
                                        version: timeline.version))
        } else {
            let hostTime = clock.localTime(atSession: Self.mappable(max(timeline.anchorSessionTime, nowSession), near: nowSession)) ?? now
            command = .pause(PauseCommand(expectedCurrentItemIdentifier: timeline.item, itemTime: timeline.anchorMediaTime,
                                          hostTime: hostTime, version: timeline.version))
        }
        let isCurrent = state.withLock { state in
            guard state.core.timeline.version == timeline.version, state.ownSuspensions.isEmpty else { return false }
            state.lastCommand = command
            return true
        }
        // A newer change arrived meanwhile (its own command supersedes this one), or a suspension
        // of this participant began (the player is not driven until it ends).
        guard isCurrent else { return }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            delegate.playbackCoordinator(self, didIssue: command) { done.resume() }
        }
    }

    /// How far from the session clock's present (ns) an instant is mapped to local time: a day.
    /// An honest timeline's instants are within seconds of it; one that a lying relay stamped at
    /// the end of time is mapped to a day from now rather than overflowing the clock's mapping.
    static let mappableSpan: Int64 = 24 * 3_600 * 1_000_000_000

    /// `sessionTime`, within `mappableSpan` of `now` (session ns).
    static func mappable(_ sessionTime: Int64, near now: Int64) -> Int64 {
        sessionTime.clamped(to: now.saturatingSubtracting(mappableSpan)...now.saturatingAdding(mappableSpan))
    }

    /// The session clock, waiting (up to 5 s) for its first estimate.
    private func waitForClock(_ channel: any CoordinationChannel) async -> (any SessionClockSource)? {
        for _ in 0..<500 {
            if let clock = channel.clock, clock.sessionTime(atLocal: channel.localClock.now()) != nil { return clock }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    /// The last command issued to the player.
    public var lastCommand: PlaybackCommand? { state.withLock { $0.lastCommand } }
}

/// A coordinator used before it was given a session, or a proposal that could not be sent.
public struct CoordinatorError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public let description: String
    init(_ description: String) { self.description = description }
}
