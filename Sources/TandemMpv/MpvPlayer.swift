import Foundation
import Synchronization
import Tandem
import TandemClock
import TandemPlayback
import TandemMediaTypes
import TandemNet

/// A real mpv, driven through its JSON IPC, that follows a group's shared timeline.
///
/// mpv cannot present frames on an exact schedule, so the player lines mpv up and corrects it
/// instead. To start on a timeline (a play, a seek while playing, a large error) mpv is paused,
/// seeked exactly near where the timeline will be once the seek has landed, and unpaused at the
/// instant the timeline reaches the frame mpv landed on, less mpv's own start latency, which the
/// player measures at each start. While it plays, mpv's position is measured every
/// `correctionInterval` against where the timeline says it should be, and its speed nudged or
/// it is started afresh, as `CorrectionPolicy` decides.
///
/// Every one of these decisions is `MpvMachine`'s, a pure value on virtual time; the player is
/// its shell (`MpvPlayer+Shell.swift`): on a loop of its own (`tandem-mpv`, one thread), it
/// hands the machine mpv's reports, the readings it asked for, the coordinator's commands and
/// the wake-ups it asked for, and carries out its directives: requests to mpv over its IPC
/// socket, one timer, the coordinator's completions and proposals, a stall's suspension.
///
/// Given a `PresentationLog`, the player writes each reading of mpv's position while it is
/// coordinated (at least every `readingInterval`), so that benchmarks can measure how far apart
/// mpv players are: `MpvPlayer+Readings.swift` says what a reading is and how precise.
///
/// A person may control playback in mpv itself (its keys, its on-screen controls): a pause, seek
/// or speed change made there is proposed to the group, as Syncplay does. Changes that Tandem
/// made (the group's commands, the correction loop's nudges and seeks) never echo back as
/// proposals: an `MpvRequestLedger` tells them apart.
///
/// A program controls it as it would an AVPlayer (`MpvPlayer+Transport.swift`): `play()`,
/// `pause()`, `seek(to:)`, `rate` (and their throwing forms) and `replaceCurrentItem(with:)` go
/// to the group once coordinated, and to mpv at once otherwise. The item can change (`MpvPlayer+Items.swift`):
/// mpv loads a file or an `http(s)` URL itself, and reads a byte source (a streamed item) from
/// the player's `MpvByteServer` on 127.0.0.1. A URL never goes on mpv's command line, which every
/// local user can read: mpv is given it over its IPC socket.
///
/// ```swift
/// var options = MpvPlayer.Options()
/// options.extraArguments = ["--vo=null", "--ao=null"]
/// let player = try await MpvPlayer.launch(item: PlaybackItem(file: "movie.mp4"), options: options)
/// player.playbackCoordinator.coordinateWithSession(session)
/// player.play()   // every participant plays
/// ...
/// await player.close()
/// ```
///
/// Why unchecked: the `@Published` wrappers' storage is a `var`, as Swift requires of every
/// property wrapper, though it is never reassigned (the wrapper's setter is `nonmutating` and its
/// storage locks its own state); marked plainly `Sendable`, the class is refused for that storage.
/// Every other stored property is a `let` of a `Sendable` type: the machine is driven on the
/// player's loop (`loop`) alone, and the rest of the mutable state sits in `Mutex`es (`state`,
/// `items`, the exit task).
public final class MpvPlayer: PlaybackCoordinatorDelegate, @unchecked Sendable {
    /// How to run mpv and keep it in sync.
    public struct Options: Sendable {
        /// mpv's IPC socket, so that other tools can watch and control mpv too; by default a
        /// fresh temporary path.
        public var ipcPath: String?
        /// More mpv options (`--vo=null --ao=null` runs headless).
        public var extraArguments: [String] = []
        /// The item's identifier in the group, for `launch(file:)`; by default the file's name
        /// (`launch(item:)` takes the item's own).
        public var itemIdentifier: String?
        /// The mpv binary.
        public var executable = "/usr/bin/mpv"
        /// When to nudge and when to seek, for a file with sound, whose position is read to a
        /// fraction of a ms: by default within ±0.5 ms nothing, a nudge from 1.5 ms, a fresh
        /// start beyond 250 ms (see `CorrectionPolicy`).
        public var correctionPolicy = CorrectionPolicy()
        /// The same for a file without sound, whose position is read only to half a frame
        /// (`MpvPlayer+Readings.swift`): by default within ±15 ms nothing, a nudge from 40 ms,
        /// a fresh start beyond 400 ms.
        public var soundlessCorrectionPolicy = CorrectionPolicy(deadband: 15_000_000, correctionThreshold: 40_000_000,
                                                                seekThreshold: 400_000_000)
        /// How often the correction loop measures mpv while it plays.
        public var correctionInterval: Duration = .milliseconds(250)
        /// How far ahead of the elapsed media time mpv's `time-pos` reads while playing (ns),
        /// subtracted from the measurements that fall back to it (a file without sound);
        /// nil: minus half a frame when mpv renders at display time (`time-pos` is the frame
        /// on screen, which lags the elapsed time by 0 to 1 frame), else half a frame (mpv
        /// 0.35 hands each frame over about a frame before it shows it, and its position leads
        /// the elapsed time by 0 to 1 frame).
        public var positionLead: Int64?
        /// Whether mpv renders each frame at its display time (`--video-timing-offset=0`, among
        /// Tandem's own options, which `extraArguments` may override), rather than up to 50 ms
        /// before it, mpv's default, after which its video output blocks until the display time
        /// and shows it (mpv's manual). By default it does, so that `time-pos`, the reading of
        /// what is on screen (the frame-flip probe's, and any other tool's), changes when the
        /// frame shows: rendered ahead, it changes when mpv starts rendering, at a playback-loop
        /// wake-up 0 to 50 ms before, and one mpv's flips read up to ±16.5 ms off a straight
        /// line at 30 frames/s; rendered at display time, within ±0.6 ms, with `--vo=null` as
        /// with `--vo=x11` under Xvfb (mpv 0.35, 150 frames each; docs/BENCHMARKS.md's frame-flip probe). The price is
        /// the render before each flip: nothing headless, a few ms of drawing in a window, the
        /// same on every peer.
        public var rendersAtDisplayTime = true
        /// When mpv keeps the pitch of sound played faster or slower (`MpvPitchCorrection`): by
        /// default off while the group's rate is 1, so that the correction loop's nudges about 1
        /// resample (mpv's time-stretch filter, in at any speed but exactly 1, would come and go
        /// with them, and the sound's place with its delay), and on at any other rate, switched
        /// while mpv is paused to start on the new rate. An `--audio-pitch-correction` among
        /// `extraArguments` wins: what it says holds at every rate.
        public var pitchCorrection = MpvPitchCorrection.followingRate
        /// Where to write the readings of mpv's position (`"reading": true` records), if
        /// anywhere. The caller owns the log: `close()` flushes it, the caller closes it.
        public var presentationLog: PresentationLog?
        /// How often mpv's position is read for the presentation log (besides the correction
        /// loop's and the commands' own readings, which are logged too).
        public var readingInterval: Duration = .milliseconds(80)
        /// How long mpv may take to start and load the file.
        public var startTimeout: Duration = .seconds(10)
        /// How a person's change made in mpv (a key, the mouse, another IPC client) goes to the
        /// group: handed the proposal, it makes it now, or later, or never, saying so itself (a
        /// watch party holds changes while the relay is away and sends them on its return if
        /// still fresh). A proposal it throws from is refused at once, and mpv rejoins the
        /// group's timeline. Nil proposes at once. mpv is held for the group's answer as long as
        /// for a proposal made at once, after which it follows the group again.
        public var proposalGate: (@Sendable (_ proposal: @escaping @Sendable () throws -> Void) throws -> Void)?
        /// How much earlier than the group's timeline mpv plays, in nanoseconds, for an output
        /// that lags (a Bluetooth headset, a soundbar): positive plays sound and picture
        /// earlier, negative later, within ±`MpvPlayer.maximumLatencyOffset`; 0 by default.
        /// Starts aim at the shifted instants and the correction loop at the timeline shifted
        /// by it. It is this player's alone: nothing of it reaches the group.
        public var latencyOffset: Int64 = 0
        /// Whether mpv's window takes the group's keys of the terminal's key table (space and `p`
        /// play or pause, ← and → seek, `>`, Enter and `<` the next and previous items, `[`, `]`
        /// and Backspace the rate: `MpvPlayer+UserActions.swift`), each taking effect at the
        /// group's instant; true by default.
        public var bindsQueueKeys = true

