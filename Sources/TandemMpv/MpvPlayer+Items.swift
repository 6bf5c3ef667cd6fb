import Foundation
import Synchronization
import TandemClock
import TandemPlayback
import TandemIdentity
import TandemMediaTypes

/// The item mpv plays, and changing it: mpv's `loadfile`.
///
/// What mpv does (measured on mpv 0.35, `--vo=null --ao=null`): `loadfile PATH replace` answers
/// at once with the new playlist entry's id, then announces `end-file` for the old entry,
/// `start-file` for the new one, and `file-loaded` and `playback-restart` once the new file is
/// open and its first frame decoded; a file it cannot open ends at once with `end-file`
/// (`reason` `error`). For a local 30 frames/s H.264 clip with sound, `loadfile` to
/// `playback-restart` took 6 ms paused and 35 ms playing (medians of 9, 22 to 43 ms: mpv
/// drains its audio output first), and `replaceCurrentItem(with:)` as a whole 16 ms paused and
/// 31 ms playing (the IPC round trips that read the new item). `pause` and `speed` carry over
/// from file to file, and so does the audio filter chain. With `--idle=no`, which the player
/// starts mpv with so that a person closing the file closes mpv, a file that fails to load
/// would leave mpv with nothing to play and make it quit: a replacement sets `idle` for the
/// time of the load, and on a failure loads the previous item again.
///
/// Which items this participant holds: those it launched with or was given to replace the
/// current one, and those made available with `makeAvailable(_:)`. A group's command for
/// another item that it holds (another participant replaced the group's item) loads that item
/// first, paused, and is then carried out; a command for an item it does not hold is stale, and
/// is completed without being applied.
extension MpvPlayer {
    /// The item mpv has loaded, with what the player needs to know of it.
    struct LoadedItem: Sendable {
        /// The item, as the program gave it.
        var item: PlaybackItem
        /// What mpv was given to open: the file's path or the URL.
        var target: String
        /// The content's identity: the item's own, or for a local file `MediaIdentity.of(file:)`.
        var identity: String?
        /// The duration (ns), as mpv reads it.
        var duration: Int64?
        /// One frame (ns), from the container's frame rate (1/30 s when it has none).
        var frameDuration: Int64
        /// How far `time-pos` leads the elapsed media time while playing (ns): see `Options.positionLead`.
        var positionLead: Int64
        /// Whether mpv plays sound for the item, and so has an audio clock to read.
        var hasAudio: Bool

        /// The item as the machine's decisions need it.
        var machineItem: MpvMachine.Item {
            MpvMachine.Item(identifier: item.identifier, hasAudio: hasAudio, frameDuration: TimeSpan(nanoseconds: frameDuration),
                            duration: duration.map { TimeSpan(nanoseconds: $0) }, positionLead: TimeSpan(nanoseconds: positionLead))
        }

        /// What mpv, having just loaded `target` for `item`, says of it.
        static func probe(_ item: PlaybackItem, target: String, ipc: MpvConnection, options: Options) async -> LoadedItem {
            await probe(item, target: target, ipc: ipc, options: options, content: identity(of: item))
        }

        /// What mpv, having just loaded `target` for `item`, says of it, the item's content
        /// identity being `content` (worked out by the caller while mpv loaded it).
        static func probe(_ item: PlaybackItem, target: String, ipc: MpvConnection, options: Options,
                          content: String?) async -> LoadedItem {
            // A file's frame rate is what it claims: only a plausible one divides anything.
            let fps = (try? await ipc.get("container-fps"))?.double.flatMap { (0.5...1_000).contains($0) ? $0 : nil }
            let duration = (try? await ipc.get("duration"))?.seconds.map { Int64(($0 * 1e9).rounded()) }
            let lead = options.positionLead ?? fps.map { Int64(5e8 / $0) * (options.rendersAtDisplayTime ? -1 : 1) } ?? 0
            let frame = fps.map { Int64((1e9 / $0).rounded()) } ?? 33_333_333
            // The selected audio track's number, or false: no sound, so no audio clock.
            let hasAudio = (try? await ipc.get("aid"))?.double != nil
            // The player that opened it announces its duration, as mpv reads it.
            let identity = content.map { ContentIdentity.announcing(duration: duration.map { Double($0) / 1e9 }, $0) }
            return LoadedItem(item: item, target: target, identity: identity, duration: duration, frameDuration: frame,
                              positionLead: lead, hasAudio: hasAudio)
        }

        /// `item`'s content identity: its own, or for a local file `MediaIdentity.of(file:)`
        /// (which reads 128 KiB: well under a ms).
        static func identity(of item: PlaybackItem) -> String? {
            if let identity = item.identity { return identity }
            guard case .file(let path) = item.source, !MediaLocation.isURL(path) else { return nil }
            return try? MediaIdentity.of(file: path)
        }
    }

