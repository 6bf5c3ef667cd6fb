import Synchronization
import TandemClock

/// Counts what was presented: video frames, stills and audio.
public final class CountingSink: VideoSink, AudioSink {
    /// What the sink has counted so far.
    public struct Counts: Sendable, Equatable {
        /// Video frames presented on schedule.
        public var frames = 0
        /// Still pictures shown while paused.
        public var stills = 0
        /// Audio chunks consumed.
        public var audioChunks = 0
        /// Audio samples (per channel) consumed.
        public var audioFrames = 0
        /// The media time of the last video frame presented, in nanoseconds.
        public var lastPresentationTime: Int64?
    }

    private let state = Mutex(Counts())

    /// A sink with all counts at zero.
    public init() {}

    /// The counts so far.
    public var counts: Counts { state.withLock { $0 } }

    /// Counts the frame.
    public func present(_ frame: VideoFrame, _ presentation: Presentation) {
        state.withLock { counts in
            if presentation.isStill { counts.stills += 1 } else { counts.frames += 1 }
            counts.lastPresentationTime = frame.presentationTime
        }
    }

    /// Counts the chunk.
    public func consume(_ chunk: AudioChunk, _ presentation: Presentation) {
        state.withLock { counts in
            counts.audioChunks += 1
            counts.audioFrames += chunk.frameCount
        }
    }
}
