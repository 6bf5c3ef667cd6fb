import Foundation

/// The chain head a snapshot's writer held at the order the snapshot reflects
/// (`OrderedChain`), sealed and signed inside the snapshot in front of the coordinator's state,
/// so that a late joiner whose history begins at the snapshot starts its chain from it, and a
/// participant that holds that order compares it with its own. The relay cannot put another
/// head there without the session's key and the writer's signing key.
///
/// Layout, in front of the state (the coordinator never sees it: the session takes it off):
///
///     u8   0: no head (the writer holds none for that order), 1: a head follows
///     32   the head, when present
enum SnapshotChainHead {
    /// `state` with `head` (nil: none) in front.
    static func wrap(_ state: [UInt8], head: [UInt8]?) -> [UInt8] {
        guard let head, head.count == OrderedChain.headLength else { return [0] + state }
        return [1] + head + state
    }

    /// The head and the state of a snapshot's plaintext; nil when it has no valid prefix.
    static func unwrap(_ payload: [UInt8]) -> (head: [UInt8]?, state: [UInt8])? {
        switch payload.first {
        case 0?:
            return (nil, Array(payload.dropFirst()))
        case 1? where payload.count >= 1 + OrderedChain.headLength:
            return (Array(payload[1...OrderedChain.headLength]), Array(payload.dropFirst(1 + OrderedChain.headLength)))
        default:
            return nil
        }
    }
}
