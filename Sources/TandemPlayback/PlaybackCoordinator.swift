import Foundation
import Synchronization
import Tandem
import TandemClock

/// Keeps a player on the group's shared timeline, modelled on AVFoundation's
/// `AVDelegatingPlaybackCoordinator`.
///
/// The player asks for changes (`coordinateRateChange`, `coordinateSeek`, `transitionToItem`);
/// the relay orders them; every participant's coordinator applies the same changes at the same
/// session instants and issues its delegate the commands that carry them out, each with the host
/// instant at which it takes effect. The built-in `HeadlessPlayer` is its own delegate
/// (`player.playbackCoordinator.coordinateWithSession(session)`); other players implement
/// `PlaybackCoordinatorDelegate`.
///
/// The coordinator is one serial shell around a pure `CoordinatorMachine`: every input (an
/// ordered record, a departure, a request, a suspension, a completed command, a wake-up, a new
/// clock mapping) is fed to the machine on one executor, and the shell carries out the
/// directives it returns. It is the only writer of player commands.
///
/// Coordinating with a session, that executor is the session's event loop: the participant's
/// loop, where its relay link and its `GroupSession` run, so that a record goes from the link to
/// the session to the machine to the delegate in one call on one thread, with no queue and no
/// task in between. The delegate is called on that loop, and must not block. A coordinator
/// connected to a `PlaybackCoordinationMedium` runs on the medium's serial dispatch queue; one
/// given a `CoordinatorScheduler` runs on it, whatever it coordinates with. Work that must run
/// there asserts it where the executor can tell (a loop); a call from another thread hops there.
///
/// It is safe to use from any thread: the machine and the shell's wake-ups are confined to the
/// executor (`CoordinationRun`, which asserts it), and what the synchronous API reads
/// (`timeline`, `core`, `lastCommand`, the settings and the rest) is a view the executor
/// publishes after each step, under one small lock that no step holds while it calls out. It is
/// `@unchecked Sendable` for the `@Published` `timeline` alone: a wrapper's storage is a `var`, as
/// Swift requires of every property wrapper, though it is never reassigned (the setter is
/// `nonmutating`; the storage locks its own state); every other stored property is a `let` of a
/// `Sendable` type.
public final class PlaybackCoordinator: @unchecked Sendable {
    /// What happened in the group, for programs to show.
    public typealias Event = CoordinationCore.Event

    /// How a rate change is made, as AVFoundation's `AVDelegatingPlaybackCoordinatorRateChangeOptions`.
    public struct RateChangeOptions: OptionSet, Sendable, Hashable {
        /// The option bits.
        public let rawValue: Int
        /// Options of `rawValue`.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Play at once, without waiting for other participants to be ready.
        public static let playImmediately = RateChangeOptions(rawValue: 1)
    }

    /// How a seek is made, as AVFoundation's `AVDelegatingPlaybackCoordinatorSeekOptions`.
    public struct SeekOptions: OptionSet, Sendable, Hashable {
        /// The option bits.
        public let rawValue: Int
        /// Options of `rawValue`.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Resume at once after the seek, without waiting for other participants to be ready.
        public static let resumeImmediately = SeekOptions(rawValue: 1)
    }

    /// Suspension reasons for which this participant asks the group to wait. By default
    /// recovering from a stall and not having the group's item.
    public var suspensionReasonsThatTriggerWaiting: Set<SuspensionReason> {
        get { view.withLock { $0.configuration.suspensionReasonsThatTriggerWaiting } }
        set { view.withLock { $0.configuration.suspensionReasonsThatTriggerWaiting = newValue } }
    }

    /// As AVFoundation's, spelt as Apple spells it: the most participants the group may have for
    /// this participant's suspensions of `reason` to make the group wait; in a larger group, the
    /// others play on. `Int.max` (no limit) unless set.
    public func participantLimitForWaitingOutSuspensions(withReason reason: SuspensionReason) -> Int {
        view.withLock { $0.configuration.participantLimits[reason] } ?? .max
    }

