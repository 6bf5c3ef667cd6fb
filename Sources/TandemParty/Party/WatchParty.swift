import Foundation
import Synchronization
import Tandem
import TandemClock
import TandemMedia
import TandemMpv
import TandemMediaTypes
import TandemPlayback

/// One participant's side of a watch party: a joined `WatchTogether` session, the player that
/// shows it (the built-in player or a real mpv) under the session's playback coordinator, the
/// group's queue, streaming of items this participant lacks, chat and a latency offset, with
/// everything that happens reported as typed events (`events`).
///
/// Make one for a joined session, read `events`, and `run()` it: it returns when the session is
/// over for this participant. Meanwhile the methods do what a person does (play, pause, seek, a
/// rate, next and previous item, queue a file, say something, the latency offset, leave, end).
/// `tandem host` and `tandem join` are its terminal front; the WatchTogether sample another.
public final class WatchParty: Sendable {
    /// What to watch, and how.
    public struct Configuration: Sendable {
        /// Which player shows the media.
        public enum Player: String, Sendable {
            /// The built-in headless FFmpeg player.
            case builtin
            /// A real mpv, driven through its JSON IPC.
            case mpv
        }

        /// This participant's media: files (the first played first, the others queued by the
        /// host; a joiner's matched to the group's items by content), or an `http(s)` URL the
        /// host plays alone; empty for a joiner that streams the group's item.
        public var media: [String]
        /// Whether this participant started the session (it appends its media to the queue).
        public var isHost: Bool
        /// The player (default: built-in).
        public var player: Player = .builtin
        /// Who carries out the group's commands on the player: nil (the default), the player
        /// itself, the coordinator's way (each change at its effective instant, corrected); or a
        /// benchmark's baseline that drives the player from outside (`WatchPartyFollower`,
        /// `TandemBench`'s `OnReceipt` for `--follow on-receipt`).
        public var follower: (any WatchPartyFollower)?
        /// How much earlier than the group's timeline this player presents, in ms
        /// (`latencyOffsets`, default 0): positive for an output that lags. Local only.
        public var latencyOffset = 0
        /// Never stream the group's item from a holder (default: stream it when the media
        /// does not hold it).
        public var refusesStreaming = false
        /// Open the group's `http(s)` item without asking (default: ask `confirmURL`).
        public var allowsURLs = false
        /// Asked before a joiner opens the group's `http(s)` item itself, without `allowsURLs`:
        /// throws to refuse it. Nil refuses every URL item.
        public var confirmURL: (@Sendable (URL) throws -> Void)?
        /// A presentation log to write (the built-in player's frames, or mpv's readings).
        public var presentationLog: String?
        /// More sinks for the built-in player's frames (a terminal renderer, a counter).
        public var videoSinks: [any VideoSink] = []
        /// Bench only: the built-in player decodes this many times slower (default 1).
        public var decodeThrottle: Double = 1
        /// Whether the built-in player keeps the processors awake before its frames
        /// (`HeadlessPlayer.Options.wakeGuard`; off by default).
        public var wakeGuard = false
        /// Where the built-in player's sound plays (`HeadlessPlayer.Options.audioOutput`):
        /// `.none` by default; a front chooses `.pulse` at a terminal.
        public var audioOutput: AudioOutputKind = .none
        /// The sink the built-in player's sound plays on, by name (nil: the server's default).
        public var audioDevice: String?
        /// The built-in player's volume in percent (0...150; default 100).
        public var volume = 100
        /// The built-in player's audio log (`AudioLog`), if any.
        public var audioLog: String?
        /// mpv's IPC socket (nil: a temporary one).
        public var mpvIPC: String?
        /// More mpv options.
        public var mpvArguments: [String] = []
        /// The mpv executable (nil: `MpvPlayer.Options`'s).
        public var mpvExecutable: String?
        /// Where the built-in player's lines for the person go (its sound output could not
        /// start, and it plays without sound): nil, standard error.
        public var playerNotice: (@Sendable (String) -> Void)?
        /// Report a `sync` event every five seconds (built-in player).
        public var reportsSync = false
        /// Called once the player has closed (it presents nothing more), before the party waits
        /// for its departure to be delivered: a front stops what showed the frames (a terminal
        /// picture) then, not when `run()` returns.
        public var playerClosed: (@Sendable () -> Void)?
        /// Called once the coordinator coordinates with the session: the group's history (for a
        /// late joiner, every change before it came) follows as events, in one burst. A front
        /// that sums the history up rather than telling it (`PartyNarrator`) learns here when
        /// to expect it.
        public var coordinationBegan: (@Sendable () -> Void)?
        /// The policy the host sets once the party runs (`tandem host --control`): who may
        /// control playback and who may end the party. Nil sets none (the session's default,
        /// everyone); a joiner's is not used.
        public var control: SessionPolicy?

