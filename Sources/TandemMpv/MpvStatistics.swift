/// What an `MpvPlayer` has done to keep mpv on the shared timeline, and what it noticed.
public struct MpvStatistics: Sendable, Equatable {
    /// Positions measured by the correction loop.
    public var measurements = 0
    /// Rate nudges applied (a change of speed to correct an error).
    public var nudges = 0
    /// Seeks applied to correct a large error.
    public var correctiveSeeks = 0
    /// Times mpv was started on a timeline: paused, seeked exactly, unpaused at an instant.
    public var starts = 0
    /// Of those, the starts that unpaused on the frame a pre-roll had landed on (the group's
    /// seek, heard ahead of its play), without seeking again.
    public var prerolledStarts = 0
    /// Seeks a start made on past the frame it landed on, where mpv had no audio clock, to a
    /// frame where it has one (`MpvPlayer.audioClockSkip`).
    public var audioClockSkips = 0
    /// Starts made from a frame without mpv's audio clock all the same (`audioClockSkips` used
    /// up, or a command superseding the start): unpaused a frame early, a guess.
    public var clocklessStarts = 0
    /// mpv's error against the timeline just after the last start (ns; positive: ahead), when
    /// it could be read precisely (a file with sound).
    public var lastStartError: Int64?
    /// Changes made in mpv by a person and proposed to the group.
    public var userProposals = 0
    /// Readings of mpv's position written to the presentation log.
    public var readings = 0
    /// Stalls begun: times mpv waited for its cache (`paused-for-cache`) while the group played,
    /// each a `.stallRecovery` suspension.
    public var stalls = 0
    /// The last measured error (ns; positive: mpv ahead), if any.
    public var lastError: Int64?

    /// Nothing yet.
    public init() {}
}
