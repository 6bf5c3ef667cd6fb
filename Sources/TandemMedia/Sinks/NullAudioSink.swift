import Synchronization

/// An audio sink that plays nothing but consumes sound at the timeline's pace, so that a
/// headless run keeps the timing of a real one; it keeps the level of what it consumed.
public final class NullAudioSink: AudioSink {
    private let state = Mutex((chunks: 0, frames: 0, peak: Int16(0)))

    /// A sink that has consumed nothing yet.
    public init() {}

    /// Chunks consumed so far.
    public var consumedChunks: Int { state.withLock { $0.chunks } }
    /// Samples (per channel) consumed so far.
    public var consumedFrames: Int { state.withLock { $0.frames } }
    /// The loudest sample consumed so far (absolute value): proof that sound was decoded.
    public var peakLevel: Int16 { state.withLock { $0.peak } }

    /// Counts the chunk and keeps its level.
    public func consume(_ chunk: AudioChunk, _ presentation: Presentation) {
        var peak: Int16 = 0
        for sample in chunk.samples where sample != Int16.min {
            peak = max(peak, abs(sample))
        }
        state.withLock { state in
            state.chunks += 1
            state.frames += chunk.frameCount
            state.peak = max(state.peak, peak)
        }
    }
}