        /// The host's cap on how long any suspension (a participant buffering, scrubbing…) holds
        /// the group, proposed to the group once it coordinates (`PlaybackCoordinator.maximumHold`);
        /// nil (the default): each reason's own (`SuspensionReason.defaultHoldLimit`). A joiner's
        /// is not used: the group's comes from its history.
        public var maximumHold: TimeSpan?

        /// The range of `latencyOffset` and of what changes it (ms).
        public static let latencyOffsets = -1_000...1_000

        /// A configuration for `media`, hosting or joining.
        public init(media: [String], isHost: Bool) {
            self.media = media
            self.isHost = isHost
        }
    }

    /// How the session ended for this participant.
    public struct Ending: Sendable {
        /// Why (nil: the session's state stream ended first).
        public var reason: GroupSessionError?
        /// Whether this participant ended the session itself (its own `end` is no error).
        public var endedHere: Bool
    }

    /// The session watched.
    public let session: GroupSession<WatchTogether>
    /// What was asked for.
    public let configuration: Configuration
    /// Everything that happens, in order, until `run()` returns; then it finishes. One stream
    /// for one reader (a second iterating it at once is an error, as with any `AsyncStream`),
    /// buffered without bound: a front reads it for as long as the party runs.
    public let events: AsyncStream<WatchPartyEvent>
    private let sink: AsyncStream<WatchPartyEvent>.Continuation
    /// The player and its coordinator, once the watch has begun.
    let watching = Mutex<Watching?>(nil)
    /// Whether this participant ended the session itself.
    let endedHere = Atomic(false)
    /// Whether `run()` was called: a party runs once.
    private let ran = Atomic(false)
    /// Whether `run()` returned: the methods then act on nothing.
    let over = Atomic(false)
    /// The changes a person made while the relay was away, and what each does.
    let held = Mutex(HeldState())
    /// What each other participant last said of its own health, and when it arrived here.
    let healthReports = Mutex<[UUID: (report: HealthReport, at: ContinuousClock.Instant)]>([:])
    /// The participants the relay was found showing another history than this one's.
    let diverged = Mutex<Set<UUID>>([])
    /// The lines on mpv's screen (`showOnScreen(_:)`), and the texts for it, the newest winning.
    let onScreen = Mutex(OnScreenLines())
    let screenTexts: AsyncStream<[String]>
    let screenSink: AsyncStream<[String]>.Continuation
    /// Work a command leaves to finish later (a stall's end, a throttle's end, a held change's
    /// expiry), run as children of the watch (`later(_:)`).
    let laterWork: AsyncStream<@Sendable () async -> Void>
    let laterSink: AsyncStream<@Sendable () async -> Void>.Continuation

    /// What the methods act on once the watch has begun.
    struct Watching: Sendable {
        var coordinator: PlaybackCoordinator
        var player: HeadlessPlayer?
        var mpv: MpvPlayer?
        var latency: LatencyControl
        /// The built-in player's duration (ns), when it read one.
        var duration: Int64?
        /// How late the built-in player's latest pictures were.
        var lateness: RecentLateness?
    }

    /// A party for `session`, joined already; nothing happens until `run()`.
    public init(session: GroupSession<WatchTogether>, configuration: Configuration) {
        self.session = session
        self.configuration = configuration
        (events, sink) = AsyncStream.makeStream(of: WatchPartyEvent.self)
        (screenTexts, screenSink) = AsyncStream.makeStream(of: [String].self, bufferingPolicy: .bufferingNewest(1))
        (laterWork, laterSink) = AsyncStream.makeStream(of: (@Sendable () async -> Void).self)
    }

