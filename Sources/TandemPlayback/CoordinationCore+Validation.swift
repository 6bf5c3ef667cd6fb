import TandemClock
import Foundation

/// Validation: a pure function of an ordered proposal and the core's state, so that every
/// participant, fed the same ordered proposals, skips exactly the same ones.
///
/// A proposal is valid when its rate is 0 or within `playableRates`; its media times are within
/// 0 and the item's duration (the longest one announced in a `state` proposal's content
/// identity, `d=SECONDS;…` as `MediaIdentity` makes it, for that item; 0 to
/// `defaultItemDuration` when none is announced); its effective instant is within
/// `maximumLead` after its ordering instant; its strings are within their bounds; and the
/// suspensions and participants it would add stay within theirs. Everything a peer or the relay
/// can choose is bounded here, so that the timeline's arithmetic (which saturates besides) never
/// meets an extreme value.
extension CoordinationCore {
    /// The rates other than 0 (paused) that a proposal may ask for.
    public static let playableRates: ClosedRange<Double> = 0.25...4
    /// An item's duration when no participant announced one: 24 hours.
    public static let defaultItemDuration = TimeSpan(nanoseconds: 24 * 3_600 * 1_000_000_000)
    /// The longest duration an identity may announce: 366 days. A longer one is not
    /// believed, and the item's duration is taken from the others (or the default).
    public static let maximumAnnouncedDuration = TimeSpan(nanoseconds: 366 * 24 * 3_600 * 1_000_000_000)
    /// How long after its ordering instant a proposal may take effect: 2 s. The relay's
    /// lead is at most 1 s (`RelayCoreConfiguration.maximumLead`).
    public static let maximumLead = TimeSpan(nanoseconds: 2_000_000_000)
    /// The longest body (bytes) read as a proposal.
    public static let maximumProposalBytes = 16 * 1024
    /// The longest item identifier (UTF-8 bytes).
    public static let maximumItemBytes = 1024
    /// The longest content identity (UTF-8 bytes).
    public static let maximumIdentityBytes = 256
    /// The longest suspension reason (UTF-8 bytes).
    public static let maximumReasonBytes = 128
    /// How many suspensions the group may hold at once.
    public static let maximumSuspensions = 256
    /// How many suspensions one participant may hold at once.
    public static let maximumSuspensionsPerParticipant = 16
    /// The largest waiting limit a suspension may carry.
    public static let maximumWaitingLimit = 10_000
    /// How many participants' loaded items the core keeps.
    public static let maximumParticipants = 1024

    /// Why `ordered` must be skipped, or nil when it may be applied.
    public func rejection(of ordered: OrderedProposal) -> ProposalRejection? {
        instantRejection(of: ordered) ?? rejection(of: ordered.proposal, from: ordered.originator)
    }

    /// Why `ordered`'s instants must be refused (its effective instant not within `maximumLead`
    /// after its ordering instant), or nil.
    func instantRejection(of ordered: OrderedProposal) -> ProposalRejection? {
        let (lead, overflow) = ordered.effectiveAt.nanoseconds.subtractingReportingOverflow(ordered.orderedAt.nanoseconds)
        guard !overflow, (0...Self.maximumLead.nanoseconds).contains(lead) else {
            return ProposalRejection(.effectiveInstantOutOfRange,
                                     "effective instant \(ordered.effectiveAt.nanoseconds) ns is not within "
                                         + "\(Self.maximumLead.nanoseconds / 1_000_000) ms "
                                         + "after its ordering instant \(ordered.orderedAt.nanoseconds) ns")
        }
        return nil
    }

