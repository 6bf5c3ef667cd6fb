import Foundation
import TandemClock

/// The playback coordinator's decisions, as a pure value: the replicated `CoordinationCore` plus
/// this participant's own state (its suspensions, the command in flight, the clock mapping),
/// changed only by inputs that each come with the current host instant, and answering with
/// directives for the shell to carry out (propose this, issue this command, abandon that one,
/// emit this event, wake me at).
///
/// In the manner of swift-cluster-membership's `SWIM.Instance` (github.com/apple/
/// swift-cluster-membership, `SWIMInstance.swift`): every `on…` method returns a directive enum
/// declared beside it, and the machine never reads a clock, sleeps, or starts work of its own.
/// `PlaybackCoordinator` is its one shell.
///
/// Commands: the machine tracks the one in flight and the one queued behind it. A jump (a seek,
/// another item, a late join, a catch-up) is issued as a seek command first, and the play or
/// pause that follows once the seek completes (or is abandoned at its due date, which is the
/// instant the follow-up takes effect); a pause while the group waits in anticipation of playback
/// is followed by a buffering command. Any other decision is issued at once and supersedes the
/// command in flight (whose completion is then ignored). A command not completed by its due date
/// is abandoned with an event and never blocks the next.
public struct CoordinatorMachine: Sendable {
    /// What the machine decides with, the same on every input.
    public struct Configuration: Sendable, Equatable {
        /// Suspension reasons for which this participant asks the group to wait.
        public var suspensionReasonsThatTriggerWaiting: Set<SuspensionReason> = [.stallRecovery, .coordinatedPlaybackNotPossible]
        /// As AVFoundation's `participantLimitForWaitingOutSuspensions(withReason:)`: the most
        /// participants the group may have for this participant's suspensions of a reason to
        /// make it wait; a larger group plays on. No entry: no limit.
        public var participantLimits: [SuspensionReason: Int] = [:]
        /// Tandem's own: how many participants may hold the group at once for a reason (carried
        /// in the suspension's proposal; beyond it, a suspended participant catches up alone).
        /// No entry: no limit.
        public var groupHoldLimits: [SuspensionReason: Int] = [:]
        /// How far ahead a timeline already in force is picked up by a player that fell behind (a
        /// suspension's end, a record heard after its instant), so that it can seek and decode
        /// first.
        public var prerollLead = TimeSpan.milliseconds(300)
        /// How far ahead a participant picks up a timeline in force the first time, as it joins
        /// (its history assembled, or its clock's first estimate after that): its player has
        /// only opened the item, and seeks within one group of pictures. A player that decodes
        /// slower shows its first frames late and catches up alone: nobody waits for a joiner.
        /// Shorter than `prerollLead`, which covers a player that fell behind (a suspension's
        /// end, a catch-up); a player that seeks slowly (mpv, over its IPC) sets it to that.
        public var joinLead = TimeSpan.milliseconds(120)
        /// How far ahead a playing timeline is re-issued when it is re-mapped.
        public var remapLead = TimeSpan.milliseconds(50)
        /// How far ahead a gated play is picked up when this participant heard the record that
        /// started it after its start, by no more than this, while its player waits on the play's
        /// first picture (it pre-rolled there): the player holds the frames, so it needs no
        /// `prerollLead` (eight players on two processors: a peer busy decoding heard the start
        /// late and came in 300 ms after the others).
        public var prerolledLead = TimeSpan.milliseconds(50)
        /// How often a playing timeline is re-mapped to host time (the session clock's estimate
        /// improves and drifts).
        public var remapInterval = TimeSpan.seconds(1)
        /// How long after its instant a play or pause command may take to complete (and a
        /// buffering command from its issue) before it is abandoned.
        public var commandTimeout = TimeSpan.seconds(2)
        /// A configuration with the defaults.
        public init() {}
    }

    /// A command as the machine issued it: its identity, for the completion to name.
    public struct IssuedCommand: Sendable, Equatable {
        /// The identity the completion names (`onCommandCompleted(_:now:)`).
        public var id: UInt64
        /// The command.
        public var command: PlaybackCommand
    }

