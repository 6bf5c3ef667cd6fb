import Foundation
import TandemClock

/// Where the machine stands with snapshots: the late joiner's history assembly
/// (`HistoryAssembly`) and the publishing schedule (`SnapshotSchedule`), as the ordered stream
/// tells it. A pure value, part of `CoordinatorMachine`.
public struct SnapshotProgress: Sendable {
    /// Where the ordered stream stands for this participant.
    public enum Phase: Sendable, Equatable {
        /// No record yet.
        case starting
        /// Buffering the history (until `.endOfHistory`, then until a usable snapshot if the
        /// history was incomplete).
        case history
        /// Assembled: each record is applied as it comes.
        case live
    }

    /// Where the ordered stream stands.
    public internal(set) var phase = Phase.starting
    /// When snapshots are due.
    public var schedule = SnapshotSchedule()
    /// Ordered records a joiner starting from the last snapshot anyone published would apply:
    /// those ordered since the order it reflects (counting any ordered between that and the
    /// snapshot itself), other than snapshots since.
    public internal(set) var recordsSinceSnapshot = 0
    /// When the last snapshot was ordered (before the first one, the first record).
    public internal(set) var lastSnapshotAt: SessionInstant?
    /// Whether this participant published a snapshot that has not come back ordered yet.
    public var awaitingOwn: Bool { recordsSincePublished != nil }
    /// While this participant's snapshot has not come back ordered: the records counted since
    /// it was published.
    var recordsSincePublished: Int?
    /// How many records the assembled history held (what the relay kept for this joiner).
    public internal(set) var assembledHistoryRecords = 0
    /// Whether the channel marks the end of the history (set before the first record).
    var expectsHistoryEnd = false
    var historyEnded = false
    var reportedIncomplete = false
    var appliedAny = false
    /// After a snapshot that could not be sent: not again before this many records since the last.
    var retryAfterRecords: Int?
    var assembly = HistoryAssembly<OrderedInput>()
    /// The states applied lately, to check another's snapshot against once live.
    var applied = AppliedStates()
    /// How many snapshots of others this participant refused once live: not the state it
    /// applied up to the order they reflect, or not one it could check. They change nothing
    /// here, and do not count as the last snapshot toward publishing the next.
    public internal(set) var refusedLiveSnapshots = 0
    /// Who is present, as the channel knows it.
    var present: Set<UUID>?
    /// Who sent records, when the channel does not know who is present.
    var seen: Set<UUID> = []

    /// Progress at the start of a stream.
    public init() {}

    /// What the channel says: whether it marks the end of the history (taken before the first
    /// record only) and who is present.
    public mutating func noteChannel(expectsHistoryEnd: Bool, present: Set<UUID>?) {
        if phase == .starting { self.expectsHistoryEnd = expectsHistoryEnd }
        self.present = present
    }

    /// The schedule's bookkeeping for a record, whatever phase it arrives in, with `local` the
    /// participant that keeps it.
    ///
    /// The own snapshot in flight is awaited until it comes back; only then may the next be
    /// published, so that each participant has at most one in flight. Were another's snapshot
    /// to end the wait, a publisher behind the stream (one that has yet to read a run of
    /// snapshots, each ordered far after what it reflects) would answer each of them with one of
    /// its own, and several publishers would feed each other. Should its own never come back
    /// (refused by the relay on the way), the wait ends after ten intervals' worth of records.
    ///
    /// A snapshot that is not `trusted` (a live participant found it is not the state it applied)
    /// counts as a playback record does: a lying snapshot must not put off the next honest one.
    mutating func count(_ input: OrderedInput, local: UUID, trusted: Bool = true) {
        switch input {
        case .snapshot where !trusted:
            recordsSinceSnapshot += 1
            notePendingRecord()
        case .snapshot(let record):
            if record.originator == local { recordsSincePublished = nil }
            // A joiner starting from it applies what was ordered between the order it reflects and
            // its own: under a burst that is many records, and they count towards the next.
            recordsSinceSnapshot = record.order > record.reflecting ? Int(clamping: record.order - record.reflecting - 1) : 0
            lastSnapshotAt = record.orderedAt
            retryAfterRecords = nil
        case .proposal(let proposal):
            recordsSinceSnapshot += 1
            notePendingRecord()
            if lastSnapshotAt == nil { lastSnapshotAt = proposal.orderedAt }
            seen.insert(proposal.originator)
        case .unreadable(let originator, _, _):
            recordsSinceSnapshot += 1
            notePendingRecord()
            seen.insert(originator)
        case .placeholder:
            // Counted as a playback record is, whatever its header claimed: a flood of them brings
            // the next snapshot closer, so that the newest snapshot stays within the relay's caps.
            // Its sender is only the relay's word, so it does not join the publishers.
            recordsSinceSnapshot += 1
            notePendingRecord()
        case .other, .endOfHistory:
            // A record of another kind is kept by the relay whatever the snapshots say: it does
            // not bring the next one closer.
            break
        }
    }

