import TandemWire

/// What the relay has sent one participant and not yet heard acknowledged, in sequence order:
/// what it sends again when the participant resumes.
struct RelayOutbox: Sendable {
    /// The sequence number the next frame gets.
    private(set) var nextSequence: UInt64 = 1
    private var frames: [RelayFrame] = []
    private var head = 0
    /// Message bytes waiting (attachment data is shared with the journal and not counted).
    private(set) var bodyBytes = 0

    /// How many frames wait.
    var count: Int { frames.count - head }

    /// Numbers and keeps the frame `make` builds from the next sequence number.
    mutating func append(_ make: (UInt64) -> RelayFrame) -> RelayFrame {
        let frame = make(nextSequence)
        nextSequence += 1
        frames.append(frame)
        bodyBytes += Self.bodySize(of: frame)
        return frame
    }

    /// Forgets every frame up to and including `sequence`.
    mutating func acknowledge(through sequence: UInt64) {
        while head < frames.count, let number = frames[head].sequence, number <= sequence {
            bodyBytes -= Self.bodySize(of: frames[head])
            head += 1
        }
        // Compact once the acknowledged prefix is most of the array.
        if head > 64, head * 2 > frames.count {
            frames.removeFirst(head)
            head = 0
        }
    }

    /// The message bytes a frame holds on its own.
    private static func bodySize(of frame: RelayFrame) -> Int {
        switch frame {
        case let .delivery(_, _, _, body): body.count
        case let .ordered(_, entry): entry.body.count
        default: 0
        }
    }

    /// The frames still waiting, oldest first.
    var pending: ArraySlice<RelayFrame> { frames[head...] }
}

extension RelayOutbox {
    /// An outbox holding `pending`, the frames numbered up to `nextSequence - 1` in order, as a
    /// cluster's snapshot of the session carries it (`ClusterSessionSnapshot`).
    init(nextSequence: UInt64, pending: [RelayFrame]) {
        self.init()
        self.nextSequence = nextSequence
        frames = pending
        bodyBytes = pending.reduce(0) { $0 + Self.bodySize(of: $1) }
    }
}