    /// What a participant asks of the group.
    public enum LocalRequest: Sendable, Equatable {
        /// Play at a rate (0 pauses), as `coordinateRateChange(to:options:)`.
        case rate(Double, PlaybackCoordinator.RateChangeOptions)
        /// Move to a media time, as `coordinateSeek(to:options:)`.
        case seek(ItemTime, PlaybackCoordinator.SeekOptions)
        /// Switch to an item.
        case transition(item: String, at: ItemTime)
        /// Report what this participant has loaded.
        case report(item: String?, identity: String?, ready: Bool)
        /// Change the group's shared queue (`CoordinatorMachine+Queue.swift`).
        case queue(PlaybackQueue.Change)
        /// Change whether the group's pauses snap to their originator's media time, as setting
        /// `pauseSnapsToMediaTimeOfOriginator` does.
        case pauseSnapping(Bool)
        /// Set the group's cap on every suspension's hold (nil: the reasons' defaults alone), as
        /// setting `PlaybackCoordinator.maximumHold` does (`CoordinationCore+Holds.swift`).
        case maximumHold(TimeSpan?)
    }

    /// The replicated state, as every participant holds it.
    public internal(set) var core: CoordinationCore
    /// Snapshots: the late joiner's history assembly and the publishing schedule
    /// (`CoordinatorMachine+Snapshots.swift`).
    public internal(set) var snapshots = SnapshotProgress()
    /// This participant.
    public let localParticipant: UUID
    /// What the machine decides with.
    public var configuration: Configuration
    /// The session clock in host time, once known.
    public private(set) var mapping: ClockMapping?
    /// This participant's suspensions, begun and not ended, with their reasons.
    public private(set) var ownSuspensions: [UUID: SuspensionReason] = [:]
    /// The command issued and not yet completed, abandoned or superseded.
    public private(set) var inFlight: IssuedCommand?
    /// The command that follows the one in flight.
    public private(set) var queued: PlaybackCommand?
    /// The last play or pause command decided (issued or queued).
    public private(set) var lastCommand: PlaybackCommand?
    /// The core with the ends of items due within `itemEndLead` applied, while one is due
    /// (`CoordinatorMachine+Queue.swift`).
    var itemEndView: CoordinationCore?
    /// Ends of items already told to the program, ahead of the record that settles them.
    var announcedItemEnds: [SharedTimeline] = []
    /// When the next end of an item or of a hold is due to be told (session time).
    var itemEndAnnouncement: SessionInstant?
    /// The suspensions whose hold's end was told to the program ahead of the record that settles it.
    var announcedHoldReleases: [UUID] = []
    private var nextCommand: UInt64 = 1
    private var lastPlayIssuedAt: HostInstant?
    /// A timeline arrived before the clock mapping: its command waits for the mapping, to be
    /// picked up this far ahead if it is in force by then.
    private var awaitsMapping: TimeSpan?
    /// The `.coordinatedPlaybackNotPossible` suspension the machine began for a mismatched item.
    var mismatchSuspension: UUID?

    /// A machine for `localParticipant` at the initial timeline.
    public init(localParticipant: UUID, pauseSnapsToMediaTimeOfOriginator: Bool = true, waitsForPreroll: Bool = true,
                configuration: Configuration = Configuration()) {
        self.localParticipant = localParticipant
        self.configuration = configuration
        core = CoordinationCore(pauseSnapsToMediaTimeOfOriginator: pauseSnapsToMediaTimeOfOriginator, waitsForPreroll: waitsForPreroll)
    }

    /// Whether this participant has a suspension of its own.
    public var isSuspended: Bool { !ownSuspensions.isEmpty }

    /// Where the shared timeline is at host instant `host`, once the clock mapping is known: in
    /// the item the group watches then (the ends of items due by then applied, as
    /// `view(atHost:)` has them).
    public func expectedItemTime(atHost host: HostInstant) -> ItemTime? {
        mapping.map { mapping in
            let session = mapping.sessionTime(atHost: host)
            return core.settled(at: session).timeline.mediaTime(atSessionTime: session)
        }
    }

