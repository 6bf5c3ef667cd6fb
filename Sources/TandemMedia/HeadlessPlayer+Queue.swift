import Foundation
import TandemClock
import TandemPlayback
import TandemMediaTypes

extension HeadlessPlayer {
    /// Makes `items` known to the player by their identifiers, so that when the group's queue
    /// moves to one of them (a `next`, a jump, the end of the item before), the coordinator's
    /// commands for it are carried out on it: prepared on the seek or buffering command that
    /// comes ahead, switched to at the play or pause command's host instant. The newest of two
    /// items with one identifier wins; at most `namedItemLimit` are kept.
    public func makeAvailable(_ items: [PlaybackItem]) {
        engine.lock.withLock {
            for item in items {
                engine.namedItems.removeAll { $0.identifier == item.identifier }
                engine.namedItems.append(item)
            }
            if engine.namedItems.count > HeadlessPlayer.namedItemLimit {
                engine.namedItems.removeFirst(engine.namedItems.count - HeadlessPlayer.namedItemLimit)
            }
        }
    }
}

extension HeadlessPlayerCoordination {
    /// A command for the item `identifier`, not the current one: a seek or buffering command
    /// prepares it at the command's item time (once: a prepared item is kept), a play or pause
    /// switches to it at the command's host instant (`switchToPreparedItem(timeline:)`, its
    /// first frame as tightly on time as any other). A command for an item the player does not
    /// have is completed without effect (the group's mismatch handling reports and suspends it).
    func followItem(_ identifier: String, command: PlaybackCommand, player: HeadlessPlayer) {
        guard let item = player.item(withIdentifier: identifier) else { return }
        let prepared = player.preparedItem?.identifier == identifier
        switch command {
        case .seek(let seek):
            if !prepared { try? player.prepare(item, at: seek.itemTime) }
        case .buffer(let buffer):
            if !prepared { try? player.prepare(item, at: buffer.itemTime) }
        case .play(let play):
            let rate = min(max(play.rate, PresentationTimeline.minimumRate), PresentationTimeline.maximumRate)
            var timeline = PresentationTimeline(rate: rate, anchorItemTime: play.itemTime, anchorHostTime: play.hostTime)
            timeline.group = .init(itemTime: play.timeline.anchorMediaTime, rate: play.timeline.rate)
            switchItem(item, prepared: prepared, timeline: timeline, player: player)
        case .pause(let pause):
            switchItem(item, prepared: prepared, timeline: .paused(at: pause.itemTime, from: pause.hostTime),
                       player: player)
        }
    }

    private func switchItem(_ item: PlaybackItem, prepared: Bool, timeline: PresentationTimeline, player: HeadlessPlayer) {
        if prepared {
            try? player.switchToPreparedItem(timeline: timeline)
        } else {
            try? player.replaceCurrentItem(with: item, timeline: timeline)
        }
    }
}
