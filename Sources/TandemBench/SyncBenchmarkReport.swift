/// What `tandem bench sync` measured. Durations are in milliseconds; instants are not reported.
public struct SyncBenchmarkReport: Sendable, Codable {
    /// One peer process and how it ran.
    public struct Peer: Sendable, Codable {
        /// Its participant name.
        public var name: String
        /// The injected offset of its local clock, seconds.
        public var clockOffsetSeconds: Double
        /// The injected drift of its local clock, parts per million.
        public var clockDriftPPM: Double
        /// Frames it presented (from its own statistics event), if it reported them.
        public var presented: Int?
        /// Frames it dropped late, if it reported them.
        public var dropped: Int?
        /// Its exit status; nil when it had to be killed.
        public var exitStatus: Int32?
        /// Whether it saw every timeline change (from its joining on) with the host's version
        /// and effective instant.
        public var agreesOnTimeline: Bool
    }

    /// One scripted command and when it took effect.
    public struct Command: Sendable, Codable {
        /// The line written to the host's standard input.
        public var command: String
        /// The timeline version it became.
        public var version: Int?
        /// From writing the line to the change's effective instant.
        public var toEffect: Double?
        /// From writing the line to the last peer's first frame of the new segment (nil for a pause).
        public var toFirstFrame: Double?
    }

    /// The late joiner.
    public struct LateJoiner: Sendable, Codable {
        /// Its clock and how it ran.
        public var peer: Peer
        /// From starting its process to its `joined` event.
        public var toJoined: Double?
        /// From starting its process to its first presented frame.
        public var toFirstFrame: Double?
        /// From starting its process to the first of ten frames in a row within 1 ms of the others.
        public var toOnTime: Double?
        /// Its error against the others' median from then on (signed: positive is late).
        public var errorAfterOnTime: Percentiles?
        /// Frames compared with the others.
        public var framesCompared: Int
    }

    /// A design target and whether it was met.
    public struct Target: Sendable, Codable {
        /// What is measured.
        public var name: String
        /// The bound, ms.
        public var bound: Double
        /// What was measured, ms.
        public var measured: Double?
        /// Whether `measured` is at most `bound`.
        public var met: Bool
    }

    /// Peers in the session from the start (the host included; the late joiner not).
    public var peers: Int
    /// The clip played.
    public var clip: String
    /// Every peer from the start, the host first.
    public var peerRuns: [Peer]
    /// Inter-peer spread of the instant each frame was presented, over frames every peer showed.
    public var presentedSpread: Percentiles?
    /// The same for the scheduled instants: clock error alone.
    public var scheduledSpread: Percentiles?
    /// Frames every peer showed.
    public var pairedFrames: Int
    /// Frame showings that some peers presented and others did not.
    public var unpairedFrames: Int
    /// The script, command by command.
    public var commands: [Command]
    /// Command to effective instant over every command.
    public var commandToEffect: Percentiles?
    /// The late joiner, when it ran.
    public var lateJoiner: LateJoiner?
    /// The design's targets for the presented spread.
    public var targets: [Target]
    /// `error` events that peers printed (a command the host could not carry out, say), as
    /// `name: message`.
    public var errors: [String]
    /// The whole run, seconds.
    public var seconds: Double
}