    /// The group as it stands at host instant `host`: the replicated core with the ends of
    /// items due by then applied (it settles them itself only at its next record), or the core
    /// as it is before the clock mapping is known. What this participant's own requests are
    /// made against: a pause just after an item's end pauses the next item where it is, not
    /// the ended item's timeline run on (clamped to its duration) carried over to the next.
    func view(atHost host: HostInstant) -> CoordinationCore {
        mapping.map { core.settled(at: $0.sessionTime(atHost: host)) } ?? core
    }

    // MARK: Ordered records

    /// What to do after an ordered record.
    public enum OrderedDirective: Sendable, Equatable {
        /// Tell the program.
        case emit(CoordinationCore.Event)
        /// Issue the player this command.
        case issue(IssuedCommand)
        /// Call `onTick(now:)` at this instant (replacing any earlier request).
        case wake(at: HostInstant)
        /// Publish this snapshot of the coordination state (`CoordinatorMachine+Snapshots.swift`).
        case publishSnapshot(CoordinationSnapshot)
        /// Send this proposal for ordering (this participant's mismatch suspension, begun or ended).
        case propose(PlaybackProposal)
    }

    /// Applies one live ordered record: the core applies it, and the player is issued what the
    /// changed timeline asks of it. `onOrdered(_:now:)` (`CoordinatorMachine+Snapshots.swift`)
    /// assembles a joiner's history and calls it for each record to apply.
    mutating func applyOrdered(_ input: OrderedInput, now: HostInstant) -> [OrderedDirective] {
        let before = itemEndView?.timeline ?? core.timeline
        itemEndView = nil
        let gateWasOpen = core.waiting.gate != nil
        let events: [CoordinationCore.Event]
        let originator: UUID
        switch input {
        case .proposal(let proposal):
            let openGate = core.waiting.gate
            events = core.apply(proposal)
            snapshots.applied.note(core)
            originator = playOriginator(completing: openGate, by: proposal, before: before) ?? proposal.originator
        case .unreadable(let from, let order, let rejection):
            events = core.skip(order: order, originator: from, rejection: rejection)
            originator = from
        case .other(let from, let order), .placeholder(let from, let order):
            _ = core.skip(order: order, originator: from, rejection: ProposalRejection(.unreadable, "a record of another kind"))
            return []
        case .snapshot, .endOfHistory:
            return []
        }
        // Ahead of an item's end, the record is decided on the group as it will be after the end,
        // as a tick decides (`enterItemEndView(now:)`): a player preparing the next item is not
        // sent back to the ending one. The replicated core stays as the record left it.
        let replicated = core
        defer { core = replicated }
        if let view = itemEndViewAhead(now: now) {
            itemEndView = view
            core = view
        }
        guard !events.isEmpty || core.timeline != before else { return [] }
        if keepsPrerollSeek(before: before, events: events) { return [] }
        let from = previous(before, gateWasOpen: gateWasOpen)
        let told = unannounced(events).map(OrderedDirective.emit)
        // The mismatch suspension first: its end makes the `follow` after it issue the catch-up.
        let mismatch = mismatchDirectives(now: now)
        let followed = follow(from: from, originator: originator, lead: leadAfter(gateWasOpen: gateWasOpen, from: from, now: now), now: now)
            .map {
            switch $0 {
            case .issue(let issued): OrderedDirective.issue(issued)
            case .wake(let instant): OrderedDirective.wake(at: instant)
            case .abandon, .emit, .propose: preconditionFailure("not from follow")
            }
        }
        return told + mismatch + followed + holdWake(after: followed)
    }

    // MARK: Time

    /// What to do at a wake-up.
    public enum TickDirective: Sendable, Equatable {
        /// The command in flight is given up (its completion, if it comes, is ignored).
        case abandon(IssuedCommand)
        /// Tell the program (`.commandAbandoned`).
        case emit(CoordinationCore.Event)
        /// Issue the player this command.
        case issue(IssuedCommand)
        /// Call `onTick(now:)` at this instant.
        case wake(at: HostInstant)
        /// Publish this snapshot of the coordination state (`CoordinatorMachine+Snapshots.swift`).
        case publishSnapshot(CoordinationSnapshot)
    }

