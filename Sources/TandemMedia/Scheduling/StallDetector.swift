/// The pure core of stall detection: from what the presentation and decoding threads observe,
/// whether the player has stalled (it cannot present on time) or recovered.
///
/// The rule, with hysteresis so that one late wake-up is not a stall and a stall does not end
/// on the first frame that arrives:
/// - **Began**, only while a playing timeline is in force and after the first play: either
///   `lateFramesToStall` frames in a row were presented later than one frame duration after
///   their instants or dropped as too late while fewer than `recoveryFrames` were decoded ahead
///   (the decoder keeps up only partly), or no frame was decoded one frame duration after one
///   fell due (`starved()`: the decoder or the source is behind). Late frames with the queue
///   full are the presenter's lateness (a busy machine), not the decoder's: pausing the group
///   would not help, and such a stall could not end, since a full queue takes no more frames.
///   The caller decides "playing"; this core counts.
/// - **Ended**: the queue holds `recoveryFrames` decoded frames of the newest position again,
///   or decoding reached the end of the item. Typically while the group waits (paused), which
///   is what lets the decoder get ahead.
struct StallDetector: Sendable, Equatable {
    /// Late or dropped frames in a row that make a stall.
    static let lateFramesToStall = 3

    /// Decoded frames ahead that end a stall.
    let recoveryFrames: Int
    /// Whether a stall has begun and not ended.
    private(set) var isStalled = false
    /// Frames in a row presented or dropped late, while playing.
    private(set) var consecutiveLate = 0

    /// A detector that ends a stall once `recoveryFrames` frames are decoded ahead.
    init(recoveryFrames: Int) {
        self.recoveryFrames = max(1, recoveryFrames)
    }

    /// A frame was presented while playing, `late` when more than a frame duration after its
    /// instant, with `buffered` frames of the newest position decoded ahead; returns `.began`
    /// when that makes a stall.
    mutating func presented(late: Bool, buffered: Int) -> PlayerStall? {
        guard late, buffered < recoveryFrames else {
            consecutiveLate = 0
            return nil
        }
        return countLate()
    }

    /// A frame was dropped while playing, as its time had passed before it was decoded, with
    /// `buffered` frames of the newest position decoded ahead.
    mutating func droppedLate(buffered: Int) -> PlayerStall? {
        guard buffered < recoveryFrames else {
            consecutiveLate = 0
            return nil
        }
        return countLate()
    }

    /// No frame of the position in force was decoded one frame duration after one fell due,
    /// while playing.
    mutating func starved() -> PlayerStall? {
        guard !isStalled else { return nil }
        isStalled = true
        consecutiveLate = 0
        return .began
    }

    /// The decoder has `frames` frames of the newest position queued (`endOfStream`: and
    /// decoded everything there is); returns `.ended` when that ends a stall.
    mutating func buffered(frames: Int, endOfStream: Bool) -> PlayerStall? {
        guard isStalled, frames >= recoveryFrames || endOfStream else { return nil }
        isStalled = false
        consecutiveLate = 0
        return .ended
    }

    private mutating func countLate() -> PlayerStall? {
        consecutiveLate += 1
        guard !isStalled, consecutiveLate >= StallDetector.lateFramesToStall else { return nil }
        isStalled = true
        return .began
    }
}