    /// Reports `event`.
    func emit(_ event: WatchPartyEvent) { sink.yield(event) }

    /// Reports an internal refusal (a queue entry that could not be added…) as an `error` event.
    func refuse(_ message: String) { emit(.error(.init(message: message))) }

    /// Reports a front's own refusal (a command it could not read or carry out) as an `error`
    /// event, so that it reaches the front's reader of `events` in order with everything the
    /// party reported before it. False once `events` has finished (the party is over): the
    /// front then says it itself.
    @discardableResult
    public func reportRefusal(_ message: String) -> Bool {
        if case .terminated = sink.yield(.error(.init(message: message))) { return false }
        return true
    }

    /// Watches until the session is over for this participant, then closes the player and
    /// returns how it ended. `whileWatching` runs once the player follows the group (a front's
    /// keys, commands, status line) and is cancelled, and awaited, when the session is over.
    /// SIGINT and the like are the front's: it calls `leave()`.
    /// A party runs once: a second call throws a usage error. Once it has returned, the methods
    /// that act on the watch throw "the party is over".
    public func run(whileWatching: @escaping @Sendable () async -> Void = {}) async throws -> Ending {
        guard !ran.exchange(true, ordering: .relaxed) else { throw WatchPartyError.usage("a watch party runs once") }
        defer {
            over.store(true, ordering: .relaxed)
            watching.withLock { $0 = nil }
            sink.finish()
            screenSink.finish()
            laterSink.finish()
        }
        try vetMedia()
        try applyConfiguredPolicy()
        // This participant's files served to those without them; the group's
        // item streamed when this participant's media does not hold it.
        let streaming = startStreaming()
        defer { streaming.close() }
        if configuration.player == .mpv {
            return try await runMpv(streaming: streaming, whileWatching: whileWatching)
        }
        return try await runBuiltin(streaming: streaming, whileWatching: whileWatching)
    }

    /// Runs `work` as a child of the watch: it ends, cancelled, when the watch ends, and nothing
    /// of it runs once the watch is over.
    func later(_ work: @escaping @Sendable () async -> Void) {
        laterSink.yield(work)
    }

    /// The work that runs what `later(_:)` hands over, each as a child of its own, to run for as
    /// long as the watch lasts.
    func followLater() -> @Sendable () async -> Void {
        let work = laterWork
        return {
            await withDiscardingTaskGroup { children in
                for await each in work { children.addTask(operation: each) }
                children.cancelAll()
            }
        }
    }

    /// Runs `body` until the session is over for this participant, then cancels it and waits
    /// for it; reports `left` and returns why.
    func untilOver(whileWatching body: @escaping @Sendable () async -> Void) async -> GroupSessionError? {
        await withTaskGroup(of: Void.self) { front in
            front.addTask { await body() }
            var ending: GroupSessionError?
            for await state in session.$state.values {
                if case .invalidated(let reason) = state {
                    ending = reason
                    break
                }
            }
            if let ending { emit(.left(.init(reason: ending.detail))) }
            front.cancelAll()
            await front.waitForAll()
            return ending
        }
    }

    /// The `joined` event; `streamedAt`, for a streamed item, the instant its stream begins
    /// opening (the event gives its raw monotonic nanoseconds).
    func emitJoined(streamedAt: HostInstant? = nil, player: String? = nil, mpvIPC: String? = nil) {
        emit(.joined(.init(session: session.id.uuidString, participant: session.localParticipant.displayName, item: session.activity.item,
                           player: player, mpvIPC: mpvIPC, streamed: streamedAt.map { _ in true }, monotonicNanoseconds: streamedAt?.nanoseconds)))
    }

    /// The files watched: `media`, or "" alone for a joiner that streams.
    var watchedMedia: [String] { configuration.media.isEmpty ? [""] : configuration.media }

    /// The first file, "" for a joiner that gave none.
    var file: String { watchedMedia[0] }

    /// Whether this participant's first report names no identity, and the queue decides which
    /// of its files it reports: a joiner with several files, whose first need not be the
    /// group's current item.
    var reportsIdentityLate: Bool { !configuration.isHost && watchedMedia.count > 1 }
}