    /// A record counted while the own snapshot is awaited: after ten intervals' worth, it is
    /// given up on.
    private mutating func notePendingRecord() {
        guard let counted = recordsSincePublished.map({ $0 + 1 }) else { return }
        recordsSincePublished = counted >= schedule.recordInterval.multipliedReportingOverflow(by: 10).partialValue ? nil : counted
    }
}

extension OrderedInput {
    /// The record's order number (nil for `.endOfHistory`).
    public var order: UInt64? {
        switch self {
        case .proposal(let proposal): proposal.order
        case .unreadable(_, let order, _): order
        case .other(_, let order), .placeholder(_, let order): order
        case .snapshot(let record): record.order
        case .endOfHistory: nil
        }
    }
}

extension CoordinatorMachine {
    /// Takes the next ordered record (the history first, then each new one) and returns what to
    /// do.
    ///
    /// Over a channel that marks the end of its history (a session's), the history is buffered
    /// and assembled at `.endOfHistory` (`HistoryAssembly`): the newest valid snapshot that the
    /// kept records continue is restored (validated as a proposal is:
    /// `CoordinationSnapshot.validated`), then the records after it are applied; an invalid one
    /// falls back to the older, and neither to the full history when it starts at order 1.
    /// Otherwise the state is incomplete: an event says so and the machine waits for a live
    /// snapshot it can start from. The player is then issued the resulting timeline once, a
    /// join lead ahead (`joinLead`), as any late joiner.
    ///
    /// Once assembled, each record is applied as it comes; a snapshot record changes nothing but
    /// the version (this participant has the state already). The participant with the lowest id
    /// among those present publishes a snapshot when `SnapshotSchedule` says one is due
    /// (`.publishSnapshot`), and only once its own history is assembled; should it not, the
    /// next lowest takes over after twice the interval (the k-th lowest after k + 1).
    public mutating func onOrdered(_ input: OrderedInput, now: HostInstant) -> [OrderedDirective] {
        snapshots.count(input, local: localParticipant, trusted: trustsLive(input))
        if snapshots.phase == .starting {
            if case .endOfHistory = input {
                // Nothing came before the end: an empty history, or one still to come.
                snapshots.historyEnded = true
                return []
            }
            snapshots.phase = snapshots.expectsHistoryEnd && !(snapshots.historyEnded && input.order == 1) ? .history : .live
        }
        switch snapshots.phase {
        case .starting, .history:
            if case .endOfHistory = input {
                snapshots.historyEnded = true
                return assembleHistory(now: now)
            }
            return buffer(input, now: now)
        case .live:
            if case .endOfHistory = input { return [] }
            if snapshots.expectsHistoryEnd, !snapshots.appliedAny, core.timeline.version == 0, (input.order ?? 0) > 1 {
                // The history came after the end was marked (the session joined later): assemble
                // it at each snapshot.
                snapshots.phase = .history
                snapshots.historyEnded = true
                return buffer(input, now: now)
            }
            return applyLive(input, now: now) + publishIfDue(now: now)
        }
    }

