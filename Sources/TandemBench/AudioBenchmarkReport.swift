/// What `tandem bench audio` measured: for each group of participants (the built-in player
/// following the timeline, mpv, the apply-on-receipt baseline) the spread of their sound at one
/// sound server's sink, and for each built-in participant what its audio log says.
public struct AudioBenchmarkReport: Sendable, Codable {
    /// One participant.
    public struct Participant: Sendable, Codable {
        /// Its name (`peer-N`).
        public var name: String
        /// Its group's name.
        public var group: String
        /// The remap sink it played into, and so the recording's channel.
        public var sink: String
        /// Its injected clock error.
        public var clockOffsetSeconds: Double
        public var clockDriftPPM: Double
        /// Its exit status; nil when it was killed.
        public var exitStatus: Int32?
        /// From its audio log (built-in players): writes, the resampler's corrections (ppm), snaps
        /// and underruns during the script; nil without a log.
        public var writes: Int?
        public var correctionPPM: Percentiles?
        public var snaps: Int?
        public var underruns: Int?
        /// Underruns before the script's first play, while the output played silence (as the
        /// participants start on a busy machine); not counted in `underruns`.
        public var underrunsBeforeScript: Int?
        /// Media frames its output wanted before they were decoded (played, or searched by the
        /// stretch, as silence), over the run.
        public var missingFrames: Int?
        /// The output latency it reported (ms), when it reported any.
        public var latencyMilliseconds: Percentiles?
        /// Its own error, recorded against intended, less the common offset of the stretch between
        /// two changes it was measured in (µs); nil when it has no log or no window was found.
        public var ownErrorMicroseconds: Percentiles?
        /// Recorded against what the sound server's timing led it to expect, less the common
        /// offset of that measure (µs).
        public var errorAgainstExpectedMicroseconds: Percentiles?
        /// The own-error windows' correlation peaks with the media.
        public var ownErrorPeak: Percentiles?
        /// Own-error windows left out: paired with a write that meant the same instant for media
        /// more than half a second away (around a seek or a snap).
        public var ownErrorUnattributed: Int?
        /// Its pictures against its sound (µs): for each picture presented at rate 1 away from
        /// changes, the instant it was presented less the instant its sound server's timing led it
        /// to expect the same media position's sound at the output (positive: the picture later).
        public var picturesAfterSoundMicroseconds: Percentiles?
        /// Pictures left out of that measure: their sound was written more than half a second
        /// away, or not at all.
        public var picturesUnpaired: Int?
        /// Whether its output's thread got its real-time priority (its log's `priority` line);
        /// nil when the log does not say.
        public var outputRealtime: Bool?
        /// Every own-error window, in the order measured: `[seconds from the script's start, own
        /// error µs, against expected µs]`, each about its stretch's common offset (in the kept
        /// logs' report, to read the tail from).
        public var ownErrorWindows: [[Double]]?
    }

    /// The machine during the script: the host's steal time and the load (`HostActivity`).
    public struct Host: Sendable, Codable {
        /// The steal time of all processors over the script, ms.
        public var stealMilliseconds: Double
        /// The largest steal time between two readings (every 100 ms), ms.
        public var largestStealMilliseconds: Double
        /// The one-minute load's extremes.
        public var loadMinimum: Double
        public var loadMaximum: Double
        /// Each moment at which outputs ran dry, with the steal time before it.
        public var underrunMoments: [HostActivity.UnderrunMoment]
    }

    /// One group of participants, compared among themselves.
    public struct Group: Sendable, Codable {
        /// The group (`tandem`, `mpv`, `on-receipt`).
        public var name: String
        /// What it is, in words.
        public var summary: String
        /// Its participants' names.
        public var participants: [String]
        /// Why it was not measured, when it was not.
        public var notMeasured: String?
        /// Correlation windows measured, and skipped (silence, or a member not found).
        public var windows: Int
        public var skippedWindows: Int
        /// The spread (latest minus earliest participant, µs) of rate-1 windows outside the
        /// 100 ms after each change.
        public var steady: Percentiles?
        /// The spread of windows within the 100 ms after a change.
        public var afterChanges: Percentiles?
        /// Every rate-1 window.
        public var all: Percentiles?
        /// For the steady windows, when every member keeps an audio log: the clocks' own spread
        /// (the latest minus the earliest instant the members intended for the same media, µs),
        /// and the spread the outputs added to it (each member's lag less its intention's, µs).
        public var clocksSteady: Percentiles?
        public var outputsSteady: Percentiles?
        /// The spread of click onsets at every rate (µs), and outside the 100 ms after changes.
        public var clicks: Percentiles?
        public var clicksSteady: Percentiles?
    }

    /// One change of the timeline and each group's largest spread in the 100 ms after it.
    public struct Change: Sendable, Codable {
        /// What changed (`play`, `seek 12.000`, …).
        public var change: String
        /// Seconds from the script's start to the instant it took effect.
        public var atSeconds: Double
        /// The timeline's rate after it.
        public var rate: Double
        /// Each group's largest spread in the 100 ms after it (µs; windows and click onsets), by group name.
        public var largestSpread: [String: Double]
    }

    /// When it ran (ISO 8601), and on what.
    public var date: String
    public var machine: String
    /// Seconds it took, all in.
    public var seconds: Double
    /// Seconds the script lasted.
    public var scriptSeconds: Double
    /// The relay's session clock's drift against the machine's (and so the sound server's), ppm.
    public var relayDriftPPM: Double
    /// Whether the built-in player of this build has a sound output (without one, its groups are
    /// not measured).
    public var builtinSound: Bool
    /// The participants, the groups and the changes.
    public var participants: [Participant]
    public var groups: [Group]
    public var changes: [Change]
    /// The common offset of the built-in participants' own errors (µs, median over all): where
    /// the recording sits against the machine's clock, past the placement the sound server's timing gave.
    public var commonOffsetMicroseconds: Double?
    /// How far the common offset moved from one stretch between changes to another (µs): the
    /// recording's frames against the machine's clock, shared by every output.
    public var commonOffsetRangeMicroseconds: Double?
    /// Where the recording's frame 0 sits on the machine's monotonic clock (ns), from the sound server's timing
    /// of the recording.
    public var placementNanoseconds: Int64?
    /// How fast the recording's clock (the sink's) ran against the machine's, in ppm of 48 kHz,
    /// by the sound server's timing of the recording alone (the bench places the recording at the
    /// sink's exact rate, and reports this as a check).
    public var recordingClockPPM: Double?
    /// Whether the sound server's main thread, which moves every participant's sound, ran at a
    /// real-time priority (`SoundServerPriority.mainThreadPriority`); nil when not known.
    public var soundServerRealtime: Bool?
    /// When the script started (monotonic ns): the origin of the report's seconds.
    public var scriptStartedNanoseconds: Int64?
    /// The machine during the script; nil when `/proc` could not be read.
    public var host: Host?
    /// What went wrong along the way.
    public var errors: [String]
}