    /// The item state, under its own lock.
    struct ItemState {
        var loaded: LoadedItem
        /// The items this participant holds, by identifier (the loaded one among them).
        var available: [String: PlaybackItem]
        /// Counts the loads begun: a load that another began after is superseded.
        var loads = 0
        /// Why the last load of an item failed, if it did.
        var lastError: MpvError?
        /// The identifiers of the items that failed to load for the group: not tried again for
        /// the group's later commands (one a second while it plays), until the item is given
        /// again (`makeAvailable(_:)`, `replaceCurrentItem(with:)`).
        var failed: Set<String> = []
        /// Whether mpv has `MpvProcess.localFileOptions` off (it was started on received media,
        /// or they were turned off since): they stay off for the files and URLs after.
        var restrictsLocalFiles: Bool

        init(loaded: LoadedItem) {
            self.loaded = loaded
            available = [loaded.item.identifier: loaded.item]
            restrictsLocalFiles = MpvPlayer.opensAsReceivedMedia(loaded.item)
        }

    }

    /// The item mpv has loaded.
    public var currentItem: PlaybackItem { items.withLock { $0.loaded.item } }
    /// The item's identifier in the group: the current item's.
    public var itemIdentifier: String { items.withLock { $0.loaded.item.identifier } }
    /// The current item's content identity with the duration mpv read (`d=SECONDS;s=SIZE;h=HASH`):
    /// the item's own, or for a local file `MediaIdentity.of(file:)`; nil for a URL given none.
    public var currentItemIdentity: String? { items.withLock { $0.loaded.identity } }
    /// The current item's duration (ns), as mpv reads it.
    public var duration: Int64? { items.withLock { $0.loaded.duration } }
    /// Why the last change of item failed (a group's command for an item this participant holds
    /// that mpv could not open, say), if it did; nil once one succeeds.
    public var lastItemError: MpvError? { items.withLock { $0.lastError } }
    /// The identifiers of the items this participant holds, sorted.
    public var availableItemIdentifiers: [String] { items.withLock { $0.available.keys.sorted() } }
    /// The item this participant holds under `identifier` (`makeAvailable(_:)`), if any.
    public func availableItem(withIdentifier identifier: String) -> PlaybackItem? { items.withLock { $0.available[identifier] } }
    /// Whether mpv is paused, as Tandem last asked or mpv last reported.
    public var isPaused: Bool { state.withLock { $0.machine.paused } }

    /// How far `time-pos` leads the frame on screen while playing (ns), for the current item.
    var positionLead: Int64 { items.withLock { $0.loaded.positionLead } }
    /// One frame (ns) of the current item.
    var frameDuration: Int64 { items.withLock { $0.loaded.frameDuration } }
    /// Whether the current item has sound mpv plays, and so an audio clock to read.
    var hasAudio: Bool { items.withLock { $0.loaded.hasAudio } }

    /// Makes `item` one this participant holds: when the group changes to an item of that
    /// identifier (another participant replaced the group's item), mpv loads it. An item of the
    /// same identifier made available before is replaced. A byte source (a streamed item) is
    /// served to mpv by `MpvByteServer`; a file that is not there is refused when it is needed.
    public func makeAvailable(_ item: PlaybackItem) throws(MpvError) {
        _ = try targets.target(of: item, for: "make \(item.identifier) available")
        items.withLock { state in
            state.available[item.identifier] = item
            state.failed.remove(item.identifier)
        }
        noteAvailable(item.identifier)
    }

    /// Tells the machine this participant holds an item of `identifier`, to load for the group.
    func noteAvailable(_ identifier: String) {
        state.withLock { state in
            state.machine.availableItems.insert(identifier)
            state.machine.failedItems.remove(identifier)
        }
    }

    /// Whether `item` is media from someone else, which mpv opens with
    /// `MpvProcess.localFileOptions` off (it follows no reference in it and runs no
    /// youtube-dl): a local file, or a byte source (another participant's file, streamed). A URL
    /// item is the user's to open as mpv likes.
    static func opensAsReceivedMedia(_ item: PlaybackItem) -> Bool {
        switch item.source {
        case .file(let path): !MediaLocation.isURL(path)
        case .bytes: true
        case .url: false
        }
    }

