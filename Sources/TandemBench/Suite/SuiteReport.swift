/// What `tandem bench all` measured: every scenario, each run once with the baseline that acts
/// on receipt and once with the full coordinator, side by side. Durations are milliseconds
/// unless a name says otherwise; series times are seconds from the start of the scenario's
/// script.
public struct SuiteReport: Sendable, Codable, Equatable {
    /// When the suite ran (ISO 8601, UTC).
    public var date: String
    /// The machine it ran on, in one line (kernel, cores, memory).
    public var machine: String
    /// Whether it was the short version (`--quick`).
    public var quick: Bool
    /// The whole suite, seconds.
    public var seconds: Double
    /// Every scenario, in the order it ran.
    public var scenarios: [ScenarioResult]

    /// A report of `scenarios`.
    public init(date: String, machine: String, quick: Bool, seconds: Double, scenarios: [ScenarioResult]) {
        self.date = date
        self.machine = machine
        self.quick = quick
        self.seconds = seconds
        self.scenarios = scenarios
    }
}

/// How each peer follows the group's changes.
public enum SyncMode: String, Sendable, Codable, CaseIterable, Hashable {
    /// The baseline: each peer acts on a change when it arrives, with no clock synchronisation
    /// and no scheduling, as most watch-together tools do.
    case onReceipt = "on-receipt"
    /// Tandem: every change takes effect at one instant of the session clock, on every peer.
    case coordinator

    /// The name a table or a plot shows.
    public var title: String {
        switch self {
        case .onReceipt: "apply on receipt"
        case .coordinator: "tandem"
        }
    }
}

/// One scenario, run by both modes.
public struct ScenarioResult: Sendable, Codable, Equatable {
    /// Its name, as `tandem bench all --scenario NAME` takes it: `steady`, `storm`, ….
    public var name: String
    /// What happens in it, in one sentence.
    public var summary: String
    /// Peers in it from the start (late joiners not counted).
    public var peers: Int
    /// The player: `builtin` or `mpv`.
    public var player: String
    /// The network between each joiner and the relay, in words (`loopback`, `50 ± 20 ms, 2 % loss`).
    public var network: String
    /// The baseline's run, then the coordinator's.
    public var runs: [ModeResult]

    /// A scenario's result.
    public init(name: String, summary: String, peers: Int, player: String, network: String, runs: [ModeResult]) {
        self.name = name
        self.summary = summary
        self.peers = peers
        self.player = player
        self.network = network
        self.runs = runs
    }

    /// The run of `mode`, if it ran.
    public func run(_ mode: SyncMode) -> ModeResult? {
        runs.first { $0.mode == mode }
    }
}

/// One mode's run of a scenario.
public struct ModeResult: Sendable, Codable, Equatable {
    /// How the peers followed changes.
    public var mode: SyncMode
    /// Inter-peer spread: for each frame every peer showed, the latest presented instant minus
    /// the earliest (ms).
    public var spread: Percentiles?
    /// Clock error: how far each peer scheduled each frame from the instant the shared timeline
    /// gives it, in absolute value (ms). Nil for the baseline, which has no clock to be wrong.
    public var clockError: Percentiles?
    /// From a command being written to a peer to the instant it took effect (ms): for the
    /// coordinator the change's effective instant, for the baseline the last peer's first frame
    /// after it.
    public var commandToEffect: Percentiles?
    /// From a join or a seek to the first of ten frames in a row that every peer presented
    /// within one millisecond of each other (ms), over those that got there.
    public var convergence: Percentiles?
    /// Joins and seeks whose convergence was measured.
    public var convergenceEvents: Int
    /// Of those, how many never got within one millisecond before the next change.
    public var notConverged: Int
    /// Frames presented, all peers together (the built-in player's; mpv reports none).
    public var framesPresented: Int
    /// Frames dropped because they were already late, all peers together (the built-in player's).
    public var framesDropped: Int
    /// Each peer process's CPU and memory.
    public var peers: [PeerUsage]
    /// The spread over time: one point per frame every peer showed.
    public var spreadSeries: [SeriesPoint]
    /// Each peer's signed clock error over time (ms; positive: scheduled late). Empty for the
    /// baseline.
    public var clockErrorSeries: [PeerSeries]
    /// What went wrong during the run (a peer that failed, a command that never took effect).
    public var errors: [String]
    /// Stalls the players noticed on their own (`stalled` events), all peers together; nil when
    /// none did.
    public var stalls: Int?
    /// Of those, how many the group did not wait for (the baseline never waits).
    public var unansweredStalls: Int?
    /// From a player's stall to the instant the group's waiting took effect (ms).
    public var stallToWait: Percentiles?
    /// The spread of the frames shown after the group resumed from waiting, until the next
    /// change (ms).
    public var resumedSpread: Percentiles?
    /// Proposals a raw client made in the run (`long-session`), and in how many seconds.
    public var rawProposals: Int?
    /// How long the raw client took to make them, seconds.
    public var rawProposalSeconds: Double?
    /// Items the group advanced to (`queue`), and the spread over the first 50 frames of each
    /// (ms), all together.
    public var transitions: Int?
    /// The spread over the first 50 frames of each next item (ms).
    public var transitionSpread: Percentiles?
    /// How the others played on once the host left (`host-leaves`).
    public var hostLeave: HostLeaveFigures?
    /// How joiners without the file fared (`streamed`).
    public var streamed: StreamedFigures?
    /// What the peers' mpv showed, by the frame-flip probe, and the floor (`mpv`).
    public var frameFlips: FrameFlipFigures?

    /// A mode's result.
    public init(mode: SyncMode, spread: Percentiles?, clockError: Percentiles?, commandToEffect: Percentiles?,
                convergence: Percentiles?, convergenceEvents: Int, notConverged: Int, framesPresented: Int,
                framesDropped: Int, peers: [PeerUsage], spreadSeries: [SeriesPoint], clockErrorSeries: [PeerSeries],
                errors: [String]) {
        self.mode = mode
        self.spread = spread
        self.clockError = clockError
        self.commandToEffect = commandToEffect
        self.convergence = convergence
        self.convergenceEvents = convergenceEvents
        self.notConverged = notConverged
        self.framesPresented = framesPresented
        self.framesDropped = framesDropped
        self.peers = peers
        self.spreadSeries = spreadSeries
        self.clockErrorSeries = clockErrorSeries
        self.errors = errors
    }
}

/// One point of a series over time.
public struct SeriesPoint: Sendable, Codable, Equatable {
    /// Seconds from the start of the scenario's script.
    public var t: Double
    /// The value, ms.
    public var value: Double

    /// The point (`t`, `value`).
    public init(t: Double, value: Double) {
        self.t = t
        self.value = value
    }
}

/// One peer's series over time.
public struct PeerSeries: Sendable, Codable, Equatable {
    /// The peer's name.
    public var peer: String
    /// Its points, in time order.
    public var points: [SeriesPoint]

    /// `peer`'s series.
    public init(peer: String, points: [SeriesPoint]) {
        self.peer = peer
        self.points = points
    }
}

/// What one peer process cost.
public struct PeerUsage: Sendable, Codable, Equatable {
    /// The peer's name.
    public var peer: String
    /// CPU time over wall time while it ran, percent of one core.
    public var cpuPercent: Double?
    /// Its peak resident memory, MiB.
    public var peakMemoryMiB: Double?

    /// `peer`'s usage.
    public init(peer: String, cpuPercent: Double?, peakMemoryMiB: Double?) {
        self.peer = peer
        self.cpuPercent = cpuPercent
        self.peakMemoryMiB = peakMemoryMiB
    }
}