        /// The defaults: mpv's own window and sound, a temporary socket, the default policy.
        public init() {}
    }

    /// The coordinator that drives this player: `player.playbackCoordinator.coordinateWithSession(session)`.
    public let playbackCoordinator: PlaybackCoordinator
    /// The mpv process.
    public let process: MpvProcess
    /// The last transport request that failed, as AVPlayer's `error`: `play()`, `pause()`,
    /// `seek(to:)` and setting `rate` return at once and publish their failure here;
    /// `for await error in player.$error.values` hears each. nil until one fails.
    @Published public internal(set) var error: MpvError? = nil
    /// Whether the player plays, is paused, or waits to play, as AVPlayer's
    /// `timeControlStatus`: coordinated, waiting while the group waits (for a suspension, for
    /// the others' pre-roll); `$timeControlStatus.values` hears each change, refreshed as the
    /// group's commands arrive and as the transport is used.
    @Published public internal(set) var timeControlStatus: TimeControlStatus = .paused
    /// Why the player waits to play (`.waitingForCoordinatedPlayback`), as AVPlayer's
    /// `reasonForWaitingToPlay`; nil unless `timeControlStatus` is `.waitingToPlayAtSpecifiedRate`.
    @Published public internal(set) var reasonForWaitingToPlay: WaitingReason? = nil
    /// The last uncoordinated transport request started, which the next one waits for, so that
    /// mpv is asked in the caller's order.
    let transportTail = Mutex<Task<Void, Never>?>(nil)

