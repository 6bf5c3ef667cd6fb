import Foundation
import TandemClock

/// The end of an item, as the machine carries it out: no proposal, the same instant on every
/// participant (`CoordinationCore.settle(at:)`), and the next item pre-rolled.
///
/// The machine wakes itself `itemEndLead` before the current item's end instant
/// (`nextWake()`), and from then on decides on the group as it will be after the end
/// (`CoordinationCore.settled(at:)`), without changing the replicated core (which settles the
/// end only at the next record, at that record's effective instant, as everyone does): the
/// player is issued a seek command for the next item at item time 0, with
/// `expectedCurrentItemIdentifier` the next item and `shouldBufferInAnticipationOfPlayback` set,
/// so that it prepares it, then the play at the end instant's host time, so that the next item's
/// first frame is as tightly on time as any other. At the end of the last item (or with
/// `ActionAtItemEnd.pause`) it is issued a pause at the end instant on the last frame.
extension CoordinatorMachine {
    /// How long before an item's end the player is issued the next item (its pre-roll): 1 s.
    public static let itemEndLead = TimeSpan.seconds(1)

    /// The timeline the last play or pause command carried out, or nil.
    var lastCommandTimeline: SharedTimeline? {
        switch lastCommand {
        case .play(let play): play.timeline
        case .pause(let pause): pause.timeline
        case .seek, .buffer, nil: nil
        }
    }

    /// At a tick: when an item's end is due within `itemEndLead`, puts the core as it will be
    /// after the end in place for the rest of the tick (`onTick` restores the replicated core)
    /// and, unless the player already follows it, issues the player that timeline.
    mutating func enterItemEndView(now: HostInstant) -> [TickDirective] {
        guard let mapping else { return [] }
        let announced = announceItemEnds(at: mapping.sessionTime(atHost: now))
        guard let view = itemEndViewAhead(now: now) else {
            if ownSuspensions.isEmpty { itemEndView = nil }
            return announced
        }
        let previous = lastCommandTimeline ?? core.timeline
        itemEndView = view
        core = view
        guard previous != view.timeline else { return announced }
        return announced + follow(from: previous, originator: nil, lead: configuration.prerollLead, now: now).compactMap {
            switch $0 {
            case .issue(let issued): .issue(issued)
            // The tick adds its own wake-up at its end.
            case .wake: nil
            case .abandon, .emit, .propose: preconditionFailure("not from follow")
            }
        }
    }

    /// The group as it will be after an item's end due within `itemEndLead` of `now`, when that
    /// differs from the replicated core; nil otherwise, or while this participant is suspended.
    func itemEndViewAhead(now: HostInstant) -> CoordinationCore? {
        guard let mapping, ownSuspensions.isEmpty else { return nil }
        let view = core.settled(at: mapping.sessionTime(atHost: now) + Self.itemEndLead)
        guard view.timeline != core.timeline || view.queue != core.queue || view.suspensions != core.suspensions else { return nil }
        return view
    }

    /// The host instant `itemEndLead` before the current item's end (on the group as the machine
    /// last decided on it), or nil when no end is ahead.
    func itemEndWake() -> HostInstant? {
        guard let mapping else { return nil }
        var wakes: [HostInstant] = []
        if ownSuspensions.isEmpty, let end = (itemEndView ?? core).currentItemEndInstant {
            wakes.append(mapping.hostTime(atSession: end - Self.itemEndLead))
        }
        if let announcement = itemEndAnnouncement { wakes.append(mapping.hostTime(atSession: announcement)) }
        return wakes.min()
    }

    /// Tells the program of the ends of items due by `present` (session time) that the replicated
    /// core will settle at its next record: an `.itemEnded` event once each, at its instant (the
    /// machine wakes for it), not a second time when the record settles it (`unannounced(_:)`).
    mutating func announceItemEnds(at present: SessionInstant) -> [TickDirective] {
        var settling = core
        let due = settling.settle(at: present)
        itemEndAnnouncement = [settling.currentItemEndInstant, settling.nextHoldExpiry].compactMap { $0 }.min()
        var out: [TickDirective] = []
        for event in due {
            if case .holdExpired(_, let suspension, _, _) = event, !announcedHoldReleases.contains(suspension.id) {
                announcedHoldReleases.append(suspension.id)
                out.append(.emit(event))
            }
            guard case .itemEnded(let timeline, _, _) = event, !announcedItemEnds.contains(timeline) else { continue }
            announcedItemEnds.append(timeline)
            out.append(.emit(event))
        }
        if announcedHoldReleases.count > Self.announcedItemEndLimit {
            announcedHoldReleases.removeFirst(announcedHoldReleases.count - Self.announcedItemEndLimit)
        }
        if announcedItemEnds.count > Self.announcedItemEndLimit { announcedItemEnds.removeFirst(announcedItemEnds.count - Self.announcedItemEndLimit) }
        return out
    }

    /// How many announced ends the machine remembers (a record settles them within seconds).
    static let announcedItemEndLimit = 64

    /// `events` without the ends of items already announced (each forgotten once settled).
    mutating func unannounced(_ events: [CoordinationCore.Event]) -> [CoordinationCore.Event] {
        events.filter { event in
            if case .holdExpired(_, let suspension, _, _) = event, let index = announcedHoldReleases.firstIndex(of: suspension.id) {
                announcedHoldReleases.remove(at: index)
                return false
            }
            guard case .itemEnded(let timeline, _, _) = event, let index = announcedItemEnds.firstIndex(of: timeline) else { return true }
            announcedItemEnds.remove(at: index)
            return false
        }
    }
}