    /// `participantLimitForWaitingOutSuspensions(withReason:)` under the name Tandem gave it first.
    @available(*, deprecated, renamed: "participantLimitForWaitingOutSuspensions(withReason:)")
    public func participantLimit(forWaitingOutSuspensionsWithReason reason: SuspensionReason) -> Int {
        participantLimitForWaitingOutSuspensions(withReason: reason)
    }

    /// Sets `participantLimitForWaitingOutSuspensions(withReason:)` for `reason`.
    public func setParticipantLimit(_ limit: Int, forWaitingOutSuspensionsWithReason reason: SuspensionReason) {
        view.withLock { $0.configuration.participantLimits[reason] = limit }
    }

    /// Tandem's own: how many participants may hold the group up at once for `reason`; beyond
    /// it, a suspended participant catches up on its own. nil: no limit.
    public func groupHoldLimit(forReason reason: SuspensionReason) -> Int? {
        view.withLock { $0.configuration.groupHoldLimits[reason] }
    }

    /// Sets `groupHoldLimit(forReason:)` for `reason` (nil: no limit).
    public func setGroupHoldLimit(_ limit: Int?, forReason reason: SuspensionReason) {
        view.withLock { $0.configuration.groupHoldLimits[reason] = limit }
    }

    /// How far ahead a player that catches up is told to be on time, so that it can seek and
    /// decode first (a joiner's first time: `joinLead`).
    public var prerollLead: TimeSpan {
        get { view.withLock { $0.configuration.prerollLead } }
        set { view.withLock { $0.configuration.prerollLead = newValue } }
    }

    /// How far ahead a player that joins is told to be on time the first time (its history
    /// assembled): it has only opened the item. A player that seeks slowly sets it to
    /// `prerollLead`.
    public var joinLead: TimeSpan {
        get { view.withLock { $0.configuration.joinLead } }
        set { view.withLock { $0.configuration.joinLead = newValue } }
    }

    /// How long a command may take past its instant before it is abandoned.
    public var commandTimeout: TimeSpan {
        get { view.withLock { $0.configuration.commandTimeout } }
        set { view.withLock { $0.configuration.commandTimeout = newValue } }
    }

    /// The shared timeline, observable: `for await timeline in coordinator.$timeline.values`.
    @Published public internal(set) var timeline: SharedTimeline = .initial

    /// Whether a play waits for every participant's pre-roll, at most 1 s (`PrerollGate`); it
    /// must be the same on every participant. A gated play first publishes a provisional
    /// timeline anchored at the gate's deadline, then (once everyone pre-rolled) a later version
    /// anchored at the gate's start, before that deadline (`PrerollGateTimelineTests`); the
    /// bench's readers drop such a superseded version and the CLI's completing `timeline` event
    /// names it (`completes`). On by default, as the issue asks: "a play takes effect once every
    /// participant that is not suspended has pre-rolled, waiting at most 1 s". A player completes
    /// the seek issued ahead of a gated play once it can start from that frame in time (the
    /// built-in player once the first two frames there are decoded, or at the command's due
    /// date; mpv once its paused seek has landed there).
    /// `.playImmediately` and `.resumeImmediately` play without waiting; off, every play takes
    /// effect at its effective instant, whoever has not pre-rolled.
    public let waitsForPreroll: Bool

    /// The executor and clock the coordinator runs on: the scheduler given to the initializer,
    /// if any; else, while coordinating with a session, that session's event loop (the
    /// participant's loop, where its link and its session run, on the host's raw monotonic
    /// clock); while connected to a coordination medium, the medium's serial queue; before
    /// either, an idle scheduler on the host's raw monotonic clock that creates no queue.
    public var scheduler: any CoordinatorScheduler {
        givenScheduler ?? view.withLock { $0.run?.executor } ?? IdleScheduler()
    }

