import Foundation
import Synchronization
import Tandem
import TandemClock
import TandemMedia
import TandemPlayback
import TandemIdentity

/// The watch's shared queue (`tandem host FILE…`, `join [INVITE] FILE…`):
///
/// - The host appends every file to the group's queue, in order (identifier: the file's name;
///   its content identity with the duration the built-in player's demuxer read, so that the
///   group moves on at the end of each). With one file, the queue holds no duration, and
///   the group plays on past the end of the file.
/// - Every participant matches the queue's entries to its own files by content identity
///   (`ContentIdentity.sameContent`: size and hashes, whatever the names), makes them available
///   to its player under the entry's identifier, so that the player prepares and switches to
///   each as the group reaches it, and says once of each file of its own that it matches no
///   entry (`unmatched-media`, `file`, `message`).
/// - `next`, `prev` and `queue add PATH` (keys `n`, `p`) change the group's queue; an `item` event
///   (`identifier`, `index`, `count`) says when the group's item changes.
extension WatchParty {
    /// A watched file's identifier in the queue: its name.
    public static func identifier(of path: String) -> String { URL(fileURLWithPath: path).lastPathComponent }

    /// A file's queue entry: its name, its identity, and the duration the identity announces.
    static func entry(for path: String) -> PlaybackQueue.Entry {
        let identity = (try? checkedMedia(path))?.identity
        let duration = identity.flatMap(CoordinationCore.announcedDuration(in:)).flatMap { $0 <= PlaybackQueue.maximumEntryDuration ? $0 : nil }
        return PlaybackQueue.Entry(identifier: identifier(of: path), identity: identity, duration: duration)
    }

    /// The host's queue: every file of the command line appended, the first current.
    func appendMedia(to coordinator: PlaybackCoordinator) {
        for path in watchedMedia {
            do {
                try coordinator.coordinateQueueChange(.append(Self.entry(for: path)))
            } catch {
                refuse("queue add \(path): \(error)")
            }
        }
    }

    /// Makes the group's entries available to `player` from this participant's files (by
    /// content identity), says once of each file that matches no entry (`reported` holds those
    /// said), and emits `item` when the group's item changed since `last`; returns the group's item.
    func syncQueue(player: HeadlessPlayer, coordinator: PlaybackCoordinator, files: [(path: String, identity: String?)],
                   streamed: StreamedEntries?, last: String?, reported: inout Set<String>,
                   identified: inout Bool) -> String? {
        let core = coordinator.core
        // A joiner with several files tells the group what it holds for the current item once
        // the queue says which content that is (its first report named none).
        if !identified, let path = adoptCurrentEntry(player: player, coordinator: coordinator, files: files) {
            identified = true
            try? coordinator.reportItem(player.itemIdentifier, identity: (try? Self.checkedMedia(path))?.identity, ready: true)
        }
        var items: [PlaybackItem] = []
        for entry in core.queue.entries where entry.identifier != player.itemIdentifier {
            if let match = files.first(where: { ContentIdentity.sameContent(entry.identity, $0.identity) }) {
                items.append(PlaybackItem(file: match.path, identifier: entry.identifier, identity: match.identity))
            } else if let item = streamed?.item(for: entry) {
                // Held by nobody here: streamed from its holders when the group reaches it.
                items.append(item)
            }
        }
        if !items.isEmpty { player.makeAvailable(items) }
        return reportProgress(of: core, files: files, reported: &reported, last: last)
    }

    /// What both players' queue following reports alike: each file that matches no item of a
    /// queue of several (`unmatched-media`, once per file, by content), and the group's item
    /// when it changed (`item`: i of n). Returns the group's item.
    func reportProgress(of core: CoordinationCore, files: [(path: String, identity: String?)], reported: inout Set<String>,
                        last: String?) -> String? {
        if core.queue.entries.count > 1 {
            for file in files where !reported.contains(file.path)
                && !core.queue.entries.contains(where: { ContentIdentity.sameContent($0.identity, file.identity) }) {
                reported.insert(file.path)
                emit(.unmatchedMedia(.init(file: file.path, message: "\(file.path) matches no item of the group's queue (by content)")))
            }
        }
        let item = core.timeline.item
        if item != last, let item, core.queue.entries.count > 1 {
            emit(.item(.init(identifier: item, index: core.currentEntryIndex ?? -1, count: core.queue.entries.count)))
        }
        return item
    }