    /// Where mpv's IPC server listens.
    public var ipcPath: String { process.ipcPath }
    /// The item this player has.
    public var currentItemIdentifier: String? { itemIdentifier }

    let options: Options
    let connection: MpvConnection
    let state: Mutex<DriverState>
    /// The item mpv has loaded and what it is like (`MpvPlayer+Items.swift`), and the items this
    /// participant holds: apart from `state`, so that what is read of the item inside `state`'s
    /// lock (`hasAudio`, `frameDuration`) takes a lock of its own.
    let items: Mutex<ItemState>
    /// What mpv opens for each item, and the server of its byte sources.
    let targets: MpvItemTargets
    /// The player's loop: the machine's inputs and directives, the timer, the readings' replies.
    let loop: EventLoop
    /// Reads mpv's events until its connection ends.
    private let exitTask = Mutex<Task<Void, Never>?>(nil)

    /// What the shell holds: the machine, and what carrying out its directives needs.
    struct DriverState {
        /// The decisions.
        var machine: MpvMachine
        /// The coordinator's completions of the commands handed to the machine, by identity.
        var completions: [UInt64: @Sendable () -> Void] = [:]
        var nextCommand: UInt64 = 1
        /// The one timer: the wake-up the machine asked for last.
        var wake: ScheduledTask?
        /// `readingsCoordinator`'s storage.
        weak var readingsCoordinator: PlaybackCoordinator?
        /// The `.stallRecovery` suspension begun while mpv buffers (`Directive.beginStall`).
        var stallSuspension: PlaybackSuspension?
        /// Who waits for the program's own seeks to end (`MpvMachine.Directive.seekEnded`), by identity.
        var seekEnds: [UInt64: @Sendable (Bool) -> Void] = [:]
        /// Readings written to the presentation log.
        var readings = 0
        var closed = false
    }

