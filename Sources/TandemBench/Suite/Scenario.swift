import TandemNetsim
import TandemNet

/// One named situation of the benchmark suite: who takes part, over what network, and the
/// script they follow. Peer 0 is the host (with the relay inside); peers 1… join; indices from
/// `peers` on are late joiners.
public struct Scenario: Sendable {
    /// Which player every peer runs.
    public enum Player: String, Sendable {
        /// The built-in FFmpeg player, writing a presentation log of every frame.
        case builtin
        /// A real mpv, corrected through its IPC; its position readings are logged.
        case mpv
    }

    /// One step of the script.
    public enum Step: Sendable {
        /// Writes command lines to peers at once (`play`, `seek 10`, `stall 1.5 nowait`…).
        case commands([PeerCommand])
        /// Lets the session run (seconds).
        case hold(Double)
        /// Starts peer `index` late (or again, after it left).
        case join(Int)
        /// Peer `index` leaves the session; its process ends.
        case leave(Int)
        /// A raw client in the bench process joins with the host's invite, makes this many
        /// proposals that change no timeline (`RawProposer`), waits until the relay ordered them,
        /// and leaves.
        case proposals(Int)
    }

    /// A command line for one peer.
    public struct PeerCommand: Sendable {
        /// The peer's index.
        public var peer: Int
        /// The line.
        public var line: String

        /// `line` for peer `peer`.
        public init(_ peer: Int, _ line: String) {
            self.peer = peer
            self.line = line
        }
    }

    /// The name `--scenario` takes.
    public var name: String
    /// What happens, in one sentence.
    public var summary: String
    /// Peers from the start, the host included.
    public var peers: Int
    /// The player.
    public var player: Player = .builtin
    /// What the path of each joiner (index ≥ 1) to the relay adds, by index; a joiner without an
    /// entry connects directly.
    public var impairments: [Int: Impairment] = [:]
    /// The network in words, for the report.
    public var network = "loopback"
    /// The script.
    public var steps: [Step]
    /// Short clips the group plays in a row after the main one (`tandem host FILE…`), each
    /// `queueClipSeconds` long; 0: the main clip only.
    public var queueItems = 0
    /// How long each queued clip is, seconds.
    public var queueClipSeconds = 3
    /// Joiners (by index) that join with no media at all and stream the host's (`tandem join`
    /// with the invite only).
    public var streamingJoiners: Set<Int> = []

    /// A scenario; see the catalogue in `Scenario+Catalogue.swift`.
    public init(name: String, summary: String, peers: Int, steps: [Step]) {
        self.name = name
        self.summary = summary
        self.peers = peers
        self.steps = steps
    }

    /// A step writing `line` to peer `peer`.
    static func command(_ peer: Int, _ line: String) -> Step {
        .commands([PeerCommand(peer, line)])
    }

    /// The same impairment on the path of every joiner.
    mutating func impairEveryJoiner(_ impairment: Impairment, joiners: ClosedRange<Int>) {
        for index in joiners { impairments[index] = impairment }
    }

    /// Every peer index the script uses, late joiners included.
    var allPeers: [Int] {
        var indices = Array(0..<peers)
        for step in steps {
            if case .join(let index) = step, !indices.contains(index) { indices.append(index) }
        }
        return indices
    }
}