    /// What the synchronous API reads and sets from any thread: the settings, the coordination
    /// in progress and the machine as its last step left it, the readers of `events` and this
    /// participant's own suspensions. The machine itself is confined to the run's executor
    /// (`CoordinationRun`); this holds a copy, published after each step.
    struct View {
        var configuration = CoordinatorMachine.Configuration()
        /// `pauseSnapsToMediaTimeOfOriginator` as this participant starts coordinating with it.
        var pauseSnaps = true
        weak var delegate: (any PlaybackCoordinatorDelegate)?
        /// A delegate the coordinator keeps alive itself (`adoptDelegate(_:)`).
        var adopted: (any PlaybackCoordinatorDelegate)?
        /// The coordination in progress, nil before coordinating or after stopping.
        var run: CoordinationRun?
        /// The run's machine as its last step left it.
        var machine: CoordinatorMachine?
        var eventReaders: [Int: AsyncStream<Event>.Continuation] = [:]
        /// Those who take each event as it happens, on the executor (`observeEvents(_:)`).
        var eventObservers: [@Sendable (Event) -> Void] = []
        var nextReader = 0

        /// Where an event goes: every reader of `events` and every observer.
        var eventSinks: [@Sendable (Event) -> Void] {
            eventReaders.values.map { reader in { _ = reader.yield($0) } } + eventObservers
        }
        /// This participant's suspensions as the caller sees them (the machine learns of each on
        /// the executor).
        var ownSuspensions: Set<UUID> = []
        /// Bumped at each `coordinate(over:)` and `stopCoordinating()`, so that work of an
        /// earlier run does nothing.
        var generation = 0
    }

    /// The published view, under the coordinator's one lock (never held while a step runs or a
    /// delegate is called).
    let view = Mutex(View())
    /// `View.generation`, readable without the lock (`isCurrent(_:)`).
    let currentGeneration = Atomic<Int>(0)
    /// The scheduler given to the initializer, which every coordination runs on.
    let givenScheduler: (any CoordinatorScheduler)?

    /// A coordinator for a player; it does nothing until `coordinateWithSession(_:)`, from when it
    /// runs on that session's event loop (or on `scheduler`, when one is given: a test's virtual
    /// one, or a program's that drives the coordinator itself). The delegate is called there:
    /// it must not block.
    public init(delegate: (any PlaybackCoordinatorDelegate)? = nil, pauseSnapsToMediaTimeOfOriginator: Bool = true,
                waitsForPreroll: Bool = true, scheduler: (any CoordinatorScheduler)? = nil) {
        self.waitsForPreroll = waitsForPreroll
        givenScheduler = scheduler
        view.withLock {
            $0.delegate = delegate
            $0.pauseSnaps = pauseSnapsToMediaTimeOfOriginator
        }
    }

    deinit {
        if let run = view.withLock({ $0.run }) { run.run { run.stop() } }
    }

    /// The player the coordinator drives.
    public var delegate: (any PlaybackCoordinatorDelegate)? {
        get { view.withLock { $0.delegate } }
        set {
            view.withLock {
                $0.delegate = newValue
                $0.adopted = nil
            }
        }
    }

    /// Makes `delegate` the player the coordinator drives and keeps it alive: an adapter made for
    /// a program's own player (AVFoundation's delegate protocol), which nothing else holds.
    package func adoptDelegate(_ delegate: any PlaybackCoordinatorDelegate) {
        view.withLock {
            $0.delegate = delegate
            $0.adopted = delegate
        }
    }

    /// Joins the playback of `session`'s group: from now on the player follows the shared
    /// timeline, and its own changes go to the group. A late joiner adopts the timeline so far
    /// and comes in on time.
    public func coordinateWithSession<Activity: GroupActivity>(_ session: GroupSession<Activity>) {
        leaveMedium()
        coordinate(over: SessionChannel(session: session))
        reportDelegateItem()
    }