    /// Time has come: a command past its due date is abandoned (the one queued behind it goes
    /// out), and a playing timeline due for its re-map is re-issued.
    public mutating func onTick(now: HostInstant) -> [TickDirective] {
        // Ahead of an item's end, this tick decides on the group as it will be after the end.
        let replicated = core
        defer { core = replicated }
        var out: [TickDirective] = enterItemEndView(now: now)
        if let flying = inFlight, flying.command.completionDueDate <= now {
            inFlight = nil
            out += [.abandon(flying), .emit(.commandAbandoned(flying.command))]
            if let next = queued {
                queued = nil
                out.append(.issue(issue(next, now: now)))
            }
        }
        let timeline = core.timeline
        if timeline.rate > 0, ownSuspensions.isEmpty, mapping != nil, queued == nil,
           lastPlayIssuedAt.map({ $0 + configuration.remapInterval <= now }) ?? true,
           let play = command(for: timeline, lead: configuration.remapLead, originator: nil, now: now) {
            out.append(.issue(issue(play.main, now: now)))
        }
        if let wake = nextWake() { out.append(.wake(at: wake)) }
        // A snapshot is of the state applied, never of the view ahead of it (an item's end or a
        // hold's release not yet settled by a record), which no other participant applied.
        core = replicated
        if let snapshot = snapshotDue(now: now) { out.append(.publishSnapshot(snapshot)) }
        return out
    }

    /// What to do when the clock mapping changes.
    public enum ClockMappingDirective: Sendable, Equatable {
        /// Issue the player this command.
        case issue(IssuedCommand)
        /// Call `onTick(now:)` at this instant.
        case wake(at: HostInstant)
    }

    /// The session clock in host time is `mapping` from now on (the first estimate, or a newer
    /// one). A timeline that waited for the clock is issued now: no polling.
    public mutating func onClockMapping(_ mapping: ClockMapping, now: HostInstant) -> [ClockMappingDirective] {
        self.mapping = mapping
        guard let lead = awaitsMapping else { return [] }
        return follow(from: nil, originator: nil, lead: lead, now: now).map {
            switch $0 {
            case .issue(let issued): .issue(issued)
            case .wake(let instant): .wake(at: instant)
            case .abandon, .emit, .propose: preconditionFailure("not from follow")
            }
        }
    }

    // MARK: The player's side

    /// What to do after the player completed a command.
    public enum CompletionDirective: Sendable, Equatable {
        /// Issue the player this command (the one queued behind the completed one).
        case issue(IssuedCommand)
        /// Call `onTick(now:)` at this instant.
        case wake(at: HostInstant)
        /// Send this proposal for ordering (the pre-roll report of a play's seek).
        case propose(PlaybackProposal)
    }

    /// The player completed the command `id`. A superseded or abandoned command's completion
    /// changes nothing.
    public mutating func onCommandCompleted(_ id: UInt64, now: HostInstant) -> [CompletionDirective] {
        guard inFlight?.id == id else { return [] }
        var out: [CompletionDirective] = prerollReport(completing: inFlight).map { [.propose($0)] } ?? []
        inFlight = nil
        if let next = queued {
            queued = nil
            out.append(.issue(issue(next, now: now)))
        }
        if let wake = nextWake() { out.append(.wake(at: wake)) }
        return out
    }

    /// What to do about a request of this participant's.
    public enum LocalRequestDirective: Sendable, Equatable {
        /// Send this proposal for ordering.
        case propose(PlaybackProposal)
    }

