import Foundation
import TandemClock

/// The pure core of the playback coordinator: the shared timeline and everything that decides it
/// (suspensions, who has loaded what), changed only by ordered proposals.
///
/// Every participant feeds its core the same ordered proposals, so every core holds the same
/// timeline at every version; nobody follows anybody, and no echo can start.
///
/// Its `Codable` form, synthesized from its stored state, is the snapshot a late joiner starts
/// from (`CoordinationSnapshot`): a stored property added here is in the snapshot too (give it
/// a bound in `CoordinationSnapshot.rejection(reflecting:orderedAt:pauseSnapsToMediaTimeOfOriginator:)`).
public struct CoordinationCore: Sendable, Equatable, Codable {
    /// A suspension someone began and has not ended.
    public struct Suspension: Sendable, Equatable, Codable {
        /// The suspension's identity.
        public var id: UUID
        /// Who began it.
        public var participant: UUID
        /// Why.
        public var reason: SuspensionReason
        /// Whether the group waits for it (asked for, and within the reason's limits).
        public var holdsGroup: Bool
        /// The session instant it began holding the group, from which its hold limit runs
        /// (`CoordinationCore+Holds.swift`); nil when it never held it.
        public var began: SessionInstant? = nil
    }

    /// What a participant said it has loaded.
    public struct ParticipantState: Sendable, Equatable, Codable {
        /// The item's identifier.
        public var item: String?
        /// The item's content identity (duration and hashes), to catch different files.
        public var identity: String?
        /// Whether it can play now.
        public var ready: Bool
    }

    /// What applying a proposal changed, for programs to show ("Ana paused at 12:03").
    public enum Event: Sendable, Equatable {
        /// The timeline changed, by `originator`'s proposal.
        case timelineChanged(SharedTimeline, originator: UUID, proposal: PlaybackProposal)
        /// The group began waiting for suspended participants.
        case groupWaiting(SharedTimeline, for: [Suspension])
        /// The last suspension that held the group ended: playback resumes.
        case groupResumed(SharedTimeline, originator: UUID)
        /// `suspension` held the group for `limit`, its longest hold: the group stopped waiting
        /// for it at the limit's instant, and plays on unless `stillWaiting` (another suspension
        /// holds it); the suspension goes on until its participant ends it
        /// (`CoordinationCore+Holds.swift`).
        case holdExpired(SharedTimeline, suspension: Suspension, limit: TimeSpan, stillWaiting: Bool)
        /// Participants hold different content under the same item identifier.
        case itemMismatch(item: String, identities: [UUID: String])
        /// The proposal ordered `order`, from `originator`, was skipped: invalid, or no proposal
        /// at all. Nothing changed but the version.
        case proposalRejected(ProposalRejection, originator: UUID, order: UInt64)
        /// This participant's player did not complete `command` by its due date: the
        /// coordinator gave up on it and went on (emitted by the coordinator, never by the core).
        case commandAbandoned(PlaybackCommand)
        /// How this participant's history was assembled from snapshots (a late joiner's), or why
        /// it could not be (emitted by the coordinator, never by the core).
        case snapshotHistory(SnapshotHistoryNote)
        /// A request of this participant's (`coordinateRateChange(to:options:)`,
        /// `coordinateSeek(to:options:)`, setting `pauseSnapsToMediaTimeOfOriginator`) was sent to
        /// no one: the group would refuse it, or the coordinator is not coordinating (emitted by
        /// the coordinator, never by the core). The throwing forms (`proposeRateChange`,
        /// `proposeSeek`) throw this instead.
        case requestRefused(CoordinatorMachine.LocalRequest, reason: String)
        /// The current item played to its end at the timeline's anchor instant: the group went on
        /// to `advancedTo` (its index in the queue with it), or paused on the last frame (nil).
        case itemEnded(SharedTimeline, advancedTo: PlaybackQueue.Entry?, index: Int?)
    }

    /// The shared timeline, as every participant holds it.
    public internal(set) var timeline = SharedTimeline.initial
    /// The rate the group asked for; the timeline runs at it unless the group is waiting.
    public internal(set) var intendedRate: Double = 0
    /// The group's shared queue: the one source of truth for the item (`CoordinationCore+Queue.swift`).
    public internal(set) var queue = PlaybackQueue()
    /// Who made the timeline's item current: the originator of the record that switched to it,
    /// or nil when an item's end advanced to it (or no item was chosen). A seek in the item before
    /// is still applied when its originator is this participant (`PlaybackProposal.seek`).
    public internal(set) var itemChosenBy: UUID?
    /// Active suspensions, in the order they began.
    public internal(set) var suspensions: [Suspension] = []
    /// The pre-roll gate, the stall policy and the group's identities (`CoordinationCore+Waiting.swift`).
    public internal(set) var waiting = Waiting()
    /// Whether a play waits for the others' pre-roll (at most `PrerollGate.defaultWaitLimit`);
    /// the same on every participant. On by default (see `PlaybackCoordinator.waitsForPreroll`).
    public let waitsForPreroll: Bool
    /// What each participant has loaded.
    public private(set) var participants: [UUID: ParticipantState] = [:]
    /// Whether pauses snap to the media time the originator saw (as AVFoundation's
    /// `pauseSnapsToMediaTimeOfOriginator`): the group's, changed by a `.pauseSnapping`
    /// proposal, so the same on every participant at every version.
    public internal(set) var pauseSnapsToMediaTimeOfOriginator: Bool

