import Synchronization
import TandemClock

/// A video sink that keeps how late each scheduled frame was presented against its schedule
/// (stills excluded), for the summary of a run. It keeps at most `capacity` samples, the newest.
public final class LatenessRecorder: VideoSink {
    private let capacity: Int
    private let state = Mutex((samples: [Int64](), next: 0))

    /// Keeps up to `capacity` samples (one per frame).
    public init(capacity: Int = 1 << 20) {
        self.capacity = max(1, capacity)
    }

    /// The lateness of each frame presented, in nanoseconds, oldest first.
    public var samples: [Int64] {
        state.withLock { state in
            guard state.samples.count == capacity else { return state.samples }
            return Array(state.samples[state.next...] + state.samples[..<state.next])
        }
    }

    /// Records how late the frame was (stills are not scheduled).
    public func present(_ frame: VideoFrame, _ presentation: Presentation) {
        guard !presentation.isStill else { return }
        let capacity = self.capacity
        state.withLock { state in
            if state.samples.count < capacity {
                state.samples.append(presentation.lateBy.nanoseconds)
            } else {
                state.samples[state.next] = presentation.lateBy.nanoseconds
                state.next = (state.next + 1) % capacity
            }
        }
    }
}