    /// A request of this participant's (its player's transport, a person's command): the
    /// proposal that carries it, or the `ProposalRejection` every participant would skip it with.
    ///
    /// `.playImmediately` and `.resumeImmediately` (Apple's options) ask the group not to wait
    /// for others' pre-roll (`setRateImmediately`, `seekImmediately`: no pre-roll gate); a
    /// `setRateImmediately` also plays through the suspensions that hold the group.
    public func onLocalRequest(_ request: LocalRequest, now: HostInstant) throws(ProposalRejection) -> [LocalRequestDirective] {
        let view = view(atHost: now)
        let proposal: PlaybackProposal
        switch request {
        case .rate(let rate, let options):
            if let rejection = CoordinationCore.rateRejection(rate) { throw rejection }
            if rate > 0 {
                proposal = options.contains(.playImmediately) ? .setRateImmediately(rate) : .setRate(rate)
            } else {
                // The timeline plays on past the item's end; a pause there shows the end.
                proposal = .pause(at: mapping.map { withinItem(view.timeline.mediaTime(atSessionTime: $0.sessionTime(atHost: now)), in: view) },
                                  item: view.timeline.item)
            }
        case .seek(let time, let options):
            let item = view.timeline.item
            proposal = options.contains(.resumeImmediately) ? .seekImmediately(to: time, item: item) : .seek(to: time, item: item)
        case .transition(let item, let time): proposal = .transition(item: item, at: time)
        case .report(let item, let identity, let ready): proposal = .state(item: item, identity: identity, ready: ready)
        case .queue(let change): proposal = .queue(change)
        case .pauseSnapping(let snaps): proposal = .pauseSnapping(snaps)
        case .maximumHold(let cap): proposal = .maximumHold(cap)
        }
        if let rejection = view.rejection(of: proposal, from: localParticipant) { throw rejection }
        return [.propose(proposal)]
    }

    /// What to do about this participant's suspensions.
    public enum SuspensionDirective: Sendable, Equatable {
        /// Send this proposal for ordering.
        case propose(PlaybackProposal)
        /// Issue the player this command (the catch-up once the last suspension ended).
        case issue(IssuedCommand)
        /// Call `onTick(now:)` at this instant.
        case wake(at: HostInstant)
    }

    /// This participant began suspension `id` for `reason`: the group is asked to wait if the
    /// reason is one of `suspensionReasonsThatTriggerWaiting` and the group is within the
    /// reason's `participantLimits`. Until its last suspension ends, the player is issued no
    /// commands (as with AVFoundation, a suspended participant's player is its own).
    public mutating func onSuspensionBegan(_ id: UUID, reason: SuspensionReason, now: HostInstant) -> [SuspensionDirective] {
        guard ownSuspensions[id] == nil else { return [] }
        ownSuspensions[id] = reason
        let groupSize = max(core.participants.count, 1)
        let triggers = configuration.suspensionReasonsThatTriggerWaiting.contains(reason)
            && groupSize <= (configuration.participantLimits[reason] ?? .max)
        let proposal = PlaybackProposal.beginSuspension(id: id, reason: reason, triggersWaiting: triggers,
                                                        waitingLimit: configuration.groupHoldLimits[reason])
        // Withdrawn queued work: the player is not driven while suspended.
        queued = nil
        guard core.rejection(of: proposal, from: localParticipant) == nil else { return [] }
        return [.propose(proposal)]
    }

    /// This participant ended suspension `id`, optionally proposing where the group goes on
    /// (`end(proposingNewTime:)`: the group moves there, whether it waited or not). When it was
    /// the last, the player is issued the current timeline a pre-roll ahead (`prerollLead`), and
    /// catches up.
    /// An unknown or already ended suspension changes nothing.
    public mutating func onSuspensionEnded(_ id: UUID, proposingNewTime time: ItemTime?, now: HostInstant) -> [SuspensionDirective] {
        guard ownSuspensions.removeValue(forKey: id) != nil else { return [] }
        // Within the item, so that the end is never refused (the group would wait on).
        let view = view(atHost: now)
        var out: [SuspensionDirective] = [.propose(.endSuspension(id: id, proposedTime: time.map { withinItem($0, in: view) },
                                                                 item: time == nil ? nil : view.timeline.item))]
        guard ownSuspensions.isEmpty else { return out }
        out += follow(from: nil, originator: nil, lead: configuration.prerollLead, now: now).map {
            switch $0 {
            case .issue(let issued): .issue(issued)
            case .wake(let instant): .wake(at: instant)
            case .abandon, .emit, .propose: preconditionFailure("not from follow")
            }
        }
        return out
    }

    /// What to do when a participant leaves.
    public enum DepartureDirective: Sendable, Equatable {
        /// Send this proposal for ordering.
        case propose(PlaybackProposal)
    }

    /// `participant` left the session: if it holds suspensions, or a play's pre-roll gate waits
    /// for it, propose that they end (whoever notices first; a repeat changes nothing).
    public func onDeparture(_ participant: UUID, now: HostInstant) -> [DepartureDirective] {
        core.suspensions.contains { $0.participant == participant } || core.awaitsPreroll(from: participant)
            ? [.propose(.departed(participant))] : []
    }