    /// A core at the initial timeline.
    public init(pauseSnapsToMediaTimeOfOriginator: Bool = true, waitsForPreroll: Bool = true) {
        self.pauseSnapsToMediaTimeOfOriginator = pauseSnapsToMediaTimeOfOriginator
        self.waitsForPreroll = waitsForPreroll
    }

    /// Whether the group is waiting for a suspended participant.
    public var isWaiting: Bool { suspensions.contains { $0.holdsGroup } }

    /// Applies the next ordered proposal and returns what changed. Proposals at or below the
    /// current version (replays) change nothing.
    ///
    /// A proposal that fails validation (`rejection(of:)`) is skipped: it changes nothing but
    /// the version, which advances to its order as for any other proposal (a `state` report
    /// does the same), so that every participant's version stays the relay's last order number
    /// and the coordinator treats the skip as any change that leaves the timeline where it was.
    /// The one event says why.
    public mutating func apply(_ ordered: OrderedProposal) -> [Event] {
        guard ordered.order > timeline.version else { return [] }
        // Ends of items due by the record's instant happen first, as on every participant (not
        // for a record whose instants are refused: a relay could otherwise end items at will).
        let ended = instantRejection(of: ordered) == nil ? settle(at: ordered.effectiveAt) : []
        let item = timeline.item
        let events = applyRecord(ordered)
        if timeline.item != item { itemChosenBy = ordered.originator }
        return ended + events
    }

    private mutating func applyRecord(_ ordered: OrderedProposal) -> [Event] {
        if let rejection = rejection(of: ordered) {
            return skip(order: ordered.order, originator: ordered.originator, rejection: rejection)
        }
        timeline.version = ordered.order
        prepareWaiting(for: ordered)
        let at = max(ordered.effectiveAt, timeline.anchorSessionTime)
        let position = timeline.mediaTime(atSessionTime: at)
        switch ordered.proposal {
        case .setRate(let rate), .setRateImmediately(let rate):
            let wasStopped = timeline.rate == 0
            intendedRate = max(0, rate)
            let wasWaiting = isWaiting
            if case .setRateImmediately = ordered.proposal, rate > 0 { releaseHoldingSuspensions() }
            reanchor(media: position, at: at)
            if wasStopped, case .setRate = ordered.proposal { gatePlay(ordered, at: at) }
            return [changed(ordered)] + (wasWaiting && !isWaiting ? [.groupResumed(timeline, originator: ordered.originator)] : [])
        case .pause(let seen, let item):
            intendedRate = 0
            let snapped = pauseSnapsToMediaTimeOfOriginator && isTimelineItem(item) ? seen : nil
            reanchor(media: snapped ?? position, at: at)
            return [changed(ordered)]
        case .seek(let target, _), .seekImmediately(let target, _):
            reanchor(media: max(.zero, target), at: at)
            if case .seek = ordered.proposal { gatePlay(ordered, at: at) }
            return [changed(ordered)]
        case .transition(let item, let start):
            followTransition(toItem: item, order: ordered.order)
            timeline.item = item
            intendedRate = 0
            reanchor(media: max(.zero, start), at: at)
            return [changed(ordered)] + mismatchEvents() + releaseMismatched(ordered)
        case .beginSuspension(let id, let reason, let triggersWaiting, let limit):
            guard !suspensions.contains(where: { $0.id == id }) else { return [] }
            let holding = suspensions.filter { $0.holdsGroup && $0.reason == reason }.count
            let holds = holdsGroup(ordered, reason: reason, asked: triggersWaiting && holding < (limit ?? Int.max))
            let wasWaiting = isWaiting
            let gateEvents = holds ? [] : stopWaiting(for: ordered.originator, ordered)
            if holds { withdrawGate() }
            let at = max(ordered.effectiveAt, timeline.anchorSessionTime)
            let position = timeline.mediaTime(atSessionTime: at)
            suspensions.append(Suspension(id: id, participant: ordered.originator, reason: reason, holdsGroup: holds,
                                          began: holds ? at : nil))
            guard holds, !wasWaiting else { return gateEvents }
            reanchor(media: position, at: at)
            return [.groupWaiting(timeline, for: suspensions.filter(\.holdsGroup))]
        case .endSuspension(let id, let proposedTime, let item):
            guard let proposedTime, isTimelineItem(item), suspensions.contains(where: { $0.id == id }) else {
                return endSuspensions(where: { $0.id == id }, at: at, position: position, originator: ordered.originator, ordered: ordered)
            }
            // A proposed time moves the group there, whether it waited or not (scrubbing).
            let wasWaiting = isWaiting
            suspensions.removeAll { $0.id == id }
            reanchor(media: proposedTime, at: at)
            gatePlay(ordered, at: at)
            return wasWaiting && !isWaiting ? [.groupResumed(timeline, originator: ordered.originator)] : [changed(ordered)]
        case .departed(let participant):
            let gateEvents = stopWaiting(for: participant, ordered)
            participants.removeValue(forKey: participant)
            waiting.stalls.forget(participant)
            pruneGroupIdentities()
            let at = max(ordered.effectiveAt, timeline.anchorSessionTime)
            let position = timeline.mediaTime(atSessionTime: at)
            return gateEvents + endSuspensions(where: { $0.participant == participant }, at: at, position: position,
                                               originator: ordered.originator, ordered: ordered)
        case .state(let item, let identity, let ready):
            participants[ordered.originator] = ParticipantState(item: item, identity: identity, ready: ready)
            recordGroupIdentity(item: item, identity: identity)
            return adoptFirstReportedItem(item: item, identity: identity, order: ordered.order) + mismatchEvents()
                + releaseMismatched(ordered)
        case .prerolled(let version):
            return reportPrerolled(ordered, version: version)
        case .queue(let change):
            return applyQueue(change, at: at, ordered)
        case .pauseSnapping(let snaps):
            pauseSnapsToMediaTimeOfOriginator = snaps
            return [changed(ordered)]
        case .maximumHold(let cap):
            return setMaximumHold(cap, ordered, at: at)
        }
    }