    /// Whether a live participant takes `input`, when it is another's snapshot, as the last
    /// snapshot: only when it is the state this participant applied up to the order it reflects
    /// (`AppliedStates`); one that differs, or that cannot be checked, is refused (counted in
    /// `refusedLiveSnapshots`). Anything else, and anything before the history is assembled,
    /// is taken as it comes (the assembly validates a joiner's snapshots).
    private mutating func trustsLive(_ input: OrderedInput) -> Bool {
        guard case .snapshot(let record) = input, snapshots.phase == .live, record.originator != localParticipant,
              core.timeline.version > 0 else { return true }
        let verdict: AppliedStates.Verdict = switch CoordinationSnapshot.validated(
            record.body, reflecting: record.reflecting, orderedAt: record.orderedAt,
            pauseSnapsToMediaTimeOfOriginator: core.pauseSnapsToMediaTimeOfOriginator) {
        case .success(let snapshot):
            snapshots.applied.verdict(of: snapshot.core, reflecting: record.reflecting, orderedAt: record.orderedAt,
                                      current: core.timeline.version)
        case .failure:
            .differs
        }
        guard verdict == .matches else {
            snapshots.refusedLiveSnapshots += 1
            return false
        }
        return true
    }

    /// A snapshot of the state, when one is due from this participant now (and it is then
    /// awaited back); nil otherwise.
    mutating func snapshotDue(now: HostInstant) -> CoordinationSnapshot? {
        guard snapshots.phase == .live, core.timeline.version > 0 else { return nil }
        // Not again before it comes back ordered: a snapshot must reflect at least the order of
        // the one before it, or the relay's dropping of that one leaves a gap (`HistoryAssembly`).
        if snapshots.awaitingOwn { return nil }
        if let retry = snapshots.retryAfterRecords, snapshots.recordsSinceSnapshot < retry { return nil }
        let present = (snapshots.present ?? snapshots.seen.union(core.participants.keys)).union([localParticipant])
        let sessionNow = mapping?.sessionTime(atHost: now) ?? snapshots.lastSnapshotAt ?? .zero
        // The lowest id publishes; should it not (a participant without a coordinator, a raw
        // client), the next takes over once twice the interval passed with none, and so on:
        // the k-th lowest after k + 1 intervals.
        let rank = present.filter { SnapshotSchedule.precedes($0, localParticipant) }.count
        let schedule = rank == 0 ? snapshots.schedule
            : SnapshotSchedule(recordInterval: snapshots.schedule.recordInterval.multipliedReportingOverflow(by: rank + 1).partialValue,
                               timeInterval: snapshots.schedule.timeInterval * Double(rank + 1))
        guard schedule.shouldPublish(localParticipant: localParticipant, presentParticipants: [localParticipant],
                                     recordsSinceSnapshot: snapshots.recordsSinceSnapshot,
                                     lastSnapshotAt: snapshots.lastSnapshotAt ?? sessionNow, now: sessionNow) else { return nil }
        let snapshot = CoordinationSnapshot(core: core)
        snapshots.recordsSincePublished = 0
        return snapshot
    }

    /// Why a snapshot this participant published could not be sent.
    public enum SnapshotNotSent: Sendable, Equatable {
        /// Over the size a snapshot may take: the state will not shrink soon, so the next try
        /// is an interval later (`recordInterval` more records).
        case tooLarge
        /// Refused on the way out for now (the link's queue full, the session reconnecting):
        /// tried again a tenth of an interval later, so that one refusal does not leave
        /// joiners a whole interval more to replay.
        case refused
    }

    /// The snapshot this participant published could not be sent, for `reason`: the next one may
    /// be published after `recordInterval` more records when it was too large, a tenth of that
    /// when it was refused for now.
    public mutating func onSnapshotNotPublished(_ reason: SnapshotNotSent) {
        snapshots.recordsSincePublished = nil
        let interval = snapshots.schedule.recordInterval
        snapshots.retryAfterRecords = snapshots.recordsSinceSnapshot + (reason == .tooLarge ? interval : max(1, interval / 10))
    }

    private mutating func publishIfDue(now: HostInstant) -> [OrderedDirective] {
        snapshotDue(now: now).map { [.publishSnapshot($0)] } ?? []
    }

    private mutating func applyLive(_ input: OrderedInput, now: HostInstant) -> [OrderedDirective] {
        switch input {
        case .snapshot(let record):
            // The state is here already: only the version moves, as for any record.
            _ = core.skip(order: record.order, originator: record.originator, rejection: ProposalRejection(.unreadable, "a snapshot"))
            return []
        case .other(let originator, let order), .placeholder(let originator, let order):
            // Silently: only the version moves, as for any record, and the player is not told.
            _ = core.skip(order: order, originator: originator, rejection: ProposalRejection(.unreadable, "a record of another kind"))
            return []
        case .endOfHistory:
            return []
        case .proposal, .unreadable:
            snapshots.appliedAny = true
            return applyOrdered(input, now: now)
        }
    }

