import Foundation
import TandemClock

/// A snapshot of the coordination state: the replicated `CoordinationCore` as it stood after the
/// ordered record it reflects (`reflecting`, the core's version), published into the ordered
/// stream so that the relay can drop the playback records it covers and a late joiner can start
/// from it.
///
/// It is the core's own `Codable` form (synthesized from its stored state in one place:
/// a field the core gains is in the snapshot without another line), in a versioned envelope.
/// A joiner validates it as it validates a proposal (`rejection(reflecting:orderedAt:…)`):
/// every field within the bounds `CoordinationCore+Validation` applies, so that a peer or a
/// relay can hand a joiner no state that the proposals could not have produced.
public struct CoordinationSnapshot: Sendable, Codable, Equatable {
    /// The envelope's format: 1.
    public static let currentFormat = 1
    /// The longest snapshot body (bytes) published or read: 192 KiB, well under the relay's
    /// body limit (`RelayLimits.maximumMessageBody`, 257 KiB, which also holds the sealing).
    /// A state too large for it is not published (the relay then keeps the records since the
    /// last snapshot, under its caps).
    public static let maximumBytes = 192 * 1024
    /// The cap on a snapshot's part other than its queue (`nonQueueBytes(ofBody:)`): what a snapshot
    /// whose queue is full (`CoordinationCore.maximumQueueBytes`, counted as encoded) leaves of
    /// `maximumBytes`, 32 KiB: the timeline, the gate, the stall record, the group's identities
    /// and about 150 participants with ordinary names. A state whose rest is larger (hundreds of
    /// participants, or names at their longest) is not published (`CoordinationChannel`), and a
    /// snapshot over it is refused on receipt (`validated(_:reflecting:orderedAt:…)`), whatever
    /// its queue: the relay then keeps the records since the last snapshot, under its caps.
    public static let restBytes = maximumBytes - CoordinationCore.maximumQueueBytes
    /// The furthest media time a snapshot's anchor may be at: twice the longest announced
    /// duration (a timeline plays on past its item's end until someone pauses).
    public static let maximumAnchorMediaTime = ItemTime.zero + CoordinationCore.maximumAnnouncedDuration * 2

    /// The envelope's format (`currentFormat`).
    public var format: Int
    /// The state.
    public var core: CoordinationCore

    /// A snapshot of `core`.
    public init(core: CoordinationCore) {
        format = Self.currentFormat
        self.core = core
    }

    /// The order of the last record the snapshot reflects: the core's version.
    public var reflecting: UInt64 { core.timeline.version }

    /// The bytes of this snapshot's body of `count` bytes that are not its queue's: the body less
    /// what the queue's entries count against `CoordinationCore.maximumQueueBytes` (at least what
    /// they take encoded, `CoordinationCore.queueBytes(of:)`). At most `restBytes` to be published
    /// or started from.
    public func nonQueueBytes(ofBody count: Int) -> Int { count - core.queueBytes }

    /// Why a snapshot whose body has `count` bytes is too large to publish or start from: over
    /// `maximumBytes` as a whole, or over `restBytes` outside its queue; nil when it is not.
    public func sizeRejection(ofBody count: Int) -> ProposalRejection? {
        guard count <= Self.maximumBytes else {
            return ProposalRejection(.oversized, "a snapshot of \(count) bytes is over \(Self.maximumBytes)")
        }
        let rest = nonQueueBytes(ofBody: count)
        guard rest <= Self.restBytes else {
            return ProposalRejection(.oversized, "a snapshot's state outside its queue takes \(rest) bytes, over \(Self.restBytes)")
        }
        return nil
    }