    /// Every suspension stops holding the group (Apple's `playImmediately`: play "regardless of
    /// other participants' readiness or suspensions"); the suspensions stay, each ending when its
    /// participant ends it, and that participant's player then catches up.
    private mutating func releaseHoldingSuspensions() {
        for index in suspensions.indices { suspensions[index].holdsGroup = false }
    }

    /// Skips the ordered record `order` from `originator`, which is no proposal this core can
    /// apply (its body could not be read, say), as `apply(_:)` skips an invalid one: the version
    /// advances, nothing else changes, and the event says why. A replay changes nothing.
    public mutating func skip(order: UInt64, originator: UUID, rejection: ProposalRejection) -> [Event] {
        guard order > timeline.version else { return [] }
        timeline.version = order
        return [.proposalRejected(rejection, originator: originator, order: order)]
    }

    private mutating func endSuspensions(where matches: (Suspension) -> Bool, at: SessionInstant, position: ItemTime,
                                         originator: UUID, ordered: OrderedProposal) -> [Event] {
        let wasWaiting = isWaiting
        suspensions.removeAll(where: matches)
        guard wasWaiting, !isWaiting else { return [] }
        reanchor(media: position, at: at)
        gatePlay(ordered, at: at)
        return [.groupResumed(timeline, originator: originator)]
    }

    /// Whether a media time a proposal names in `item` (the item its originator saw current)
    /// belongs to the timeline's item: yes when they are the same, or when the proposal names no
    /// item (one made before proposals named it). An item's end between a request and its record
    /// makes them differ.
    func isTimelineItem(_ item: String?) -> Bool {
        item == nil || item == timeline.item
    }

    /// Re-anchors the timeline at session instant `at` on media time `media`, at the intended
    /// rate unless the group waits.
    mutating func reanchor(media: ItemTime, at: SessionInstant) {
        timeline.anchorMediaTime = media
        timeline.anchorSessionTime = at
        timeline.rate = isWaiting ? 0 : intendedRate
    }

    func changed(_ ordered: OrderedProposal) -> Event {
        .timelineChanged(timeline, originator: ordered.originator, proposal: ordered.proposal)
    }

    /// Participants on the current item whose content differs.
    func mismatchEvents() -> [Event] {
        guard let item = timeline.item else { return [] }
        var identities: [UUID: String] = [:]
        for (participant, state) in participants where state.item == item {
            if let identity = state.identity { identities[participant] = identity }
        }
        return Set(identities.values).count > 1 ? [.itemMismatch(item: item, identities: identities)] : []
    }
}