    /// Why `proposal` from `originator` must be skipped, or nil when it may be applied; the
    /// checks on its values alone, without its instants.
    public func rejection(of proposal: PlaybackProposal, from originator: UUID) -> ProposalRejection? {
        switch proposal {
        case .setRate(let rate), .setRateImmediately(let rate):
            return Self.rateRejection(rate)
        case .pause(let seen, let item):
            // A position in an item the group has left is not used, so it is not checked.
            guard isTimelineItem(item) else { return nil }
            return seen.flatMap { mediaTimeRejection($0, item: timeline.item, "pause at") }
        case .seek(let target, let item), .seekImmediately(let target, let item):
            if !isTimelineItem(item), itemChosenBy != originator {
                return ProposalRejection(.otherItem, "a seek in \(item ?? "") while the group is on \(timeline.item ?? "no item")")
            }
            return mediaTimeRejection(target, item: timeline.item, "seek to")
        case .transition(let item, let start):
            if item.isEmpty || item.utf8.count > Self.maximumItemBytes {
                return ProposalRejection(.oversized, "an item identifier must have 1 to \(Self.maximumItemBytes) bytes, not \(item.utf8.count)")
            }
            return mediaTimeRejection(start, item: item, "start at")
        case .beginSuspension(_, let reason, _, let limit):
            if reason.rawValue.utf8.count > Self.maximumReasonBytes {
                return ProposalRejection(.oversized, "a suspension reason must have at most \(Self.maximumReasonBytes) bytes, "
                                             + "not \(reason.rawValue.utf8.count)")
            }
            if let limit, !(0...Self.maximumWaitingLimit).contains(limit) {
                return ProposalRejection(.waitingLimitOutOfRange, "waiting limit \(limit) is not within 0…\(Self.maximumWaitingLimit)")
            }
            if suspensions.count >= Self.maximumSuspensions {
                return ProposalRejection(.tooManySuspensions, "the group holds \(suspensions.count) suspensions already")
            }
            if suspensions.filter({ $0.participant == originator }).count >= Self.maximumSuspensionsPerParticipant {
                return ProposalRejection(.tooManySuspensions,
                                         "a participant may hold at most \(Self.maximumSuspensionsPerParticipant) suspensions at once")
            }
            return nil
        case .endSuspension(_, let proposedTime, let item):
            guard isTimelineItem(item) else { return nil }
            return proposedTime.flatMap { mediaTimeRejection($0, item: timeline.item, "resume at") }
        case .state(let item, let identity, _):
            if let item, item.utf8.count > Self.maximumItemBytes {
                return ProposalRejection(.oversized, "an item identifier must have at most \(Self.maximumItemBytes) bytes, not \(item.utf8.count)")
            }
            if let identity, identity.utf8.count > Self.maximumIdentityBytes {
                return ProposalRejection(.oversized, "a content identity must have at most \(Self.maximumIdentityBytes) bytes, "
                                             + "not \(identity.utf8.count)")
            }
            if participants[originator] == nil, participants.count >= Self.maximumParticipants {
                return ProposalRejection(.tooManyParticipants, "the group keeps what at most \(Self.maximumParticipants) participants loaded")
            }
            return nil
        case .departed, .prerolled, .pauseSnapping:
            return nil
        case .maximumHold(let cap):
            return Self.maximumHoldRejection(cap)
        case .queue(let change):
            return queueRejection(of: change)
        }
    }

    /// The media times a proposal may name in `item`: 0 to its duration as announced (the
    /// longest announcement believed), or to `defaultItemDuration` when none is.
    public func mediaTimeRange(ofItem item: String?) -> ClosedRange<ItemTime> {
        let announced = participants.values.compactMap { state -> TimeSpan? in
            guard let item, state.item == item, let identity = state.identity else { return nil }
            return Self.announcedDuration(in: identity)
        }
        return ItemTime.zero...(ItemTime.zero + (announced.max() ?? Self.defaultItemDuration))
    }

    /// The duration (ns) a content identity announces (`d=SECONDS` among its `;`-separated
    /// fields), or nil when it announces none that can be believed: missing, not a finite
    /// positive number (a file of unknown duration announces `d=0.000`), or longer than
    /// `maximumAnnouncedDuration`.
    public static func announcedDuration(in identity: String) -> TimeSpan? {
        for field in identity.split(separator: ";") where field.hasPrefix("d=") {
            guard let seconds = Double(field.dropFirst(2)), seconds.isFinite, seconds > 0,
                  seconds <= maximumAnnouncedDuration.seconds else { return nil }
            return .seconds(seconds)
        }
        return nil
    }

    /// Why `rate` cannot be proposed, or nil when it can: 0, or finite within `playableRates`.
    public static func rateRejection(_ rate: Double) -> ProposalRejection? {
        func number(_ value: Double) -> String { String(format: "%g", value) }
        guard rate.isFinite else { return ProposalRejection(.notFinite, "rate \(number(rate)) is not a finite number") }
        guard rate == 0 || playableRates.contains(rate) else {
            return ProposalRejection(.rateOutOfRange,
                                     "rate \(number(rate)) is not 0 or within \(number(playableRates.lowerBound))…\(number(playableRates.upperBound))")
        }
        return nil
    }

    private func mediaTimeRejection(_ time: ItemTime, item: String?, _ what: String) -> ProposalRejection? {
        let range = mediaTimeRange(ofItem: item)
        guard !range.contains(time) else { return nil }
        func seconds(_ time: ItemTime) -> String { String(format: "%.3f s", Double(time.nanoseconds) / 1e9) }
        return ProposalRejection(.mediaTimeOutOfRange,
                                 "\(what) \(seconds(time)) is not within 0 and the item's duration, \(seconds(range.upperBound))")
    }
}