    // MARK: Starting and stopping

    /// Starts mpv on `file`, paused at the start, and waits until it has loaded it; the item is
    /// known to the group as `options.itemIdentifier` (by default the file's name). `file` may
    /// also be a URL, which mpv opens itself.
    public static func launch(file: String, options: Options = Options()) async throws -> MpvPlayer {
        let item = MediaLocation.isURL(file) ? try? PlaybackItem(url: URL(string: file) ?? URL(fileURLWithPath: file),
                                                             identifier: options.itemIdentifier) : nil
        return try await launch(item: item ?? PlaybackItem(file: file, identifier: options.itemIdentifier), options: options)
    }

    /// Starts mpv on `item`, paused at the start, and waits until it has loaded it.
    ///
    /// A file is opened as a local file (mpv follows no reference in it); an `http(s)` URL is
    /// handed to mpv as it is, and mpv opens it; a byte source is served to mpv by an
    /// `MpvByteServer` of the player's, under an unguessable loopback URL, and opened as a local
    /// file is. Only a local path goes on mpv's command line: mpv starts with nothing to play and
    /// is given a URL over its IPC socket, so that `ps` shows nobody a secret in it. The item is
    /// known to the group by `item.identifier`; its identity is `item.identity`, or for a file
    /// `MediaIdentity.of(file:)`.
    public static func launch(item: PlaybackItem, options: Options = Options()) async throws -> MpvPlayer {
        let targets = MpvItemTargets()
        let target: String
        do {
            target = try targets.target(of: item, for: "launch mpv on")
        } catch {
            targets.stop()
            throw error
        }
        let onCommandLine: String? = MediaLocation.isURL(target) ? nil : target
        let launchedAt = HostInstant.now()
        let process: MpvProcess
        do {
            process = try MpvProcess(file: onCommandLine, ipcPath: options.ipcPath,
                                     extraArguments: (options.rendersAtDisplayTime ? MpvProcess.displayTimeArguments : [])
                                         + options.effectivePitchCorrection.launchArguments + options.extraArguments,
                                     restrictsReferences: opensAsReceivedMedia(item), executable: options.executable)
        } catch {
            targets.stop()
            throw error
        }
        var connection: MpvConnection?
        do {
            let ipc = try await MpvConnection.connect(path: process.ipcPath, timeout: options.startTimeout,
                                                      expectedPeer: process.processIdentifier) { process.isRunning }
            connection = ipc
            let events = ipc.events
            for property in observedProperties { try await ipc.observe(property) }
            if onCommandLine == nil { _ = try await ipc.command(["loadfile", .string(target), "replace"]) }
            try await waitUntilLoaded(ipc, process: process, timeout: options.startTimeout)
            let paused = try await ipc.get("pause").bool ?? true
            let speed = try await ipc.get("speed").double ?? 1
            let loaded = await LoadedItem.probe(item, target: target, ipc: ipc, options: options)
            if loaded.hasAudio, options.effectivePitchCorrection == .always { await keepTempoFilter(ipc) }
            if options.bindsQueueKeys { await bindQueueKeys(ipc) }
            let player = try MpvPlayer(process: process, connection: ipc, options: options, loaded: loaded, targets: targets, paused: paused,
                                   speed: speed, launchedAt: launchedAt)
            player.start(events: events)
            return player
        } catch {
            let said = process.logTail()
            connection?.close()
            await process.terminate()
            targets.stop()
            throw MpvError.launch(process.commandLine.joined(separator: " "), "\(error)" + (said.isEmpty ? "" : "; mpv said: \(said)"))
        }
    }

