import TandemClock
import Foundation
import Tandem
import TandemPlayback
import TandemStreaming
import TandemIdentity
import TandemMpv
import TandemMediaTypes

/// Watching with a real mpv (`--player mpv`): mpv shows the media and takes a person's keys; the
/// session, the events and the scripted commands are the same as with the built-in player.
/// `--presentation-log` gets mpv's readings of its position (`"reading": true`), and
/// `--follow on-receipt` makes mpv the benchmarks' baseline.
///
/// A queue of files (`tandem host A B --player mpv`, a joiner's several files) is the group's as
/// with the built-in player (`WatchParty+Queue.swift`): the host appends them all, every
/// participant makes the entries it holds (by content) available to mpv, which loads each as the
/// group reaches it (at an item's end, a `next` or `prev`, or the `>`, Enter and `<` keys in mpv's
/// window: `MpvPlayer.Options.bindsQueueKeys`), and the `item` and `unmatched-media` events are
/// the same. mpv's screen shows who did what and the chat (`showOnScreen(_:)`).
extension WatchParty {
    /// Watches with mpv on `item`. `streaming` streams to mpv the queue's entries this
    /// participant holds no file of (unless it refuses streaming), and suspends this participant
    /// (without holding the group) while no holder of a streamed item is left.
    func runWithMpv(item: PlaybackItem, streaming: SessionStreaming, streamedAt: HostInstant?,
                    whileWatching: @escaping @Sendable () async -> Void) async throws -> Ending {
        let log: PresentationLog?
        do {
            log = try configuration.presentationLog.map { path throws(MediaError) in try PresentationLog(path: path) }
        } catch {
            session.leave()
            throw WatchPartyError.failure("\(error)")
        }
        var playerOptions = MpvPlayer.Options()
        playerOptions.ipcPath = configuration.mpvIPC
        playerOptions.extraArguments = configuration.mpvArguments + ["--ytdl=no"]
        if let executable = configuration.mpvExecutable { playerOptions.executable = executable }
        playerOptions.presentationLog = log
        playerOptions.latencyOffset = Int64(configuration.latencyOffset) * 1_000_000
        // A person's change in mpv's window is held while the relay is away, as one typed here.
        playerOptions.proposalGate = { [weak self] proposal in
            guard let self else { return try proposal() }
            try self.propose(proposal)
        }
        let player: MpvPlayer
        do {
            player = try await MpvPlayer.launch(item: item, options: playerOptions)
        } catch {
            log?.close()
            session.leave()
            throw WatchPartyError.failure("\(error)")
        }
        let following = configuration.follower?.follow(player)
        let coordinator = following?.coordinator ?? player.playbackCoordinator
        // The followers run as this watch's children, and end with it: none reports after it.
        let ending = await withDiscardingTaskGroup { followers -> GroupSessionError? in
            // Notices are heard from before the party says it watches: one shown after that is shown.
            followers.addTask(operation: followNotices())
            followers.addTask(operation: followLater())
            emitJoined(streamedAt: streamedAt, player: "mpv", mpvIPC: player.ipcPath)
            // Subscribed here, before the coordinator coordinates: a task's first step may run after the
            // session's history was applied, and a late joiner then missed every change before it.
            let coordinatorEvents = coordinator.events
            followers.addTask { for await event in coordinatorEvents { self.report(event) } }
            followers.addTask { await self.followParticipants() }
            followers.addTask(operation: followChat())
            followers.addTask(operation: followHealth())
            followers.addTask(operation: followOnScreen(mpv: player))
            // Closing mpv (its window, or `q`) is leaving.
            let exitTask = Task { [session] in
                await player.waitUntilExited()
                guard !Task.isCancelled else { return }
                self.emit(.mpvExited(.init(status: Int(player.process.exitStatus ?? -1))))
                session.leave()
            }
            coordinator.coordinateWithSession(session)
            configuration.coordinationBegan?()
            proposeHostRules(on: coordinator)
            followStreaming(streaming, coordinator: coordinator)
            // One file: the first report chooses the group's item (a session's queue starts empty),
            // so nobody transitions. mpv opened it: the identity carries the duration mpv read.
            // `coordinateWithSession` reported mpv's item already (mpv knows its identity), which an
            // empty queue takes as its first entry: the host appends the rest after it.
            if configuration.isHost && watchedMedia.count > 1 {
                // That entry knows no duration: replaced by one that does (the one mpv read, as its
                // identity announces), so that the group moves on at its end. The item stays.
                let identity = player.currentItemIdentity
                let duration = identity.flatMap(CoordinationCore.announcedDuration(in:)).flatMap { $0 <= PlaybackQueue.maximumEntryDuration ? $0 : nil }
                do {
                    try coordinator.coordinateQueueChange(.replaceCurrent(with: PlaybackQueue.Entry(identifier: session.activity.item, identity: identity,
                                                                                                    duration: duration)))
                } catch {
                    refuse("queue: \(error)")
                }
                for path in watchedMedia.dropFirst() {
                    do {
                        try coordinator.coordinateQueueChange(.append(Self.entry(for: path)))
                    } catch {
                        refuse("queue add \(path): \(error)")
                    }
                }
            }
            try? coordinator.reportItem(session.activity.item, identity: reportsIdentityLate ? nil : player.currentItemIdentity, ready: true)
            followers.addTask(operation: followQueue(mpv: player, coordinator: coordinator,
                                                     streamed: configuration.refusesStreaming ? nil : StreamedEntries(streaming: streaming)))
            let latency = LatencyControl(milliseconds: configuration.latencyOffset) { player.latencyOffset = Int64($0) * 1_000_000 }
            watching.withLock { $0 = Watching(coordinator: coordinator, mpv: player, latency: latency) }
            let ending = await untilOver(whileWatching: whileWatching)
            exitTask.cancel()
            followers.cancelAll()
            return ending
        }
        await player.close()
        configuration.playerClosed?()
        log?.close()
        let statistics = player.statistics
        emit(.mpvStatistics(.init(follow: configuration.follower?.name ?? "scheduled", measurements: statistics.measurements, nudges: statistics.nudges,
                                         correctiveSeeks: statistics.correctiveSeeks, mpvProposals: statistics.userProposals,
                                         readings: statistics.readings, starts: statistics.starts,
                                         lastErrorMilliseconds: statistics.lastError.map { Double($0) / 1e6 },
                                         lastStartErrorMilliseconds: statistics.lastStartError.map { Double($0) / 1e6 })))
        // Leaving or ending is heard from the relay, not from this process going away.
        await session.departureDelivered()
        withExtendedLifetime(following) {}
        return Ending(reason: ending, endedHere: endedHere.load(ordering: .relaxed))
    }

