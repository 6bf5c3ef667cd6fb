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
        guard let mapping, ownSuspensions.isEmpty else { return [] }
        let horizon = mapping.sessionTime(atHost: now) + Self.itemEndLead
        let view = core.settled(at: horizon)
        guard view.timeline != core.timeline || view.queue != core.queue else {
            itemEndView = nil
            return []
        }
        let previous = lastCommandTimeline ?? core.timeline
        itemEndView = view
        core = view
        guard previous != view.timeline else { return [] }
        return follow(from: previous, originator: nil, lead: configuration.prerollLead, now: now).compactMap {
            switch $0 {
            case .issue(let issued): .issue(issued)
            // The tick adds its own wake-up at its end.
            case .wake: nil
            case .abandon, .emit, .propose: preconditionFailure("not from follow")
            }
        }
    }

    /// The host instant `itemEndLead` before the current item's end (on the group as the machine
    /// last decided on it), or nil when no end is ahead.
    func itemEndWake() -> HostInstant? {
        guard let mapping, ownSuspensions.isEmpty, let end = (itemEndView ?? core).currentItemEndInstant else { return nil }
        return mapping.hostTime(atSession: end - Self.itemEndLead)
    }
}