    private mutating func buffer(_ input: OrderedInput, now: HostInstant) -> [OrderedDirective] {
        guard let order = input.order else { return [] }
        let retention: HistoryAssembly<OrderedInput>.Retention = switch input {
        case .snapshot(let record): .snapshot(reflecting: record.reflecting)
        // A placeholder counts its order and changes nothing: never a snapshot to start from.
        case .other, .placeholder: .other
        case .proposal, .unreadable, .endOfHistory: .playback
        }
        _ = snapshots.assembly.receive(.init(order: order, retention: retention, payload: input))
        guard snapshots.historyEnded, case .snapshot = input else { return [] }
        return assembleHistory(now: now)
    }

    /// Assembles what was buffered; once assembled, the player is issued the resulting timeline
    /// once (what the records issued on the way is superseded before it is carried out).
    private mutating func assembleHistory(now: HostInstant) -> [OrderedDirective] {
        var chosen: [UInt64: CoordinationSnapshot] = [:]
        var refused: [UInt64: ProposalRejection] = [:]
        // The group's setting comes with the snapshot: a joiner takes it whatever it started with.
        let pauseSnaps: Bool? = nil
        let held = snapshots.assembly.buffered.count
        let outcome = snapshots.assembly.assemble { payload in
            guard case .snapshot(let record) = payload else { return false }
            switch CoordinationSnapshot.validated(record.body, reflecting: record.reflecting, orderedAt: record.orderedAt,
                                                  pauseSnapsToMediaTimeOfOriginator: pauseSnaps) {
            case .success(let snapshot):
                chosen[record.order] = snapshot
                return true
            case .failure(let rejection):
                refused[record.order] = rejection
                return false
            }
        }
        func notes(_ skipped: [HistoryAssembly<OrderedInput>.SkippedSnapshot]) -> [OrderedDirective] {
            skipped.map { skip in
                let reason = switch skip.refusal {
                case .malformed: "it reflects an order not below its own"
                case .gap(let missing): "orders \(missing.lowerBound)…\(missing.upperBound) after it are missing"
                case .invalid: refused[skip.order].map { "invalid: \($0)" } ?? "invalid"
                }
                return .emit(.snapshotHistory(.skipped(order: skip.order, reflecting: skip.reflecting, reason: reason)))
            }
        }
        switch outcome {
        case .incomplete(let missing, let skipped):
            var out = notes(skipped)
            if !snapshots.reportedIncomplete {
                snapshots.reportedIncomplete = true
                out.append(.emit(.snapshotHistory(.incomplete(missing: missing))))
            }
            return out
        case .assembled(let plan):
            snapshots.assembledHistoryRecords = held
            snapshots.phase = .live
            var out = notes(plan.skippedSnapshots)
            for instruction in plan.instructions {
                switch instruction {
                case .applySnapshot(let record):
                    guard case .snapshot(let snapshot) = record.payload, let state = chosen[snapshot.order] else { continue }
                    core = state.core
                    snapshots.applied.note(core)
                    out.append(.emit(.snapshotHistory(.restored(order: snapshot.order, reflecting: snapshot.reflecting))))
                case .apply(let record):
                    // Only what the program is told: the player is issued the outcome below.
                    out += applyLive(record.payload, now: now).filter { if case .emit = $0 { true } else { false } }
                }
            }
            if plan.lastOrder > core.timeline.version {
                // The history ended on a snapshot (or another skipped record): the version moves to it.
                _ = core.skip(order: plan.lastOrder, originator: localParticipant, rejection: ProposalRejection(.unreadable, "a snapshot"))
            }
            guard plan.lastOrder > 0 else { return out }
            snapshots.appliedAny = true
            out += follow(from: nil, originator: nil, lead: configuration.joinLead, now: now).compactMap {
                switch $0 {
                case .issue(let issued): .issue(issued)
                case .wake(let instant): .wake(at: instant)
                case .abandon, .emit, .propose: nil
                }
            }
            return out + publishIfDue(now: now)
        }
    }
}