    /// The machine asked for the item `identifier` (a group's command for it, which it holds
    /// back meanwhile, mpv paused): loads it, and tells the group what it has now. A failed load
    /// leaves mpv on its item (the command is then stale), is kept in `lastItemError`, and is not
    /// tried again until the item is given again. A load that another load began after
    /// superseded (mpv stopped it, or it was still loading) is no failure: the item stays one
    /// to load for the group's later commands, and the newer load tells the machine its outcome.
    func takeUpItem(_ identifier: String) async {
        guard let item = items.withLock({ $0.failed.contains(identifier) ? nil : $0.available[identifier] }) else {
            return input { machine, now in machine.onItemFailed(identifier, now: now) }
        }
        let number = Mutex<Int?>(nil)
        do {
            try await load(item, began: { began in number.withLock { $0 = began } })
        } catch {
            // Another load began since this one did.
            let superseded = number.withLock { $0 }.map { began in items.withLock { $0.loads } != began } ?? false
            guard !superseded else { return }
            items.withLock { _ = $0.failed.insert(identifier) }
            return input { machine, now in machine.onItemFailed(identifier, now: now) }
        }
        reportItemToGroup()
    }

    /// Replaces mpv's file with `item`'s here alone, under the identifier it has: for a
    /// participant that opened the wrong one of its files for the group's item (it matched the
    /// group's content by another file), and tells the group, while coordinating, what it has
    /// now. Nothing is proposed: the group's item stays as it is, and its next command puts mpv
    /// on the timeline. A byte source or a missing file is refused, and a failed load leaves
    /// mpv on its item (`load`).
    public func replaceCurrentItemLocally(with item: PlaybackItem) async throws(MpvError) {
        try await load(item)
        reportItemToGroup()
    }

    /// Tells the group, while coordinating, the item mpv has now, with its identity.
    func reportItemToGroup() {
        let coordinator = groupCoordinator
        guard coordinator.isCoordinating else { return }
        let (identifier, identity) = items.withLock { ($0.loaded.item.identifier, $0.loaded.identity) }
        try? coordinator.reportItem(identifier, identity: identity, ready: true)
    }

    /// Replaces mpv's file with `item`'s (`loadfile … replace`) and waits until mpv has loaded it
    /// (its first frame decoded, `duration` and the rest read afresh): mpv is then at the item's
    /// start, paused or playing as before. On a failure mpv is taken back to the item it had,
    /// where it was. `began` is given the load's number as it begins (`ItemState.loads`).
    func load(_ item: PlaybackItem, began: (Int) -> Void = { _ in }) async throws(MpvError) {
        let request = "replace the item with"
        let target = try targets.checkedTarget(of: item, for: request)
        let (load, previous) = items.withLock { state in
            state.loads += 1
            return (state.loads, state.loaded)
        }
        began(load)
        // Worked out while mpv loads the file.
        async let identifying = LoadedItem.identity(of: item)
        let position = (try? await connection.get("time-pos"))?.seconds.map { Int64(saturating: $0 * 1e9) }
        let events = connection.events
        _ = try? await connection.set("idle", .string("yes"))
        if Self.opensAsReceivedMedia(item), !items.withLock({ $0.restrictsLocalFiles }) {
            for option in MpvProcess.localFileOptions { _ = try? await connection.set(option, .string("no")) }
            items.withLock { $0.restrictsLocalFiles = true }
        }
        let result = await loadFile(target, events: events, timeout: options.startTimeout, request: "\(request) \(item.identifier)")
        var failure: MpvError?
        var hasFile = true
        switch result {
        case .success:
            let loaded = await LoadedItem.probe(item, target: target, ipc: connection, options: options, content: identifying)
            if loaded.hasAudio, options.effectivePitchCorrection == .always { await Self.keepTempoFilter(connection) }
            let current = items.withLock { state -> Bool in
                guard state.loads == load else { return false }
                state.loaded = loaded
                state.available[item.identifier] = item
                state.failed.remove(item.identifier)
                state.lastError = nil
                return true
            }
            if current {
                adoptLoadedItem(loaded)
            } else {
                failure = .command("\(request) \(item.identifier)", "another replacement began before it loaded")
            }
        case .failure(let error):
            failure = error
            // mpv has no file now: back to the one it had, where it was, so that it goes on
            // showing something (a load begun since will show its own).
            if items.withLock({ $0.loads == load }) {
                let reloaded = await loadFile(previous.target, events: connection.events, timeout: options.startTimeout,
                                              request: "reload \(previous.item.identifier)")
                if case .failure = reloaded { hasFile = false }
                if hasFile, let position, position > 0 { try? await seek(to: ItemTime(nanoseconds: position), "seek back") }
            }
        }
        // Without a file, mpv would quit: it stays idle instead, for the next replacement.
        if hasFile { _ = try? await connection.set("idle", .string("no")) }
        if let failure {
            items.withLock { $0.lastError = failure }
            throw failure
        }
    }

