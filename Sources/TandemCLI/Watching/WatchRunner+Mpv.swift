import Foundation
import Tandem
import TandemMedia
import TandemPlayback

/// Watching with a real mpv (`--player mpv`): mpv shows the media and takes a person's keys; the
/// session, the events and the scripted commands are the same as with the built-in player.
/// `--presentation-log` gets mpv's readings of its position (`"reading": true`), and
/// `--follow on-receipt` makes mpv the benchmarks' baseline.
extension WatchRunner {
    func runWithMpv() async throws -> Int32 {
        let log: PresentationLog?
        do {
            log = try options.presentationLog.map { path throws(MediaError) in try PresentationLog(path: path) }
        } catch {
            session.leave()
            throw CLIError.failure("\(error)")
        }
        var playerOptions = MpvPlayer.Options()
        playerOptions.itemIdentifier = session.activity.item
        playerOptions.ipcPath = options.mpvIPC
        playerOptions.extraArguments = options.mpvArguments
        playerOptions.presentationLog = log
        playerOptions.following = options.follow
        playerOptions.latencyOffset = Int64(options.latencyOffset) * 1_000_000
        let player: MpvPlayer
        do {
            player = try await MpvPlayer.launch(file: file, options: playerOptions)
        } catch {
            log?.close()
            session.leave()
            throw CLIError.failure("\(error)")
        }
        let coordinator = player.playbackCoordinator
        let events = EventPrinter(json: options.jsonEvents)
        events.emit("joined", ["session": session.id.uuidString, "participant": session.localParticipant.displayName,
                               "item": session.activity.item, "player": "mpv", "mpv_ipc": player.ipcPath])
        let eventTask = Task { for await event in coordinator.events { events.report(event, session: session) } }
        let participantTask = Task { await events.followParticipants(session) }
        let chatTask = followChat(events: events)
        defer { chatTask.cancel() }
        // Closing mpv (its window, or `q`) is leaving.
        let exitTask = Task { [session] in
            await player.waitUntilExited()
            guard !Task.isCancelled else { return }
            events.emit("mpv-exited", ["status": Int(player.process.exitStatus ?? -1)])
            session.leave()
        }
        coordinator.coordinateWithSession(session)
        // The first report chooses the group's item (a session's queue starts empty): no transition.
        // mpv opened it: the identity carries the duration mpv read.
        try? coordinator.reportItem(session.activity.item, identity: player.currentItemIdentity, ready: true)
        let latency = LatencyControl(milliseconds: options.latencyOffset) { player.latencyOffset = Int64($0) * 1_000_000 }
        let script = Task { try await runScript(coordinator: coordinator, events: events, latency: latency) }
        let ending = await untilOver(events: events)
        script.cancel()
        exitTask.cancel()
        eventTask.cancel()
        participantTask.cancel()
        await player.close()
        log?.close()
        let statistics = player.statistics
        var fields: [String: any Sendable] = ["player": "mpv", "follow": options.follow.rawValue, "measurements": statistics.measurements,
                                              "nudges": statistics.nudges, "corrective_seeks": statistics.correctiveSeeks,
                                              "mpv_proposals": statistics.userProposals, "readings": statistics.readings,
                                              "starts": statistics.starts]
        if let error = statistics.lastError { fields["last_error_ms"] = Double(error) / 1e6 }
        if let error = statistics.lastStartError { fields["last_start_error_ms"] = Double(error) / 1e6 }
        events.emit("statistics", fields)
        // Leaving or ending is heard from the relay, not from this process going away.
        await session.departureDelivered()
        return WatchRunner.exitStatus(for: ending, endedHere: endedHere.isSet)
    }
}
