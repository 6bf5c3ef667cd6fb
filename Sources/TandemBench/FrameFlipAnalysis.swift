/// What the frame-flip probe's flips say about how far apart mpv players show the same frames: a
/// pure reading of `FrameFlipProbe.Flip`s.
///
/// A flip counts when it is of a moving picture: its frame follows the one before it by more
/// than nothing and at most `maximumStep` of media, and came at most `maximumGap` after it. A
/// flip the probe could place only to more than `defaultMaximumUncertainty` is left out too. A
/// frame shown still (landed on by a seek while paused, or the first after a pause or a start)
/// is left out: it says when the seek landed, not when the group's timeline reached it. For
/// each counted flip of the first player, the others' counted flips of the same frame nearest
/// in time (within `window`) are taken; a frame counted by every player has one spread, the
/// latest instant less the earliest. A frame one player never showed moving (it was paused, or
/// skipped past it) has none.
public enum FrameFlipAnalysis {
    /// The flips of a moving picture among `flips` (in order), as above.
    public static func moving(_ flips: [FrameFlipProbe.Flip], maximumStep: Double = 0.2, maximumGap: Int64 = 250_000_000,
                              maximumUncertainty: Int64 = defaultMaximumUncertainty) -> [FrameFlipProbe.Flip] {
        zip(flips, flips.dropFirst()).compactMap { previous, flip in
            let step = flip.position - previous.position
            return step > 0 && step <= maximumStep && flip.at - previous.at <= maximumGap && flip.uncertainty <= maximumUncertainty ? flip : nil
        }
    }

    /// A flip placed no better than this (ns) is left out: the poller was not run for that long
    /// (a machine with more work than cores), and the instant says when the poller ran again,
    /// not when the frame appeared.
    public static let defaultMaximumUncertainty: Int64 = 2_000_000

    /// A frame's key: its position to the µs (mpv reads a frame's time the same way each time).
    static func key(_ position: Double) -> Int64 { Int64((position * 1e6).rounded()) }

    /// Each frame's spread (ms) across `players` (the flips of each, in order), as above, in the
    /// first player's order; `moving` is applied first.
    public static func spreads(_ players: [[FrameFlipProbe.Flip]], window: Int64 = 500_000_000) -> [Double] {
        timedSpreads(players, window: window).map(\.spread)
    }

    /// The spreads (ms) with the instant of the first player's flip (raw monotonic ns), for
    /// finding when the large ones came.
    public static func timedSpreads(_ players: [[FrameFlipProbe.Flip]], window: Int64 = 500_000_000) -> [(at: Int64, spread: Double)] {
        guard let first = players.first else { return [] }
        let others = players.dropFirst().map { flips in Dictionary(grouping: moving(flips)) { key($0.position) } }
        return moving(first).compactMap { flip in
            var earliest = flip.at, latest = flip.at
            for frames in others {
                guard let nearest = frames[key(flip.position)]?.min(by: { abs($0.at - flip.at) < abs($1.at - flip.at) }),
                      abs(nearest.at - flip.at) <= window else { return nil }
                earliest = min(earliest, nearest.at)
                latest = max(latest, nearest.at)
            }
            return (flip.at, Double(latest - earliest) / 1e6)
        }
    }
}
