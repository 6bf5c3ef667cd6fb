/// What the `mpv` scenario adds to a run's figures: how far apart the peers'
/// mpv showed each frame, by the frame-flip probe (`FrameFlipProbe`: what mpv shows, where the
/// suite's spread compares position readings), and the floor measured in the same sitting, as
/// many bare mpv with the options `tandem` gives mpv, unpaused together and left alone.
/// Durations are milliseconds.
public struct FrameFlipFigures: Sendable, Codable, Equatable {
    /// The spread of each frame every peer's mpv showed moving, over the script.
    public var spread: Percentiles?
    /// The same over the bare mpv of the floor, the same for both modes of a sitting.
    public var floor: Percentiles?

    /// The figures of one run.
    public init(spread: Percentiles?, floor: Percentiles?) {
        self.spread = spread
        self.floor = floor
    }
}
