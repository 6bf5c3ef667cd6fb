import Synchronization

/// What a link holds of its consumer's messages and proposals, readable from any thread, so
/// that `send` can refuse at once when the sender outruns the link: the core's unacknowledged
/// count as of its last change on the loop, plus what callers have handed over and the loop has
/// not taken in yet.
final class RelayLinkSendQueue: Sendable {
    private struct Counts {
        var coreBytes = 0
        var coreFrames = 0
        var handedBytes = 0
        var handedFrames = 0
    }

    private let counts = Mutex(Counts())
    private let maximumBytes: Int
    private let maximumFrames: Int

    init(maximumBytes: Int, maximumFrames: Int) {
        self.maximumBytes = maximumBytes
        self.maximumFrames = maximumFrames
    }

    /// Counts a body of `size` bytes as handed over, or throws `queueFull` when it would pass a
    /// cap. Any thread.
    func reserve(_ size: Int) throws(RelayError) {
        let admitted = counts.withLock { counts in
            let bytes = counts.coreBytes + counts.handedBytes + size
            let frames = counts.coreFrames + counts.handedFrames + 1
            // A body larger than the whole cap still goes when nothing waits: the size limit of
            // a message is checked elsewhere.
            guard frames <= maximumFrames, bytes <= maximumBytes || frames == 1 else { return false }
            counts.handedBytes += size
            counts.handedFrames += 1
            return true
        }
        guard admitted else {
            throw RelayError(.queueFull, "more than \(maximumFrames) messages or \(maximumBytes) bytes waiting for the relay "
                + "(RelayLinkConfiguration.maximumQueuedFrames, maximumQueuedBytes)")
        }
    }

    /// The loop took in a reserved body of `size` bytes. Loop only.
    func taken(_ size: Int) {
        counts.withLock { counts in
            counts.handedBytes -= size
            counts.handedFrames -= 1
        }
    }

    /// What the core holds now. Loop only.
    func update(bytes: Int, frames: Int) {
        counts.withLock { counts in
            counts.coreBytes = bytes
            counts.coreFrames = frames
        }
    }
}
