import Foundation
import Synchronization
import TandemClock
import TandemPlayback

/// A real mpv, driven through its JSON IPC, that follows a group's shared timeline.
///
/// mpv cannot present frames on an exact schedule, so the player is corrected instead: each
/// command from the coordinator lines mpv up (seek, speed, unpause at the command's instant), and
/// a correction loop measures mpv's position every `correctionInterval` against where the
/// timeline says it should be, and nudges its speed or seeks, as `CorrectionPolicy` decides.
///
/// A person may control playback in mpv itself (its keys, its on-screen controls): a pause, seek
/// or speed change made there is proposed to the group, as Syncplay does. Changes that Tandem
/// made (the group's commands, the correction loop's nudges and seeks) never echo back as
/// proposals: an `MpvRequestLedger` tells them apart.
///
/// ```swift
/// var options = MpvPlayer.Options()
/// options.extraArguments = ["--vo=null", "--ao=null"]
/// let player = try await MpvPlayer.launch(file: "movie.mp4", options: options)
/// player.playbackCoordinator.coordinateWithSession(session)
/// ...
/// await player.close()
/// ```
public final class MpvPlayer: PlaybackCoordinatorDelegate, @unchecked Sendable {
    /// How to run mpv and keep it in sync.
    public struct Options: Sendable {
        /// mpv's IPC socket, so that other tools can watch and control mpv too; by default a
        /// fresh temporary path.
        public var ipcPath: String?
        /// More mpv options (`--vo=null --ao=null` runs headless).
        public var extraArguments: [String] = []
        /// The item's identifier in the group; by default the file's name.
        public var itemIdentifier: String?
        /// The mpv binary.
        public var executable = "/usr/bin/mpv"
        /// When to nudge and when to seek.
        public var correctionPolicy = CorrectionPolicy()
        /// How often the correction loop measures mpv while it plays.
        public var correctionInterval: Duration = .milliseconds(250)
        /// How far ahead of the frame on screen mpv's `time-pos` reads while playing (ns),
        /// subtracted from each measurement; nil: half a frame, which is what mpv 0.35 shows
        /// (its position steps a frame at a time, and leads the elapsed time by 0 to 1 frame).
        public var positionLead: Int64?
        /// How long mpv may take to start and load the file.
        public var startTimeout: Duration = .seconds(10)

        /// The defaults: mpv's own window and sound, a temporary socket, the default policy.
        public init() {}
    }

    /// The coordinator that drives this player: `player.playbackCoordinator.coordinateWithSession(session)`.
    public let playbackCoordinator: PlaybackCoordinator
    /// The item's identifier in the group.
    public let itemIdentifier: String
    /// The mpv process.
    public let process: MpvProcess
    /// The file's duration (ns), as mpv reads it.
    public let duration: Int64?

    /// Where mpv's IPC server listens.
    public var ipcPath: String { process.ipcPath }
    /// The item this player has.
    public var currentItemIdentifier: String? { itemIdentifier }

    let options: Options
    let connection: MpvConnection
    let state: Mutex<DriverState>
    let positionLead: Int64
    private let jobs: AsyncStream<Job>.Continuation
    private let jobStream: AsyncStream<Job>
    private let tasks = Mutex<[Task<Void, Never>]>([])
    private let eventTask = Mutex<Task<Void, Never>?>(nil)

    /// What the driver knows, shared by the command queue, the correction loop and the events.
    struct DriverState {
        var ledger: MpvRequestLedger
        var policy: CorrectionPolicy
        var statistics = MpvStatistics()
        /// The rate of the last play command carried out; 0 once paused.
        var groupRate: Double = 0
        /// The speed last asked of mpv.
        var requestedSpeed: Double
        /// The raw monotonic instant before which the correction loop leaves mpv alone (it is
        /// starting, or landing from a seek).
        var settleUntil: Int64 = 0
        /// The newest command's serial number; older commands stop waiting when it changes.
        var latestCommand = 0
        /// A person's change was proposed: commands of this version or older are stale, and the
        /// correction loop waits, until the group answers or the time passes.
        var hold: (version: UInt64, until: Int64)?
        /// How long a seek takes to land while playing (ns): seeks aim that far ahead.
        var seekLead: Int64 = 80_000_000
        /// How many times playback restarted (seeks landed).
        var restarts = 0
        var tickQueued = false
        var closed = false
    }

    enum Job {
        case command(PlaybackCommand, serial: Int)
        case tick
    }

    // MARK: Starting and stopping