    /// What happens in the group from now on (timeline changes with their originators, waiting,
    /// mismatched items, abandoned commands).
    public var events: AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self)
        let id = view.withLock { state in
            let id = state.nextReader
            state.nextReader += 1
            state.eventReaders[id] = continuation
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.view.withLock { $0.eventReaders.removeValue(forKey: id) }
        }
        return stream
    }

    /// Calls `observer` with every event from now on, as `events` yields it, but on the
    /// coordinator's executor (the participant's loop) at the moment it happens, with no stream
    /// and no task in between: for code that runs on that loop, and for tests in virtual time,
    /// which read the events as the loop advances. It must not block.
    package func observeEvents(_ observer: @escaping @Sendable (Event) -> Void) {
        view.withLock { $0.eventObservers.append(observer) }
    }

    /// The coordinator's view of the group: timeline, suspensions, what others have loaded.
    public var core: CoordinationCore {
        view.withLock { view in
            view.machine?.core ?? CoordinationCore(pauseSnapsToMediaTimeOfOriginator: view.pauseSnaps, waitsForPreroll: waitsForPreroll)
        }
    }

    /// The machine as it stands (for programs and tests to inspect).
    public var machine: CoordinatorMachine? { view.withLock { $0.machine } }

    // MARK: The player's side

    /// Asks the group to play at `rate` (0 pauses) from the current position, as AVFoundation's
    /// `coordinateRateChange(to:options:)`: it does not throw. A request the group would refuse
    /// (a rate that is not 0 nor within `CoordinationCore.playableRates`, a coordinator not
    /// coordinating yet) is sent to no one and reported as `.requestRefused` on `events`;
    /// `proposeRateChange(to:options:)` throws it instead.
    ///
    /// With `.playImmediately`, the group plays at once, waiting neither for the others'
    /// pre-roll nor for suspensions that hold it: those stop holding the group, and each
    /// suspended participant comes in when its suspension ends.
    public func coordinateRateChange(to rate: Float, options: RateChangeOptions = []) {
        let request = CoordinatorMachine.LocalRequest.rate(Double(rate), options)
        reportingRefusal(of: request) { try self.request(request) }
    }

    /// Asks the group to play at `rate` (0 pauses) from the current position, as
    /// `coordinateRateChange(to:options:)` does, and throws what it would report: a rate that is
    /// not 0 nor within `CoordinationCore.playableRates` (NaN, 1e15, negative) is refused with a
    /// `ProposalRejection`, as every participant would skip it; a coordinator not coordinating
    /// yet with a `CoordinatorError`.
    public func proposeRateChange(to rate: Double, options: RateChangeOptions = []) throws {
        try request(.rate(rate, options))
    }

    /// Asks the group to move to media time `time`, keeping the rate, as AVFoundation's
    /// `coordinateSeek(to:options:)`: it does not throw. A time outside the item
    /// (`CoordinationCore.mediaTimeRange(ofItem:)`) is sent to no one and reported as
    /// `.requestRefused` on `events`; `proposeSeek(to:options:)` throws it instead.
    public func coordinateSeek(to time: ItemTime, options: SeekOptions = []) {
        let request = CoordinatorMachine.LocalRequest.seek(time, options)
        reportingRefusal(of: request) { try self.request(request) }
    }

    /// Asks the group to move to media time `time`, as `coordinateSeek(to:options:)` does, and
    /// throws what it would report: a time outside the item is refused with a
    /// `ProposalRejection`.
    public func proposeSeek(to time: ItemTime, options: SeekOptions = []) throws {
        try request(.seek(time, options))
    }

    /// Whether pauses snap to the media time their originator saw, as AVFoundation's property.
    /// It is the group's: read, it is the group's setting once coordinating (snapshots carry
    /// it); set while coordinating, the change is proposed to the group and takes effect on
    /// every participant at one instant (a refusal is reported as `.requestRefused`). Set
    /// before `coordinateWithSession(_:)`, it is the setting this participant starts from, as
    /// the initializer's argument is, which the group's history and snapshots then override.
    public var pauseSnapsToMediaTimeOfOriginator: Bool {
        get { view.withLock { $0.machine?.core.pauseSnapsToMediaTimeOfOriginator ?? $0.pauseSnaps } }
        set {
            guard isCoordinating else {
                view.withLock { $0.pauseSnaps = newValue }
                return
            }
            let request = CoordinatorMachine.LocalRequest.pauseSnapping(newValue)
            reportingRefusal(of: request) { try self.request(request) }
        }
    }

    /// The longest any suspension holds the group (`CoordinationCore+Holds.swift`), whatever its
    /// reason's default (`SuspensionReason.defaultHoldLimit`) says; nil for the defaults alone.
    /// It is the group's, as `pauseSnapsToMediaTimeOfOriginator` is: read, the group's cap once
    /// coordinating (nil before); set while coordinating, the change is proposed to the group
    /// and takes effect on every participant at one instant (0 to an hour; a refusal, or a set
    /// before coordinating, is reported as `.requestRefused`).
    public var maximumHold: TimeSpan? {
        get { view.withLock { $0.machine?.core.waiting.maximumHold } }
        set {
            let request = CoordinatorMachine.LocalRequest.maximumHold(newValue)
            reportingRefusal(of: request) { try self.request(request) }
        }
    }

    /// Runs `body`, reporting what it throws as `.requestRefused` on `events`.
    private func reportingRefusal(of request: CoordinatorMachine.LocalRequest, _ body: () throws -> Void) {
        do {
            try body()
        } catch {
            let sinks = view.withLock { $0.eventSinks }
            for sink in sinks { sink(.requestRefused(request, reason: "\(error)")) }
        }
    }

    /// Asks the group to switch to the item `identifier` (paused at its start, or at `time`). An
    /// identifier or a time that every participant would skip is refused with a
    /// `ProposalRejection`.
    public func transitionToItem(identifier: String, at time: ItemTime = .zero) throws {
        try request(.transition(item: identifier, at: time))
    }

    /// `transitionToItem(identifier:at:)`, a refusal reported as a `requestRefused` event as the
    /// other `coordinate…` calls report theirs.
    package func coordinateTransition(toItem identifier: String, at time: ItemTime) {
        let request = CoordinatorMachine.LocalRequest.transition(item: identifier, at: time)
        reportingRefusal(of: request) { try self.request(request) }
    }

    /// Tells the group what this participant has loaded (its identifier and content identity)
    /// and whether it is ready, so that a mismatch is reported to everyone. Strings longer than
    /// the core's bounds are refused with a `ProposalRejection`.
    public func reportItem(_ identifier: String?, identity: String?, ready: Bool) throws {
        try request(.report(item: identifier, identity: identity, ready: ready))
    }

    /// Where the shared timeline says the player should be at host instant `hostTime`, or nil
    /// before the session clock is known. This reads the timeline as replicated: past the end of
    /// an item, the ended item's timeline until the next record (what a player's correction
    /// loop compares with the item it still holds); `expectedItemTime(atLocalTime:)` and
    /// `core(at:)` read the group as it stands.
    public func expectedItemTime(atHostTime hostTime: HostInstant) -> ItemTime? {
        guard let (channel, timeline) = view.withLock({ view in view.run.map { ($0.channel, view.machine?.core.timeline ?? .initial) } }),
              let clock = channel.clock,
              let session = clock.sessionTime(atLocal: channel.localClock.localInstant(atHost: hostTime)) else { return nil }
        return timeline.mediaTime(atSessionTime: session)
    }

    /// Where the shared timeline says the player should be at instant `localTime` of this
    /// participant's clock, or nil before the session clock is known. Past the end of an item
    /// the group has moved on (`core(at:)`), this is the time in the item it moved to.
    public func expectedItemTime(atLocalTime localTime: LocalInstant?) -> ItemTime? {
        guard let localTime, let session = sessionTime(atLocalTime: localTime) else { return nil }
        return core(at: session).timeline.mediaTime(atSessionTime: session)
    }

    /// The coordinator's view of the group as it stands at session instant `instant`: `core`
    /// with the ends of items due by then applied (the group advanced to the next item, or
    /// paused at the end of the last), which the replicated `core` settles only at its next
    /// record. What a status line or a program showing "item i of n" and the position reads.
    public func core(at instant: SessionInstant) -> CoordinationCore {
        core.settled(at: instant)
    }

    /// Begins a suspension for `reason`; the group waits for it if the reason is one of
    /// `suspensionReasonsThatTriggerWaiting` and the group is within the reason's
    /// `participantLimitForWaitingOutSuspensions(withReason:)` (and, among those holding it, within
    /// `groupHoldLimit(forReason:)`).
    ///
    /// As with AVFoundation, a suspended participant's player is not driven by the group: from
    /// now until its last suspension ends, the coordinator issues its delegate no commands
    /// (the timeline and the events still follow the group). When the last one ends, the
    /// delegate is issued the current timeline a pre-roll ahead (`prerollLead`), so that the
    /// player catches up. `end(proposingNewTime:)` moves the group to the
    /// time (scrubbing: a `.userIsChangingCurrentTime` suspension, then the end with the time).
    public func beginSuspension(for reason: SuspensionReason) -> PlaybackSuspension {
        beginSuspension(for: reason, holdingGroup: true)
    }

    /// Begins a suspension for `reason` as `beginSuspension(for:)` does; with `holdingGroup`
    /// false, the group does not wait for it whatever `suspensionReasonsThatTriggerWaiting`
    /// says (a participant that cannot play here, such as one whose streamed item has no holder
    /// left, without changing the setting that others read).
    public func beginSuspension(for reason: SuspensionReason, holdingGroup: Bool) -> PlaybackSuspension {
        let id = UUID()
        _ = view.withLock { $0.ownSuspensions.insert(id) }
        // Decided with the settings as they are now, though the machine runs it a moment later.
        var configuration = view.withLock { $0.configuration }
        if !holdingGroup { configuration.suspensionReasonsThatTriggerWaiting.remove(reason) }
        step(configuration: configuration) { machine, now in machine.onSuspensionBegan(id, reason: reason, now: now).map(Self.effect) }
        return PlaybackSuspension(reason: reason, id: id, beginDate: Date()) { [weak self] time in
            guard let self else { return }
            // Ended once: a second `end()` does nothing.
            guard self.view.withLock({ $0.ownSuspensions.remove(id) != nil }) else { return }
            self.step { machine, now in machine.onSuspensionEnded(id, proposingNewTime: time, now: now).map(Self.effect) }
        }
    }

    /// Whether the coordinator is coordinating with a session or a coordination medium: from
    /// `coordinateWithSession(_:)` or `coordinate(using:)` on, a player's own transport (`play()`,
    /// `pause()`, `seek(to:)`) is proposed to the group.
    public var isCoordinating: Bool { view.withLock { $0.run != nil } }

    /// Whether this participant has a suspension of its own that has begun and not ended.
    public var isSuspended: Bool { view.withLock { !$0.ownSuspensions.isEmpty } }

    /// The reasons of this participant's own suspensions the coordinator has taken in, as
    /// AVFoundation's `suspensionReasons` (a mismatched item's `.coordinatedPlaybackNotPossible`
    /// included); empty when none.
    public var suspensionReasons: [SuspensionReason] {
        view.withLock { view in
            guard let machine = view.machine else { return [] }
            return machine.core.suspensions.filter { $0.participant == machine.localParticipant }.map(\.reason)
        }
    }

    /// The other participants that reported what they have loaded, as AVFoundation's
    /// `otherParticipants`: each with its suspensions' reasons and whether it is ready to play.
    /// Empty before coordinating; observe changes through `events` (no NotificationCenter here).
    public var otherParticipants: [CoordinatedPlaybackParticipant] {
        guard let machine = view.withLock({ $0.machine }) else { return [] }
        let core = machine.core
        return core.participants.keys.filter { $0 != machine.localParticipant }.sorted { $0.uuidString < $1.uuidString }.map { id in
            CoordinatedPlaybackParticipant(identifier: id,
                                           suspensionReasons: core.suspensions.filter { $0.participant == id }.map(\.reason),
                                           isReadyToPlay: (core.participants[id]?.ready ?? false) && !core.awaitsPreroll(from: id))
        }
    }

    /// Issues the player the group's current state afresh, as AVFoundation's
    /// `reapplyCurrentItemStateToPlaybackControlDelegate()`: for a player that lost its state
    /// (rebuilt, its decoder reset), a seek to where the group is, then the play or the pause.
    /// Nothing is sent to the group; while this participant is suspended nothing is issued.
    public func reapplyCurrentItemStateToPlaybackControlDelegate() {
        step { machine, now in machine.onReapply(now: now).map(Self.effect) }
    }

    /// This participant's clock, once coordinating.
    public var localClock: (any MonotonicDerivedClock)? { view.withLock { $0.run?.channel.localClock } }

    /// The session instant at instant `localTime` of this participant's clock, once the session
    /// clock is known.
    public func sessionTime(atLocalTime localTime: LocalInstant) -> SessionInstant? {
        view.withLock { $0.run?.channel }?.clock?.sessionTime(atLocal: localTime)
    }

    /// The session clock minus this participant's clock, and the estimate's error bound, at
    /// instant `localTime` of this participant's clock, once the session clock is known.
    public func clockStatus(atLocalTime localTime: LocalInstant) -> (offset: TimeSpan, errorBound: TimeSpan)? {
        guard let clock = view.withLock({ $0.run?.channel })?.clock, let session = clock.sessionTime(atLocal: localTime) else { return nil }
        return (TimeSpan(nanoseconds: session.nanoseconds.saturatingSubtracting(localTime.nanoseconds)),
                clock.errorBound(atLocal: localTime) ?? .zero)
    }

    /// The median round trip to the session clock's service (the relay's time service) of the
    /// recent samples the estimate was made from, at instant `localTime` of this participant's
    /// clock; nil before the first sample, or for a clock read without the network.
    public func roundTripToRelay(atLocalTime localTime: LocalInstant) -> TimeSpan? {
        view.withLock { $0.run?.channel }?.clock?.roundTrip(atLocal: localTime)
    }

    /// The instant of this participant's clock at session instant `sessionTime`, once the session
    /// clock is known; an instant more than a day from the session clock's present is taken as a
    /// day from it.
    public func localTime(atSessionTime sessionTime: SessionInstant) -> LocalInstant? {
        guard let channel = view.withLock({ $0.run?.channel }), let clock = channel.clock,
              let now = clock.sessionTime(atLocal: channel.localClock.instant()) else { return nil }
        let mapped = CoordinatorMachine.mappable(sessionTime, near: now)
        return clock.localTime(atSession: mapped)
    }

    /// The host instant at session instant `sessionTime`, once the session clock is known (within
    /// a day of the session clock's present, as `localTime(atSessionTime:)`).
    public func hostTime(atSessionTime sessionTime: SessionInstant) -> HostInstant? {
        guard let local = localTime(atSessionTime: sessionTime), let clock = localClock else { return nil }
        return clock.hostInstant(atLocal: local)
    }

    /// How far from the session clock's present an instant is mapped: a day.
    public static var mappableSpan: TimeSpan { CoordinatorMachine.mappableSpan }

    /// The last play or pause command decided for the player.
    public var lastCommand: PlaybackCommand? { view.withLock { $0.machine?.lastCommand } }
}

/// A coordinator used before it was given a session, or a proposal that could not be sent.
public struct CoordinatorError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public let description: String
    init(_ description: String) { self.description = description }
}
