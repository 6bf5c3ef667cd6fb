import TandemWire

/// Frames waiting to be written to a TCP socket, the relay's to a participant or a link's to
/// the relay, with the bytes they hold counted, so that the server can cap each connection's
/// queue and account for it in the relay-wide budget. Encoded a batch at a time as the socket
/// takes them, so that a queue of large frames is never encoded all at once.
struct RelayFrameOutput {
    private var frames: [RelayFrame] = []
    private var head = 0
    private var buffer: [UInt8] = []
    private var offset = 0
    /// The estimated encoded size of the frames not yet encoded.
    private var pendingBytes = 0
    /// How many bytes are encoded into one write at most (small frames are coalesced up to it).
    private static let batch = 64 * 1024
    /// What a frame's header and fields add to its payload at most, for the estimate.
    private static let frameOverhead = 96

    /// Whether nothing waits.
    var isEmpty: Bool { head == frames.count && offset == buffer.count }

    /// How many frames wait, not counting the partly written batch.
    var count: Int { frames.count - head }

    /// About how many bytes wait (frames by their payload and a bound on their headers, plus
    /// the unwritten rest of the current batch).
    var queuedBytes: Int { pendingBytes + buffer.count - offset }

    mutating func append(_ frame: RelayFrame) {
        frames.append(frame)
        pendingBytes += frame.payloadSize + RelayFrameOutput.frameOverhead
    }

    /// Forgets everything waiting.
    mutating func removeAll() {
        frames.removeAll()
        head = 0
        buffer.removeAll()
        offset = 0
        pendingBytes = 0
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
            frames[head].encode(appendingTo: &buffer)
            pendingBytes -= frames[head].payloadSize + RelayFrameOutput.frameOverhead
            head += 1
        }
        if head == frames.count {
            frames.removeAll(keepingCapacity: frames.capacity <= 1024)
            head = 0
        } else if head > 1024, head * 2 > frames.count {
            frames.removeFirst(head)
            head = 0
        }
    }
}