    /// Starts mpv on `file`, paused at the start, and waits until it has loaded it.
    public static func launch(file: String, options: Options = Options()) async throws -> MpvPlayer {
        let launchedAt = MonotonicClock.now()
        let process = try MpvProcess(file: file, ipcPath: options.ipcPath, extraArguments: options.extraArguments,
                                     executable: options.executable)
        var connection: MpvConnection?
        do {
            let ipc = try await MpvConnection.connect(path: process.ipcPath, timeout: options.startTimeout) { process.isRunning }
            connection = ipc
            let events = ipc.events
            for property in ["pause", "speed", "time-pos", "seeking", "eof-reached"] { try await ipc.observe(property) }
            try await waitUntilLoaded(ipc, process: process, timeout: options.startTimeout)
            let paused = try await ipc.get("pause").bool ?? true
            let speed = try await ipc.get("speed").double ?? 1
            let fps = (try? await ipc.get("container-fps"))?.double
            let duration = (try? await ipc.get("duration"))?.double.map { Int64(($0 * 1e9).rounded()) }
            let lead = options.positionLead ?? fps.map { $0 > 0 ? Int64(5e8 / $0) : 0 } ?? 0
            let player = MpvPlayer(process: process, connection: ipc, options: options, file: file, paused: paused,
                                   speed: speed, positionLead: lead, duration: duration, launchedAt: launchedAt)
            player.start(events: events)
            return player
        } catch {
            let said = process.logTail()
            connection?.close()
            await process.terminate()
            throw MpvError.launch(process.commandLine.joined(separator: " "), "\(error)" + (said.isEmpty ? "" : "; mpv said: \(said)"))
        }
    }

    /// Waits until mpv has a position and is not seeking: the file is loaded and shown.
    private static func waitUntilLoaded(_ ipc: MpvConnection, process: MpvProcess, timeout: Duration) async throws {
        let attempts = max(1, Int(timeout / .milliseconds(20)))
        for _ in 0..<attempts {
            if (try? await ipc.get("time-pos"))?.double != nil, (try? await ipc.get("seeking"))?.bool == false { return }
            guard process.isRunning else { throw MpvError.disconnected(process.ipcPath, "mpv exited while loading the file") }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw MpvError.timeout("loading the file", "no position after \(timeout)")
    }

    private init(process: MpvProcess, connection: MpvConnection, options: Options, file: String, paused: Bool, speed: Double,
                 positionLead: Int64, duration: Int64?, launchedAt: Int64) {
        self.process = process
        self.connection = connection
        self.options = options
        self.positionLead = positionLead
        self.duration = duration
        itemIdentifier = options.itemIdentifier ?? URL(fileURLWithPath: file).lastPathComponent
        var ledger = MpvRequestLedger(paused: paused, speed: speed)
        // Loading the file was a seek of ours, whose report may still be on its way.
        ledger.requestSeek(to: 0, at: launchedAt)
        state = Mutex(DriverState(ledger: ledger, policy: options.correctionPolicy, requestedSpeed: speed))
        (jobStream, jobs) = AsyncStream.makeStream(of: Job.self)
        playbackCoordinator = PlaybackCoordinator()
        playbackCoordinator.delegate = self
    }

    private func start(events: AsyncStream<MpvEvent>) {
        let jobStream = jobStream
        let interval = options.correctionInterval
        eventTask.withLock {
            $0 = Task { [weak self] in
                for await event in events {
                    guard let self else { return }
                    await self.handle(event)
                }
            }
        }
        tasks.withLock {
            $0 = [
                Task { [weak self] in
                    for await job in jobStream {
                        guard let self else { return }
                        switch job {
                        case .command(let command, let serial): await self.carryOut(command, serial: serial)
                        case .tick: await self.correct()
                        }
                    }
                },
                // The correction loop's clock: one measurement queued at a time, behind commands.
                Task { [weak self] in
                    while !Task.isCancelled {
                        try? await Task.sleep(for: interval)
                        guard let self else { return }
                        let queue = self.state.withLock { state in
                            defer { state.tickQueued = true }
                            return !state.tickQueued && !state.closed
                        }
                        if queue { self.jobs.yield(.tick) }
                    }
                },
            ]
        }
    }

    deinit {
        jobs.finish()
        for task in tasks.withLock({ $0 }) { task.cancel() }
        eventTask.withLock { $0 }?.cancel()
    }

    /// Stops following the group, quits mpv (or kills it if it does not quit) and removes its
    /// temporary files.
    public func close() async {
        let first = state.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
        guard first else { return }
        jobs.finish()
        for task in tasks.withLock({ $0 }) { task.cancel() }
        if process.isRunning { _ = try? await connection.command(["quit"]) }
        connection.close()
        await process.terminate()
        eventTask.withLock { $0 }?.cancel()
    }

    /// Returns once mpv has gone: it quit (a person closed it) or was closed.
    public func waitUntilExited() async {
        await eventTask.withLock { $0 }?.value
    }

    /// What the player has done so far.
    public var statistics: MpvStatistics { state.withLock { $0.statistics } }

    // MARK: The coordinator's side

    /// Queues `command`; mpv carries the commands out in order. The command is completed at once,
    /// so that the coordinator never waits for mpv to start at a command's instant.
    public func playbackCoordinator(_ coordinator: PlaybackCoordinator, didIssue command: PlaybackCommand,
                                    completion: @escaping @Sendable () -> Void) {
        let serial = state.withLock { state in
            state.latestCommand += 1
            return state.latestCommand
        }
        jobs.yield(.command(command, serial: serial))
        completion()
    }

    /// Marks the tick as taken, so that the loop queues the next one.
    func takeTick() {
        state.withLock { $0.tickQueued = false }
    }
}
