/// How long the relay keeps an ordered record for late joiners, as its header says.
///
/// The relay reads nothing inside a record, so the header tells it what a record is for: most
/// records are kept under the history's caps (`kept`), playback records can go once a snapshot
/// covers them (`playback`), and a snapshot names the last order it reflects. The sessions layer
/// signs the retention inside the sealed body, so a relay that relabels a header is caught by
/// every receiver.
///
/// On the wire: one byte, 0 `kept`, 1 `playback`, 2 `snapshot` followed by the reflected order
/// (u64, big-endian), 3 `recent` followed by the count (u16, big-endian, at least 1). Any other
/// byte, or a count of 0, is a `WireError`.
public enum OrderedRetention: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Kept under the history's caps, whatever snapshots say (activity, other kinds).
    case kept
    /// A change of the playback state: dropped once a kept snapshot covers its order.
    case playback
    /// A snapshot of the coordination state as it stood after the record numbered `reflecting`
    /// (which is below the snapshot's own order).
    case snapshot(reflecting: UInt64)
    /// Kept while among the newest `count` records of this retention (chat: the last 100 for
    /// late joiners), and past that until a kept snapshot covers its order, so that dropping it
    /// leaves no gap in what a late joiner assembles from a snapshot (`RelayOrderedHistory`).
    case recent(count: UInt16)

    /// The order a snapshot reflects, nil for other records.
    public var reflectedOrder: UInt64? {
        if case let .snapshot(reflecting) = self { reflecting } else { nil }
    }

    /// A word for people and errors.
    public var description: String {
        switch self {
        case .kept: "kept"
        case .playback: "playback"
        case let .snapshot(reflecting): "snapshot reflecting \(reflecting)"
        case let .recent(count): "recent \(count)"
        }
    }
}

extension ByteWriter {
    package mutating func retention(_ retention: OrderedRetention) {
        switch retention {
        case .kept: uint8(0)
        case .playback: uint8(1)
        case let .snapshot(reflecting):
            uint8(2)
            uint64(reflecting)
        case let .recent(count):
            uint8(3)
            uint16(count)
        }
    }
}

extension ByteReader {
    package mutating func retention() throws(WireError) -> OrderedRetention {
        switch try uint8() {
        case 0: return .kept
        case 1: return .playback
        case 2: return .snapshot(reflecting: try uint64())
        case 3:
            let count = try uint16()
            guard count > 0 else { throw WireError(.malformed("a recent retention of count 0"), context: context) }
            return .recent(count: count)
        case let byte: throw WireError(.malformed("retention \(byte)"), context: context)
        }
    }
}