    /// The properties whose changes mpv reports to the player. Not `time-pos`: observed, it
    /// costs mpv a property read, a JSON message and a socket write on its core thread at every
    /// frame, just as the frame goes out, and wakes this process's reader each time; nothing
    /// reads it (the frame-flip probe measured the cost in the tail: `FrameFlipBenchmark`).
    static let observedProperties = ["pause", "speed", "eof-reached", "paused-for-cache"]

    /// The tempo filters mpv's audio chain may have.
    static let tempoFilters: Set<String> = ["scaletempo", "scaletempo2", "rubberband"]

    /// Adds `scaletempo2` to mpv's audio chain for good (`MpvPitchCorrection.always`), unless
    /// a tempo filter is there already or pitch correction is off. Only the sound is
    /// reconfigured: no seek, no restart.
    static func keepTempoFilter(_ ipc: MpvConnection) async {
        guard (try? await ipc.get("audio-pitch-correction"))?.bool != false,
              case .array(let filters)? = try? await ipc.get("af"),
              !filters.contains(where: { $0["name"]?.string.map(tempoFilters.contains) ?? false }) else { return }
        _ = try? await ipc.command(["af", "add", "@tandem-tempo:scaletempo2"])
    }

    /// Waits until mpv has a position and is not seeking: the file is loaded and shown.
    static func waitUntilLoaded(_ ipc: MpvConnection, process: MpvProcess, timeout: Duration) async throws {
        let attempts = max(1, Int(timeout / .milliseconds(20)))
        for _ in 0..<attempts {
            if (try? await ipc.get("time-pos"))?.double != nil, (try? await ipc.get("seeking"))?.bool == false { return }
            guard process.isRunning else { throw MpvError.disconnected(process.ipcPath, "mpv exited while loading the file") }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw MpvError.timeout("loading the file", "no position after \(timeout)")
    }

    private init(process: MpvProcess, connection: MpvConnection, options: Options, loaded: LoadedItem, targets: MpvItemTargets,
                 paused: Bool, speed: Double, launchedAt: HostInstant) throws {
        self.process = process
        self.targets = targets
        self.connection = connection
        self.options = options
        items = Mutex(ItemState(loaded: loaded))
        var configuration = MpvMachine.Configuration()
        configuration.policy = options.correctionPolicy
        configuration.soundlessPolicy = options.soundlessCorrectionPolicy
        configuration.correctionInterval = TimeSpan(nanoseconds: options.correctionInterval.nanoseconds)
        configuration.rendersAtDisplayTime = options.rendersAtDisplayTime
        configuration.pitchCorrection = options.effectivePitchCorrection
        // Loading the file was a seek of ours, whose report may still be on its way.
        var machine = MpvMachine(configuration: configuration, item: loaded.machineItem, paused: paused, speed: speed,
                                 now: launchedAt)
        machine.correctsPitch = options.effectivePitchCorrection.corrects(atRate: 0)
        machine.latencyOffset = TimeSpan(nanoseconds: MpvPlayer.clampedLatencyOffset(options.latencyOffset))
        state = Mutex(DriverState(machine: machine))
        loop = try EventLoop(name: "tandem-mpv")
        playbackCoordinator = PlaybackCoordinator()
        // mpv seeks over its IPC, in a process of its own: a joiner gets the whole pre-roll.
        playbackCoordinator.joinLead = playbackCoordinator.prerollLead
        playbackCoordinator.delegate = self
    }

    private func start(events: AsyncStream<MpvEvent>) {
        loop.start()
        connection.onEvent { [weak self] event in
            guard let event else { return }
            self?.loop.execute { [weak self] in self?.handle(event) }
        }
        // Lives as long as mpv's connection: `waitUntilExited()` waits for it.
        exitTask.withLock { $0 = Task { for await _ in events {} } }
        if options.presentationLog != nil { loop.execute { [weak self] in self?.scheduleLogReading() } }
    }

    deinit {
        exitTask.withLock { $0 }?.cancel()
        let loop = loop
        if loop.inLoop { Thread.detachNewThread { loop.stop() } } else { loop.stop() }
    }

    /// Stops following the group, quits mpv (or kills it if it does not quit) and removes its
    /// temporary files.
    public func close() async {
        let first = state.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
        guard first else { return }
        let (suspension, completions, waiters) = state.withLock { state in
            state.wake?.cancel()
            defer {
                state.stallSuspension = nil
                state.completions = [:]
                state.seekEnds = [:]
            }
            return (state.stallSuspension, Array(state.completions.values), Array(state.seekEnds.values))
        }
        suspension?.end()
        for completion in completions { completion() }
        for waiter in waiters { waiter(false) }
        if !loop.inLoop { loop.stop() }
        if process.isRunning { _ = try? await connection.command(["quit"]) }
        connection.close()
        await process.terminate()
        targets.stop()
        exitTask.withLock { $0 }?.cancel()
        options.presentationLog?.flush()
    }

    /// Returns once mpv has gone: it quit (a person closed it) or was closed.
    public func waitUntilExited() async {
        await exitTask.withLock { $0 }?.value
    }

    /// What the player has done so far.
    public var statistics: MpvStatistics {
        state.withLock { state in
            var statistics = state.machine.statistics
            statistics.readings = state.readings
            return statistics
        }
    }

    /// The largest latency offset either way: 1 s.
    public static let maximumLatencyOffset: Int64 = 1_000_000_000

    /// How much earlier than the group's timeline mpv plays, in nanoseconds
    /// (`Options.latencyOffset`): set it at any time, clamped to ±`maximumLatencyOffset`, and
    /// the corrections move mpv to it (a nudge of its speed for a small change, a start afresh
    /// for a large one); the next start aims at it at once.
    public var latencyOffset: Int64 {
        get { state.withLock { $0.machine.latencyOffset.nanoseconds } }
        set { state.withLock { $0.machine.latencyOffset = TimeSpan(nanoseconds: MpvPlayer.clampedLatencyOffset(newValue)) } }
    }

    static func clampedLatencyOffset(_ offset: Int64) -> Int64 {
        min(max(offset, -maximumLatencyOffset), maximumLatencyOffset)
    }

    // MARK: The coordinator's side

    /// Hands `command` to the machine, on the player's loop, with its completion: a seek in
    /// anticipation of playback completes once mpv has landed on its target (a pre-roll: the
    /// group's play waits for it), unless it answers a person's change in this mpv; every other
    /// command completes at once, so that the coordinator never waits for mpv to start at a
    /// command's instant (`MpvMachine.onCommand(_:id:now:)` decides).
    public func playbackCoordinator(_ coordinator: PlaybackCoordinator, didIssue command: PlaybackCommand,
                                    completion: @escaping @Sendable () -> Void) {
        let id: UInt64? = state.withLock { state in
            guard !state.closed else { return nil }
            let id = state.nextCommand
            state.nextCommand += 1
            state.completions[id] = completion
            return id
        }
        guard let id else {
            completion()
            return
        }
        input { machine, now in machine.onCommand(command, id: id, now: now) }
        refreshTimeControl()
    }

    /// Refreshes `timeControlStatus` and `reasonForWaitingToPlay` from the group, or uncoordinated
    /// from what mpv was last asked.
    func refreshTimeControl() {
        let (rate, stalled) = state.withLock { ($0.machine.paused ? 0 : $0.machine.requestedSpeed, $0.stallSuspension != nil) }
        let (status, reason) = playbackCoordinator.timeControl(playerRate: rate, stalled: stalled)
        // The reason first: whoever hears the status change reads the reason that goes with it.
        if reasonForWaitingToPlay != reason { reasonForWaitingToPlay = reason }
        if timeControlStatus != status { timeControlStatus = status }
    }
}