    // MARK: Deciding commands

    enum Effect {
        case issue(IssuedCommand)
        case wake(HostInstant)
        case abandon(IssuedCommand)
        case emit(CoordinationCore.Event)
        case propose(PlaybackProposal)
    }

    /// `time` within the item `view` (`view(atHost:)`) watches, as validation bounds it.
    private func withinItem(_ time: ItemTime, in view: CoordinationCore) -> ItemTime {
        time.clamped(to: view.mediaTimeRange(ofItem: view.timeline.item))
    }

    /// How far from the session clock's present an instant is mapped to host time: a day. An
    /// honest timeline's instants are within seconds of it; one that a lying relay stamped at
    /// the end of time is mapped to a day from now.
    public static let mappableSpan = TimeSpan.seconds(24 * 3_600)

    /// `sessionTime`, within `mappableSpan` of `now`.
    static func mappable(_ sessionTime: SessionInstant, near now: SessionInstant) -> SessionInstant {
        sessionTime.clamped(to: (now - mappableSpan)...(now + mappableSpan))
    }

    /// A timeline change is a jump when the new timeline does not continue the old one where it
    /// takes over (another item, another position than the old one reached), by more than this.
    static let jumpTolerance = TimeSpan.milliseconds(1)

    /// The commands that make the player follow the current timeline: the play or pause, and the
    /// seek before it when it jumps (`previous` nil: from wherever the player is), or the
    /// buffering after it while the group waits to play.
    private func command(for timeline: SharedTimeline, lead: TimeSpan, originator: UUID?, now: HostInstant,
                         jump: Bool = false) -> (first: PlaybackCommand?, main: PlaybackCommand, then: PlaybackCommand?)? {
        guard let mapping else { return nil }
        let nowSession = mapping.sessionTime(atHost: now)
        let issuedAt = nowSession
        if timeline.rate > 0 {
            // A change already in force (a late joiner's, or one that reached us late) is picked
            // up a lead ahead, on the same timeline, so the player comes in on time.
            let wanted = timeline.anchorSessionTime > nowSession ? timeline.anchorSessionTime : nowSession + lead
            let start = Self.mappable(wanted, near: nowSession)
            let hostTime = mapping.hostTime(atSession: start)
            let itemTime = timeline.mediaTime(atSessionTime: start)
            let play = PlayCommand(expectedCurrentItemIdentifier: timeline.item, originator: originator,
                                   rate: timeline.rate * mapping.sessionSecondsPerHostSecond, itemTime: itemTime, hostTime: hostTime,
                                   completionDueDate: max(now, hostTime) + configuration.commandTimeout,
                                   version: timeline.version, timeline: timeline, issuedAt: issuedAt)
            let seek = jump ? PlaybackCommand.seek(SeekCommand(expectedCurrentItemIdentifier: timeline.item, originator: originator,
                                                               itemTime: itemTime, shouldBufferInAnticipationOfPlayback: true,
                                                               anticipatedPlaybackRate: timeline.rate,
                                                               completionDueDate: max(now, hostTime), version: timeline.version)) : nil
            return (seek, .play(play), nil)
        }
        let hostTime = mapping.hostTime(atSession: Self.mappable(max(timeline.anchorSessionTime, nowSession), near: nowSession))
        let anticipating = core.isWaiting && core.intendedRate > 0
        let anticipated = anticipating ? core.intendedRate : 0
        let pause = PauseCommand(expectedCurrentItemIdentifier: timeline.item, originator: originator, itemTime: timeline.anchorMediaTime,
                                 hostTime: hostTime, shouldBufferInAnticipationOfPlayback: anticipating,
                                 anticipatedPlaybackRate: anticipated, completionDueDate: max(now, hostTime) + configuration.commandTimeout,
                                 version: timeline.version, timeline: timeline, issuedAt: issuedAt)
        let seek = jump ? PlaybackCommand.seek(SeekCommand(expectedCurrentItemIdentifier: timeline.item, originator: originator,
                                                           itemTime: timeline.anchorMediaTime,
                                                           shouldBufferInAnticipationOfPlayback: anticipating,
                                                           anticipatedPlaybackRate: anticipated,
                                                           completionDueDate: max(now, hostTime), version: timeline.version)) : nil
        let buffer = anticipating ? PlaybackCommand.buffer(BufferingCommand(expectedCurrentItemIdentifier: timeline.item, originator: originator,
                                                                           itemTime: timeline.anchorMediaTime,
                                                                           anticipatedPlaybackRate: anticipated,
                                                                           completionDueDate: max(now, hostTime) + configuration.commandTimeout,
                                                                           version: timeline.version)) : nil
        return (seek, .pause(pause), buffer)
    }

