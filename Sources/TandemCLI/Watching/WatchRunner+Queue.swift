import Foundation
import Synchronization
import Tandem
import TandemClock
import TandemMedia
import TandemPlayback

/// The watch's shared queue (`tandem host FILE…`, `join [INVITE] FILE…`):
///
/// - The host appends every file to the group's queue, in order (identifier: the file's name;
///   identity and duration from `MediaIdentity`, so that the group moves on at the end of each).
///   With one file, the watch is as before queues: no duration, and the group plays on past the
///   end as it always did.
/// - Every participant matches the queue's entries to its own files, by identity first, then by
///   name, and makes them available to its player under the entry's identifier, so that the
///   player prepares and switches to each as the group reaches it.
/// - `next`, `prev` and `queue add PATH` (keys `n`, `p`) change the group's queue; an `item` event
///   (`identifier`, `index`, `count`) says when the group's item changes.
extension WatchRunner {
    /// A watched file's identifier in the queue: its name.
    static func identifier(of path: String) -> String { URL(fileURLWithPath: path).lastPathComponent }

    /// A file's queue entry: its name, its identity, and the duration the identity announces.
    static func entry(for path: String) -> PlaybackQueue.Entry {
        let identity = try? MediaIdentity.of(file: path)
        let duration = identity.flatMap(CoordinationCore.announcedDuration(in:)).flatMap { $0 <= PlaybackQueue.maximumEntryDuration ? $0 : nil }
        return PlaybackQueue.Entry(identifier: identifier(of: path), identity: identity, duration: duration)
    }

    /// The host's queue: every file of the command line appended, the first current.
    func appendMedia(to coordinator: PlaybackCoordinator, events: EventPrinter) {
        for path in watchedMedia {
            do {
                try coordinator.coordinateQueueChange(.append(Self.entry(for: path)))
            } catch {
                refuse("queue add \(path): \(error)", events: events)
            }
        }
    }

    /// Makes the group's entries available to `player` from this participant's files (by
    /// identity, then by name), and emits `item` when the group's item changed since `last`;
    /// returns the group's item.
    func syncQueue(player: HeadlessPlayer, coordinator: PlaybackCoordinator, files: [(path: String, identity: String?)],
                   events: EventPrinter, last: String?) -> String? {
        let core = coordinator.core
        var items: [PlaybackItem] = []
        for entry in core.queue.entries where entry.identifier != player.itemIdentifier {
            let match = files.first { entry.identity != nil && $0.identity == entry.identity }
                ?? files.first { Self.identifier(of: $0.path) == entry.identifier }
            if let match { items.append(PlaybackItem(file: match.path, identifier: entry.identifier, identity: match.identity)) }
        }
        if !items.isEmpty { player.makeAvailable(items) }
        let item = core.timeline.item
        if item != last, let item, core.queue.entries.count > 1 {
            events.emit("item", ["identifier": item, "index": core.currentEntryIndex ?? -1, "count": core.queue.entries.count])
        }
        return item
    }

    /// Follows the group's queue for as long as the watch lasts.
    func followQueue(player: HeadlessPlayer, coordinator: PlaybackCoordinator, events: EventPrinter) -> Task<Void, Never> {
        let files = watchedMedia.map { (path: $0, identity: try? MediaIdentity.of(file: $0)) }
        return Task {
            var last = syncQueue(player: player, coordinator: coordinator, files: files, events: events, last: nil)
            for await event in coordinator.events {
                // An end of item is told at its instant, before the record that settles it in
                // the coordinator's core.
                if case .itemEnded(_, let next?, let index?) = event, next.identifier != last {
                    last = next.identifier
                    events.emit("item", ["identifier": next.identifier, "index": index, "count": coordinator.core.queue.entries.count])
                    continue
                }
                last = syncQueue(player: player, coordinator: coordinator, files: files, events: events, last: last)
            }
        }
    }

    /// The queue's line commands: `next`, `prev`, `queue add PATH`; false for any other verb.
    func runQueueCommand(_ words: [String], coordinator: PlaybackCoordinator) throws -> Bool {
        switch words.first {
        case "next": try coordinator.advanceToNextItem()
        case "prev": try coordinator.returnToPreviousItem()
        case "queue":
            guard words.count >= 3, words[1] == "add" else { throw CLIError.usage("'\(words.joined(separator: " "))': queue add PATH") }
            let path = words.dropFirst(2).joined(separator: " ")
            try HostCommand.checkedMedia(path)
            try coordinator.coordinateQueueChange(.append(Self.entry(for: path)))
        default: return false
        }
        return true
    }

    /// "item i of n" for the status line, or nil with fewer than two entries.
    static func queuePosition(_ core: CoordinationCore) -> String? {
        guard core.queue.entries.count > 1, let index = core.currentEntryIndex else { return nil }
        return "item \(index + 1) of \(core.queue.entries.count)"
    }
}

extension WatchRunner {
    /// The files watched: `media`, or `file` alone.
    var watchedMedia: [String] { media.isEmpty ? [file] : media }
}
