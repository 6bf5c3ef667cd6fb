/// Cuts a TCP byte stream into relay frames.
///
/// Feed it whatever `recv` returned; take frames out with `next()`. A length prefix over
/// `RelayWireLimits.maximumFrameLength` is an error as soon as its four bytes arrive, before any
/// buffer for the frame is set aside, so that a peer cannot make the reader hold more than one
/// frame's worth of bytes.
public struct RelayFrameReader: Sendable {
    private var buffer: [UInt8] = []
    private var start = 0
    /// The longest frame accepted, after the length prefix.
    public let limit: Int

    /// How much buffer capacity an emptied reader keeps.
    static let retainedCapacity = 64 * 1024

    /// A reader accepting frames up to `limit` bytes after their prefix.
    public init(limit: Int = RelayWireLimits.maximumFrameLength) { self.limit = limit }

    /// How many bytes are waiting to form a frame.
    public var buffered: Int { buffer.count - start }

    /// The length the next frame announces (after its 4-byte prefix), once the prefix has
    /// arrived and whether or not the frame is complete: how much a peer says it will send.
    public var announcedLength: Int? {
        guard buffered >= 4 else { return nil }
        return buffer[start..<(start + 4)].reduce(0) { $0 << 8 | Int($1) }
    }

    /// Appends bytes received from the stream.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        // Drop consumed bytes once they are most of the buffer, so the buffer stays one frame big.
        if start > 0, start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame, nil when more bytes are needed; throws on a defect, after which
    /// the stream cannot be trusted and the connection should be closed.
    public mutating func next() throws(WireError) -> RelayFrame? {
        guard let length = try pendingLength() else { return nil }
        let end = start + 4 + length
        let frame = try RelayFrame.decode(buffer[(start + 4)..<end])
        start = end
        if start == buffer.count {
            // Everything is consumed: keep a small buffer for the next frames, but give back
            // what one large frame made it grow to, so that an idle connection holds little.
            buffer.removeAll(keepingCapacity: buffer.capacity <= RelayFrameReader.retainedCapacity)
            start = 0
        }
        return frame
    }

    /// The length of the next frame once it is complete, nil while it is not.
    private func pendingLength() throws(WireError) -> Int? {
        guard buffered >= 4 else { return nil }
        let length = buffer[start..<(start + 4)].reduce(0) { $0 << 8 | Int($1) }
        guard length <= limit else {
            throw WireError(.oversized(length: length, limit: limit), context: "relay frame length prefix")
        }
        guard length >= 2 else { throw WireError(.truncated, context: "relay frame of \(length) bytes") }
        return buffered >= 4 + length ? length : nil
    }
}