    /// The body to publish (JSON).
    public func encoded() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Array(try encoder.encode(self))
    }

    /// The snapshot a body carries, published as reflecting `reflecting` and ordered at
    /// `orderedAt`, validated for a core whose pauses snap as `pauseSnapsToMediaTimeOfOriginator`
    /// (nil: either); or why it cannot be started from.
    public static func validated(_ body: [UInt8], reflecting: UInt64, orderedAt: SessionInstant,
                                 pauseSnapsToMediaTimeOfOriginator: Bool?) -> Result<CoordinationSnapshot, ProposalRejection> {
        guard body.count <= maximumBytes else {
            return .failure(ProposalRejection(.oversized, "a snapshot of \(body.count) bytes is over \(maximumBytes)"))
        }
        guard let snapshot = try? JSONDecoder().decode(CoordinationSnapshot.self, from: Data(body)) else {
            return .failure(ProposalRejection(.unreadable, "a body of \(body.count) bytes is no snapshot this version understands"))
        }
        // The fields' own bounds first (the more telling reason), then the cap on the rest.
        if let rejection = snapshot.rejection(reflecting: reflecting, orderedAt: orderedAt,
                                              pauseSnapsToMediaTimeOfOriginator: pauseSnapsToMediaTimeOfOriginator)
            ?? snapshot.sizeRejection(ofBody: body.count) {
            return .failure(rejection)
        }
        return .success(snapshot)
    }

    /// Why this snapshot, published as reflecting `reflecting` and ordered at `orderedAt`, cannot
    /// be started from by a core whose pauses snap as `pauseSnapsToMediaTimeOfOriginator` (nil:
    /// either, as for a joiner, which takes the group's setting from the snapshot), or nil when
    /// it can. The bounds are the proposals' (`CoordinationCore+Validation`).
    public func rejection(reflecting: UInt64, orderedAt: SessionInstant,
                          pauseSnapsToMediaTimeOfOriginator: Bool?) -> ProposalRejection? {
        typealias Core = CoordinationCore
        guard format == Self.currentFormat else {
            return ProposalRejection(.unreadable, "snapshot format \(format) is not \(Self.currentFormat)")
        }
        let timeline = core.timeline
        guard timeline.version == reflecting else {
            return ProposalRejection(.unreadable, "a snapshot at version \(timeline.version) is published as reflecting \(reflecting)")
        }
        guard pauseSnapsToMediaTimeOfOriginator.map({ $0 == core.pauseSnapsToMediaTimeOfOriginator }) ?? true else {
            return ProposalRejection(.unreadable, "a snapshot whose pauses snap otherwise than this participant's")
        }
        if let item = timeline.item, item.isEmpty || item.utf8.count > Core.maximumItemBytes {
            return ProposalRejection(.oversized, "an item identifier must have 1 to \(Core.maximumItemBytes) bytes, not \(item.utf8.count)")
        }
        if let rejection = Core.rateRejection(core.intendedRate) ?? Core.rateRejection(timeline.rate) { return rejection }
        guard timeline.rate == 0 || timeline.rate == core.intendedRate else {
            return ProposalRejection(.rateOutOfRange, "the timeline's rate \(timeline.rate) is neither 0 nor the intended \(core.intendedRate)")
        }
        guard (ItemTime.zero...Self.maximumAnchorMediaTime).contains(timeline.anchorMediaTime) else {
            return ProposalRejection(.mediaTimeOutOfRange, "anchor media time \(timeline.anchorMediaTime.nanoseconds) ns is out of range")
        }
        guard timeline.anchorSessionTime <= orderedAt + Core.maximumLead else {
            return ProposalRejection(.effectiveInstantOutOfRange,
                                     "anchor instant \(timeline.anchorSessionTime.nanoseconds) ns is after the snapshot's ordering "
                                         + "instant \(orderedAt.nanoseconds) ns and its lead")
        }
        if let rejection = suspensionsRejection() ?? participantsRejection() ?? queueRejection() ?? waitingRejection()
            ?? holdsRejection(orderedAt: orderedAt) {
            return rejection
        }
        return nil
    }

    /// The waiting state as the records could have left it, each collection within the
    /// participants' bound: a gate waiting for and recording at most `maximumParticipants`; the
    /// stall policy every core uses (`StallPolicy()`: a snapshot must not change whose stalls hold
    /// the group), keeping at most `limit` instants for each of at most `maximumParticipants`;
    /// at most one group identity per participant and one for the timeline's item, each within
    /// the proposals' string bounds.
    private func waitingRejection() -> ProposalRejection? {
        typealias Core = CoordinationCore
        let waiting = core.waiting
        if let gate = waiting.gate, gate.expected.count > Core.maximumParticipants || gate.reports.count > Core.maximumParticipants {
            return ProposalRejection(.tooManyParticipants, "a snapshot's pre-roll gate names more than \(Core.maximumParticipants) participants")
        }
        let policy = StallPolicy()
        guard waiting.stalls.limit == policy.limit, waiting.stalls.window == policy.window else {
            return ProposalRejection(.unreadable, "a snapshot's stall policy is not every participant's")
        }
        guard waiting.stalls.stalls.count <= Core.maximumParticipants,
              waiting.stalls.stalls.values.allSatisfy({ $0.count <= policy.limit }) else {
            return ProposalRejection(.tooManyParticipants, "a snapshot's stall record is over \(Core.maximumParticipants) participants "
                                         + "or \(policy.limit) stalls each")
        }
        guard waiting.groupIdentities.count <= Core.maximumParticipants + 1 else {
            return ProposalRejection(.tooManyParticipants, "a snapshot keeps \(waiting.groupIdentities.count) group identities, "
                                         + "over \(Core.maximumParticipants + 1)")
        }
        for (item, identity) in waiting.groupIdentities
        where item.utf8.count > Core.maximumItemBytes || identity.utf8.count > Core.maximumIdentityBytes {
            return ProposalRejection(.oversized, "a snapshot's group identity of \(identity.utf8.count) bytes for an item identifier of "
                                         + "\(item.utf8.count) bytes is over \(Core.maximumIdentityBytes) or \(Core.maximumItemBytes)")
        }
        return nil
    }

    /// The queue as any change could have left it: consistent (`PlaybackQueue.inconsistency()`),
    /// within its byte budget, and naming the timeline's item as its current entry.
    private func queueRejection() -> ProposalRejection? {
        if let rejection = core.queue.inconsistency() { return rejection }
        guard core.queueBytes <= CoordinationCore.maximumQueueBytes else {
            return ProposalRejection(.tooManyEntries, "a snapshot's queue takes \(core.queueBytes) bytes, more than \(CoordinationCore.maximumQueueBytes)")
        }
        if let current = core.queue.current, current.identifier != core.timeline.item {
            return ProposalRejection(.unreadable, "a snapshot's timeline is not on its queue's current entry")
        }
        return nil
    }

    private func suspensionsRejection() -> ProposalRejection? {
        typealias Core = CoordinationCore
        let suspensions = core.suspensions
        guard suspensions.count <= Core.maximumSuspensions else {
            return ProposalRejection(.tooManySuspensions, "a snapshot holds \(suspensions.count) suspensions, over \(Core.maximumSuspensions)")
        }
        guard Set(suspensions.map(\.id)).count == suspensions.count else {
            return ProposalRejection(.unreadable, "a snapshot holds a suspension twice")
        }
        var perParticipant: [UUID: Int] = [:]
        for suspension in suspensions {
            if suspension.reason.rawValue.utf8.count > Core.maximumReasonBytes {
                return ProposalRejection(.oversized, "a suspension reason must have at most \(Core.maximumReasonBytes) bytes")
            }
            perParticipant[suspension.participant, default: 0] += 1
            if perParticipant[suspension.participant, default: 0] > Core.maximumSuspensionsPerParticipant {
                return ProposalRejection(.tooManySuspensions,
                                         "a participant may hold at most \(Core.maximumSuspensionsPerParticipant) suspensions at once")
            }
        }
        return nil
    }

    private func participantsRejection() -> ProposalRejection? {
        typealias Core = CoordinationCore
        guard core.participants.count <= Core.maximumParticipants else {
            return ProposalRejection(.tooManyParticipants, "a snapshot keeps \(core.participants.count) participants, over \(Core.maximumParticipants)")
        }
        for state in core.participants.values {
            if let item = state.item, item.utf8.count > Core.maximumItemBytes {
                return ProposalRejection(.oversized, "an item identifier must have at most \(Core.maximumItemBytes) bytes, not \(item.utf8.count)")
            }
            if let identity = state.identity, identity.utf8.count > Core.maximumIdentityBytes {
                return ProposalRejection(.oversized, "a content identity must have at most \(Core.maximumIdentityBytes) bytes, "
                                             + "not \(identity.utf8.count)")
            }
        }
        return nil
    }
}

