import Foundation
import Tandem
import TandemClock
import TandemIdentity
import TandemMedia
import TandemMediaTypes
import TandemPlayback
import TandemStreaming

/// Watching with the built-in player.
extension WatchParty {
    func runBuiltin(streaming: SessionStreaming, whileWatching: @escaping @Sendable () async -> Void) async throws -> Ending {
        let opened: OpenedItem
        do {
            opened = try await openedItem(streaming: streaming)
        } catch {
            session.leave()
            await session.departureDelivered()
            throw error
        }
        var sinks: [any VideoSink] = []
        let log = try configuration.presentationLog.map { path throws(MediaError) in try PresentationLog(path: path) }
        if let log { sinks.append(log) }
        sinks += configuration.videoSinks
        let lateness = RecentLateness()
        sinks.append(lateness)
        var playerOptions = HeadlessPlayer.Options()
        playerOptions.itemIdentifier = session.activity.item
        playerOptions.decodeThrottle = configuration.decodeThrottle
        playerOptions.wakeGuard = configuration.wakeGuard
        playerOptions.latencyOffset = Int64(configuration.latencyOffset) * 1_000_000
        playerOptions.audioOutput = configuration.audioOutput
        playerOptions.audioDevice = configuration.audioDevice
        playerOptions.volume = configuration.volume
        playerOptions.audioLog = configuration.audioLog
        playerOptions.audioNotice = configuration.playerNotice
        let player = try HeadlessPlayer(item: opened.item, options: playerOptions, videoSinks: sinks)
        let latency = LatencyControl(milliseconds: configuration.latencyOffset) { player.latencyOffset = Int64($0) * 1_000_000 }
        // A follower drives the player from outside through a coordinator of its own; the
        // player's own then never coordinates.
        let following = configuration.follower?.follow(player)
        let coordinator = following?.coordinator ?? player.playbackCoordinator
        reportStalls(of: player)
        // The followers run as this watch's children, and end with it: none reports after it.
        let ending = await withDiscardingTaskGroup { followers -> GroupSessionError? in
            // Notices are heard from before the party says it watches: one shown after that is shown.
            followers.addTask(operation: followNotices())
            followers.addTask(operation: followLater())
            if opened.streamed == nil { emitJoined() }
            followStreaming(streaming, coordinator: coordinator)
            // Subscribed here, before the coordinator coordinates: a task's first step may run after the
            // session's history was applied, and a late joiner then missed every change before it.
            let coordinatorEvents = coordinator.events
            followers.addTask { for await event in coordinatorEvents { self.report(event) } }
            followers.addTask { await self.followParticipants() }
            followers.addTask(operation: followChat())
            followers.addTask(operation: followHealth())
            coordinator.coordinateWithSession(session)
            configuration.coordinationBegan?()
            proposeHostRules(on: coordinator)
            // This player opened it: it announces the duration it read.
            let identity = opened.identity.map { ContentIdentity.announcing(duration: player.info.duration, $0) }
            // A queue of files: the host appends them all (the first becomes the group's item) before
            // it reports, so that the report finds the queue chosen. One file: the first report
            // chooses the group's item (a session's queue starts empty), so nobody transitions.
            if configuration.isHost && watchedMedia.count > 1 { appendMedia(to: coordinator) }
            try? coordinator.reportItem(session.activity.item, identity: reportsIdentityLate ? nil : identity, ready: true)
            followers.addTask(operation: followQueue(player: player, coordinator: coordinator,
                                                     streamed: configuration.refusesStreaming ? nil : StreamedEntries(streaming: streaming)))
            watching.withLock {
                $0 = Watching(coordinator: coordinator, player: player, latency: latency,
                              duration: player.info.duration.map { MediaTime.nanoseconds(seconds: $0) }, lateness: lateness)
            }
            if configuration.reportsSync { followers.addTask { await self.reportSync(player: player, coordinator: coordinator) } }
            let ending = await untilOver(whileWatching: whileWatching)
            followers.cancelAll()
            return ending
        }
        let statistics = player.statistics
        // A decoder waiting for streamed bytes (no holder left) is let go before the player closes.
        streaming.close()
        player.close()
        configuration.playerClosed?()
        log?.close()
        emit(.statistics(.init(presented: statistics.presentedFrames, dropped: statistics.droppedLateFrames, stills: statistics.stillFrames)))
        // Leaving or ending is heard from the relay, not from this process going away.
        await session.departureDelivered()
        withExtendedLifetime(following) {}
        return Ending(reason: ending, endedHere: endedHere.load(ordering: .relaxed))
    }

    /// Every five seconds, a `sync` event: the clock's offset and error bound, and how far the
    /// player's own timeline is from the shared one.
    private func reportSync(player: HeadlessPlayer, coordinator: PlaybackCoordinator) async {
        while (try? await Task.sleep(for: .seconds(5))) != nil {
            guard let clock = coordinator.localClock else { continue }
            let local = clock.instant()
            guard let status = coordinator.clockStatus(atLocalTime: local) else { continue }
            let error = coordinator.expectedItemTime(atLocalTime: local).map { expected in
                (player.itemTime(atHostTime: clock.hostInstant(atLocal: local)) - expected).nanoseconds
            }
            let statistics = player.statistics
            emit(.sync(.init(clockOffsetNanoseconds: status.offset.nanoseconds, clockErrorBoundNanoseconds: status.errorBound.nanoseconds,
                             version: Int(clamping: coordinator.core.timeline.version), syncErrorNanoseconds: error,
                             presented: statistics.presentedFrames, dropped: statistics.droppedLateFrames)))
        }
    }
}