    /// Whether `timeline` jumps from `previous` (nil: the player's position is unknown).
    private static func jumps(from previous: SharedTimeline?, to timeline: SharedTimeline) -> Bool {
        guard let previous else { return true }
        if previous.item != timeline.item { return true }
        let reached = previous.mediaTime(atSessionTime: timeline.anchorSessionTime)
        return (timeline.anchorMediaTime - reached).magnitude > jumpTolerance
    }

    /// `lead`, or less so that the player keeps a start it was told already: a play decided on
    /// the same course (another version of the timeline: a record that changed nothing the
    /// player sees, such as a joiner's own report right after its history) whose start is still
    /// ahead. Re-issued a whole lead from now, a joiner came in `prerollLead` after its history
    /// whatever its `joinLead`.
    private func lead(_ lead: TimeSpan, keepingStartFor timeline: SharedTimeline, now: HostInstant) -> TimeSpan {
        guard case .play(let play)? = lastCommand, play.hostTime > now, let mapping,
              play.timeline.item == timeline.item, play.timeline.rate == timeline.rate,
              play.timeline.anchorMediaTime == timeline.anchorMediaTime,
              play.timeline.anchorSessionTime == timeline.anchorSessionTime else { return lead }
        return min(lead, mapping.sessionTime(atHost: play.hostTime) - mapping.sessionTime(atHost: now))
    }

    /// Issues the player what the current timeline asks of it, changed from `previous`.
    mutating func follow(from previous: SharedTimeline?, originator: UUID?, lead: TimeSpan, now: HostInstant) -> [Effect] {
        guard ownSuspensions.isEmpty else { return [] }
        let timeline = core.timeline
        let lead = self.lead(lead, keepingStartFor: timeline, now: now)
        guard let decided = command(for: timeline, lead: lead, originator: originator, now: now,
                                    jump: Self.jumps(from: previous, to: timeline) || core.awaitsPreroll(from: localParticipant)) else {
            awaitsMapping = lead
            return []
        }
        awaitsMapping = nil
        lastCommand = decided.main
        var out: [Effect] = []
        if let first = decided.first {
            queued = decided.main
            out.append(.issue(issue(first, now: now)))
        } else {
            queued = decided.then
            out.append(.issue(issue(decided.main, now: now)))
        }
        if let wake = nextWake() { out.append(.wake(wake)) }
        return out
    }

    /// `command` as issued now: in flight from now on (superseding any other).
    private mutating func issue(_ command: PlaybackCommand, now: HostInstant) -> IssuedCommand {
        let issued = IssuedCommand(id: nextCommand, command: command)
        nextCommand += 1
        inFlight = issued
        if case .play = command { lastPlayIssuedAt = now }
        if case .play = command { lastCommand = command } else if case .pause = command { lastCommand = command }
        return issued
    }

    /// When the machine next has something to do: the due date of the command in flight, the
    /// re-map of a playing timeline, an item's end or a hold's end ahead.
    func nextWake() -> HostInstant? {
        var wake = inFlight?.command.completionDueDate
        if core.timeline.rate > 0, ownSuspensions.isEmpty, let last = lastPlayIssuedAt {
            let remap = last + configuration.remapInterval
            wake = wake.map { min($0, remap) } ?? remap
        }
        if let end = itemEndWake() { wake = wake.map { min($0, end) } ?? end }
        if let hold = holdExpiryWake() { wake = wake.map { min($0, hold) } ?? hold }
        return wake
    }
}