    /// Sends `loadfile target replace` and waits (up to `timeout`) for mpv to announce the new
    /// entry loaded and to have a position; the first `playback-restart` is entered in the
    /// ledger as a seek of ours, to the start.
    private func loadFile(_ target: String, events: AsyncStream<MpvEvent>, timeout: Duration,
                          request: String) async -> Result<Void, MpvError> {
        await inputAndWait { machine, now in machine.onLoadBegan(now: now) }
        let entry: Int
        do {
            let reply = try await connection.command(["loadfile", .string(target), "replace"])
            entry = reply.value["playlist_entry_id"]?.exactInteger ?? -1
        } catch {
            return .failure(error as? MpvError ?? .command("loadfile \(target)", "\(error)"))
        }
        let outcome = await Self.outcome(ofEntry: entry, events: events, timeout: timeout, request: request)
        if case .failure = outcome { return outcome }
        do {
            try await Self.waitUntilLoaded(connection, process: process, timeout: timeout)
        } catch {
            return .failure(error as? MpvError ?? .timeout(request, "\(error)"))
        }
        return .success(())
    }

    /// Reads mpv's events until playlist entry `entry` has loaded and shows its first frame
    /// (`playback-restart` after `file-loaded`, after its `start-file`) or failed (its `end-file`),
    /// for at most `timeout`.
    private static func outcome(ofEntry entry: Int, events: AsyncStream<MpvEvent>, timeout: Duration,
                                request: String) async -> Result<Void, MpvError> {
        await withTaskGroup(of: Result<Void, MpvError>?.self) { group in
            group.addTask {
                var started = false
                var loaded = false
                for await event in events {
                    let id = event.message["playlist_entry_id"]?.exactInteger
                    switch event.name {
                    case "start-file" where id == entry || entry < 0: started = true
                    case "file-loaded" where started: loaded = true
                    case "playback-restart" where loaded: return .success(())
                    case "end-file" where id == entry:
                        let reason = event.message["reason"]?.string ?? "unknown"
                        guard reason == "error" else { return .failure(.command(request, "mpv stopped it before it loaded (\(reason))")) }
                        return .failure(.command(request, "mpv could not open it: \(event.message["file_error"]?.string ?? "an error")"))
                    default: continue
                    }
                }
                return Task.isCancelled ? nil : .failure(.disconnected(request, "mpv went away while loading"))
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return Task.isCancelled ? nil : .failure(.timeout(request, "not loaded after \(timeout)"))
            }
            var outcome: Result<Void, MpvError> = .failure(.timeout(request))
            for await result in group {
                guard let result else { continue }
                outcome = result
                break
            }
            group.cancelAll()
            return outcome
        }
    }

    /// Takes up what the new item is like: the machine's decisions follow it, and a group's
    /// command that waited for it is carried out.
    private func adoptLoadedItem(_ loaded: LoadedItem) {
        let item = loaded.machineItem
        input { machine, now in machine.onItemLoaded(item, now: now) }
    }
}

/// What mpv is given to open for each item: a file's path, a URL, or for a byte source the URL
/// under which `MpvByteServer` serves it to mpv (the server starts with the first byte source
/// and stops with the player). Only a local path ever goes on mpv's command line
/// (`MpvPlayer.launch`): a URL is loaded over the IPC socket.
final class MpvItemTargets: Sendable {
    /// The server, once the first byte source started it; `stopped` once the player closed.
    private let state = Mutex<(server: MpvByteServer?, stopped: Bool)>((nil, false))

    /// The path or the URL mpv opens for `item`; `request` names what is asked, for errors.
    func target(of item: PlaybackItem, for request: String) throws(MpvError) -> String {
        switch item.source {
        case .file(let path): return path
        case .url(let url): return url.absoluteString
        case .bytes(let source):
            let server = try state.withLock { state throws(MpvError) -> MpvByteServer in
                if let server = state.server { return server }
                guard !state.stopped else { throw .invalidRequest("\(request) \(item.identifier)", "the player is closed") }
                let started = try MpvByteServer()
                state.server = started
                return started
            }
            return server.serve(source, name: item.identifier).absoluteString
        }
    }

    /// Like `target(of:for:)`, and a local file must be there (mpv would only say "loading
    /// failed").
    func checkedTarget(of item: PlaybackItem, for request: String) throws(MpvError) -> String {
        let target = try target(of: item, for: request)
        if case .file(let path) = item.source, !MediaLocation.isURL(path), !FileManager.default.fileExists(atPath: path) {
            throw .invalidRequest("\(request) \(item.identifier)", "there is no file at \(path)")
        }
        return target
    }

    /// Stops the server, if one started (mpv has gone: nobody reads through it any more).
    func stop() {
        state.withLock { state in
            state.stopped = true
            return state.server
        }?.stop()
    }
}