/// A snapshot record as delivered: who published it, where it stands in the order, and its body
/// (still to be validated).
public struct SnapshotRecord: Sendable, Equatable {
    /// Who published it.
    public var originator: UUID
    /// Its own order number.
    public var order: UInt64
    /// When the relay ordered it.
    public var orderedAt: SessionInstant
    /// The order of the last record it reflects, as its (signed) header says.
    public var reflecting: UInt64
    /// The body.
    public var body: [UInt8]

    /// A snapshot record.
    public init(originator: UUID, order: UInt64, orderedAt: SessionInstant, reflecting: UInt64, body: [UInt8]) {
        self.originator = originator
        self.order = order
        self.orderedAt = orderedAt
        self.reflecting = reflecting
        self.body = body
    }
}

/// How a participant's history was assembled from snapshots, for programs to show.
public enum SnapshotHistoryNote: Sendable, Equatable {
    /// The state was restored from the snapshot ordered `order`, reflecting `reflecting`; the
    /// records after it were applied.
    case restored(order: UInt64, reflecting: UInt64)
    /// The snapshot ordered `order` (claiming to reflect `reflecting`) was not started from:
    /// `reason` says why (malformed, a gap after it, or invalid and the rejection).
    case skipped(order: UInt64, reflecting: UInt64, reason: String)
    /// No snapshot could be started from and the history does not start at order 1: these
    /// orders are missing, and the state is incomplete (the coordinator keeps waiting for a
    /// snapshot it can start from).
    case incomplete(missing: ClosedRange<UInt64>)
}