    /// The player opened this participant's first file as the group's current item: when the
    /// queue says that item is other content and another file holds it (a folder listed in
    /// another order), the player takes that file instead, under the same identifier. Returns
    /// the path of the file the player then holds for the current entry, nil while the queue
    /// does not name the player's item.
    private func adoptCurrentEntry(player: HeadlessPlayer, coordinator: PlaybackCoordinator,
                                   files: [(path: String, identity: String?)]) -> String? {
        let current = player.currentItem
        guard case .file(let path) = current.source,
              let entry = coordinator.core.queue.entries.first(where: { $0.identifier == current.identifier }) else { return nil }
        let own = files.first { $0.path == path }
        guard entry.identity != nil, !ContentIdentity.sameContent(entry.identity, own?.identity),
              let match = files.first(where: { ContentIdentity.sameContent(entry.identity, $0.identity) }) else { return path }
        // Taken already, switching at its instant.
        if let prepared = player.preparedItem, case .file(match.path) = prepared.source, prepared.identifier == current.identifier {
            return match.path
        }
        // At once and paused where the player is (no switch pending that a command of the
        // group's could supersede); the group's next command sets the timeline exactly.
        let now = HostInstant.now()
        let next = PresentationTimeline.paused(at: max(.zero, player.itemTime(atHostTime: now)), from: now)
        let item = PlaybackItem(file: match.path, identifier: current.identifier, identity: match.identity)
        guard (try? player.replaceCurrentItem(with: item, timeline: next)) != nil else { return path }
        return match.path
    }

    /// This participant's own files (none when it gave none) with their content identities.
    func ownFiles() -> [(path: String, identity: String?)] {
        watchedMedia.filter { !$0.isEmpty }.map { (path: $0, identity: try? ContentIdentity.of(file: $0)) }
    }

    /// The work that follows the group's queue, to run for as long as the watch lasts.
    func followQueue(player: HeadlessPlayer, coordinator: PlaybackCoordinator, streamed: StreamedEntries? = nil) -> @Sendable () async -> Void {
        let files = ownFiles()
        // Subscribed before the first look, so that no change between the two goes unseen (the
        // history may be applied meanwhile, and then nothing else happens until someone acts).
        let changes = coordinator.events
        return { [self] in
            var reported: Set<String> = []
            var identified = !reportsIdentityLate
            var last = syncQueue(player: player, coordinator: coordinator, files: files, streamed: streamed, last: nil, reported: &reported,
                                 identified: &identified)
            var following: [String: PlaybackItem] = [:]
            following = followItems(of: coordinator.core, files: files, player: player, told: following)
            for await event in changes {
                // An end of item is told at its instant, before the record that settles it in
                // the coordinator's core.
                if case .itemEnded(_, let next?, let index?) = event, next.identifier != last {
                    last = next.identifier
                    emit(.item(.init(identifier: next.identifier, index: index, count: coordinator.core.queue.entries.count)))
                    continue
                }
                last = syncQueue(player: player, coordinator: coordinator, files: files, streamed: streamed, last: last, reported: &reported,
                                 identified: &identified)
                following = followItems(of: coordinator.core, files: files, player: player, told: following)
            }
        }
    }

    /// Tells `player` which item follows each entry of the group's queue (the next entry, from
    /// this participant's own file for it), so that it decodes that item ahead while the entry
    /// before plays and a `next` or an item's end switches to sound and pictures already
    /// decoded; told again only when that changed since `told`. Returns what it told.
    private func followItems(of core: CoordinationCore, files: [(path: String, identity: String?)], player: HeadlessPlayer,
                             told: [String: PlaybackItem]) -> [String: PlaybackItem] {
        var following: [String: PlaybackItem] = [:]
        let entries = core.queue.entries
        for (entry, next) in zip(entries, entries.dropFirst()) {
            guard let match = files.first(where: { ContentIdentity.sameContent(next.identity, $0.identity) }) else { continue }
            following[entry.identifier] = PlaybackItem(file: match.path, identifier: next.identifier, identity: match.identity)
        }
        let key = { (items: [String: PlaybackItem]) in items.mapValues { "\($0.identifier)\u{0}\($0.source)" } }
        guard key(following) != key(told) else { return told }
        let answer = following
        if answer.isEmpty {
            player.setFollowingItem(nil)
        } else {
            player.setFollowingItem { current in answer[current] }
        }
        return following
    }
}
