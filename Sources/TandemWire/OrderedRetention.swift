/// How long the relay keeps an ordered record for late joiners, as its header says.
///
/// The relay reads nothing inside a record, so the header tells it what a record is for: most
/// records are kept under the history's caps (`kept`), playback records can go once a snapshot
/// covers them (`playback`), and a snapshot names the last order it reflects. The sessions layer
/// signs the retention inside the sealed body, so a relay that relabels a header is caught by
/// every receiver.
///
/// On the wire: one byte, 0 `kept`, 1 `playback`, 2 `snapshot` followed by the reflected order
/// (u64, big-endian). Any other byte is a `WireError`.
public enum OrderedRetention: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Kept under the history's caps, whatever snapshots say (activity, chat, other kinds).
    case kept
    /// A change of the playback state: dropped once a kept snapshot covers its order.
    case playback
    /// A snapshot of the coordination state as it stood after the record numbered `reflecting`
    /// (which is below the snapshot's own order).
    case snapshot(reflecting: UInt64)

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
        }
    }
}

extension ByteReader {
    package mutating func retention() throws(WireError) -> OrderedRetention {
        switch try uint8() {
        case 0: return .kept
        case 1: return .playback
        case 2: return .snapshot(reflecting: try uint64())
        case let byte: throw WireError(.malformed("retention \(byte)"), context: context)
        }
    }
}
