/// What a player has done so far.
public struct PlaybackStatistics: Sendable, Equatable {
    /// Video frames presented on schedule.
    public var presentedFrames = 0
    /// Still pictures shown while paused.
    public var stillFrames = 0
    /// Video frames dropped because their time had passed before they could be shown.
    public var droppedLateFrames = 0
    /// Frames discarded because a seek or the timeline's position left them behind.
    public var discardedFrames = 0
    /// Audio chunks consumed on time.
    public var consumedAudioChunks = 0
    /// Audio chunks dropped because their time had passed.
    public var droppedAudioChunks = 0
    /// Packets the decoders rejected as corrupt (and skipped).
    public var corruptPackets = 0
    /// Seeks the decoder performed.
    public var seeks = 0
    /// Stalls begun: times the player could not present on time (`PlayerStall.began`).
    public var stalls = 0
    /// Switches to another item (`HeadlessPlayer.switchToPreparedItem(timeline:)` and the like).
    public var itemChanges = 0
    /// The error that ended decoding early (a truncated file, say), if any.
    public var decodingError: String?
}
