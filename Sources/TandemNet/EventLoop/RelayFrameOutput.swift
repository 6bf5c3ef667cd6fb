import TandemWire

/// Frames waiting to be written to a TCP socket, encoded a batch at a time as the socket takes
/// them, so that a queue of large frames (attachment chunks) is never encoded all at once.
struct RelayFrameOutput {
    private var frames: [RelayFrame] = []
    private var head = 0
    private var buffer: [UInt8] = []
    private var offset = 0
    /// How many bytes are encoded into one write at most (small frames are coalesced up to it).
    private static let batch = 64 * 1024

    /// Whether nothing waits.
    var isEmpty: Bool { head == frames.count && offset == buffer.count }

    /// How many frames wait, not counting the partly written batch.
    var count: Int { frames.count - head }

    mutating func append(_ frame: RelayFrame) { frames.append(frame) }

    /// Forgets everything waiting.
    mutating func removeAll() {
        frames.removeAll()
        head = 0
        buffer.removeAll()
        offset = 0
    }

    /// Writes until the socket would block or nothing is left; true when nothing is left.
    mutating func flush(to socket: TCPSocket) throws(SystemCallError) -> Bool {
        while true {
            if offset == buffer.count {
                refill()
                if buffer.isEmpty { return true }
            }
            guard let written = try socket.write(buffer[offset...]) else { return false }
            offset += written
        }
    }

    private mutating func refill() {
        buffer.removeAll(keepingCapacity: buffer.capacity <= 4 * RelayFrameOutput.batch)
        offset = 0
        while head < frames.count, buffer.count < RelayFrameOutput.batch {
            buffer.append(contentsOf: frames[head].encoded())
            head += 1
        }
        if head == frames.count {
            frames.removeAll(keepingCapacity: frames.capacity <= 1024)
            head = 0
        }
    }
}