    /// The work that follows the group's queue with mpv, to run for as long as the watch lasts, as
    /// `followQueue(player:…)` does with the built-in player.
    func followQueue(mpv player: MpvPlayer, coordinator: PlaybackCoordinator, streamed: StreamedEntries?) -> @Sendable () async -> Void {
        let files = ownFiles()
        // Subscribed before the first look, so that no change between the two goes unseen.
        let changes = coordinator.events
        return { [self] in
            var reported: Set<String> = []
            var identified = !reportsIdentityLate
            var last = await syncQueue(mpv: player, coordinator: coordinator, files: files, streamed: streamed, last: nil,
                                       reported: &reported, identified: &identified)
            for await event in changes {
                // An end of item is told at its instant, before the record that settles it.
                if case .itemEnded(_, let next?, let index?) = event, next.identifier != last {
                    last = next.identifier
                    emit(.item(.init(identifier: next.identifier, index: index, count: coordinator.core.queue.entries.count)))
                    continue
                }
                last = await syncQueue(mpv: player, coordinator: coordinator, files: files, streamed: streamed, last: last,
                                       reported: &reported, identified: &identified)
            }
        }
    }

    /// `syncQueue(player:…)` for mpv: the entries this participant holds made available to mpv
    /// (each once), those it holds no file of streamed from their holders (`streamed`), the
    /// group's current content taken from another file when mpv opened the wrong one, each
    /// unmatched file said once, and `item` when the group's item changed.
    private func syncQueue(mpv player: MpvPlayer, coordinator: PlaybackCoordinator, files: [(path: String, identity: String?)],
                           streamed: StreamedEntries?, last: String?, reported: inout Set<String>, identified: inout Bool) async -> String? {
        let core = coordinator.core
        let current = player.currentItem
        if !identified, let entry = core.queue.entries.first(where: { $0.identifier == current.identifier }) {
            identified = true
            if case .file(let path) = current.source, entry.identity != nil,
               !ContentIdentity.sameContent(entry.identity, files.first { $0.path == path }?.identity),
               let match = files.first(where: { ContentIdentity.sameContent(entry.identity, $0.identity) }) {
                // Reports what mpv has once it has loaded it.
                try? await player.replaceCurrentItemLocally(with: PlaybackItem(file: match.path, identifier: current.identifier,
                                                                               identity: match.identity))
            } else {
                try? coordinator.reportItem(current.identifier, identity: player.currentItemIdentity, ready: true)
            }
        }
        let available = Set(player.availableItemIdentifiers)
        for entry in core.queue.entries where !available.contains(entry.identifier) {
            if let match = files.first(where: { ContentIdentity.sameContent(entry.identity, $0.identity) }) {
                try? player.makeAvailable(PlaybackItem(file: match.path, identifier: entry.identifier, identity: match.identity))
            } else if let item = streamed?.item(for: entry) {
                // Held by nobody here: streamed from its holders when the group reaches it.
                try? player.makeAvailable(item)
            }
        }
        return reportProgress(of: core, files: files, reported: &reported, last: last)
    }
}
