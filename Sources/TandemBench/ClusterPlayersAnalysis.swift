import Foundation
import TandemMediaTypes
import TandemHarness
import TandemMedia

/// The figures of `ClusterPlayersBenchmark`, pure functions of what its players logged and
/// printed: the presented spread over a window (through `SyncLogAnalysis.showings`, as
/// `tandem bench all` reads it), when the players were in step again after a relay died
/// (`ScenarioAnalysis.convergedInstant`: ten frames in a row within 1 ms), and which relay a
/// process is connected to (from `/proc/net/tcp`).
enum ClusterPlayersAnalysis {
    /// The reliable messages of a failover: what each player sent (by player) against what each
    /// heard from the others (by player, in order), counting every line a player should have
    /// heard and did not (lost) and every line it heard more than once (duplicated). A player's
    /// own lines are not counted for it.
    static func reliableDelivery(sent: [[String]], heard: [[String]]) -> (sent: Int, lost: Int, duplicated: Int) {
        var lost = 0, duplicated = 0
        for (receiver, lines) in heard.enumerated() {
            let own = Set(receiver < sent.count ? sent[receiver] : [])
            let others = lines.filter { !own.contains($0) }
            let distinct = Set(others)
            duplicated += others.count - distinct.count
            for (sender, lines) in sent.enumerated() where sender != receiver {
                lost += lines.filter { !distinct.contains($0) }.count
            }
        }
        return (sent.reduce(0) { $0 + $1.count }, lost, duplicated)
    }

    /// The effective instants of the timelines in force, moved from session time onto the raw
    /// monotonic clock of the presentation logs: the relays run `--session-epoch 0
    /// --clock-offset S`, so session time is raw time plus the time authority's `S` (its drift
    /// adds at most a few hundred µs over a run, within `SyncLogAnalysis.boundaryTolerance`).
    static func changes(_ events: [[WatchEvent]], sessionOffset: Int64) -> [Int64] {
        ScenarioAnalysis.inForce(ScenarioAnalysis.timelines(events)).map { $0.effective - sessionOffset }.sorted()
    }

    /// The raw instant the first playing timeline took effect, if one did.
    static func playStarted(_ events: [[WatchEvent]], sessionOffset: Int64) -> Int64? {
        ScenarioAnalysis.inForce(ScenarioAnalysis.timelines(events)).first { $0.rate > 0 }.map { $0.effective - sessionOffset }
    }

    /// The frames that every one of `peers` showed whose first showing falls in `window`.
    static func showings(_ logs: [[PresentationRecord]], changes: [Int64], window: Range<Int64>) -> [SyncLogAnalysis.FrameShowing] {
        SyncLogAnalysis.showings(logs, changes: changes, minimumPeers: logs.count).filter { window.contains($0.firstPresented) }
    }

    /// The first instant at or after `back` from which the players present in step again: the
    /// first of ten frames in a row (every player showing them) within 1 ms of each other.
    static func inStepAgain(_ showings: [SyncLogAnalysis.FrameShowing], after back: Int64) -> Int64? {
        ScenarioAnalysis.convergedInstant(showings.filter { $0.firstPresented >= back })
    }

    /// One TCP socket of `/proc/net/tcp` (or `tcp6`).
    struct Socket: Equatable {
        /// The remote port.
        var remotePort: UInt16
        /// Whether it is established (state `01`).
        var established: Bool
        /// Its inode, as `/proc/PID/fd` links name it (`socket:[INODE]`).
        var inode: UInt64
    }

    /// The sockets of a `/proc/net/tcp` text: after the header, each line is `sl local rem st
    /// tx:rx tr:when retrnsmt uid timeout inode …`, the addresses `HEXADDR:HEXPORT`.
    static func sockets(procNetTCP text: String) -> [Socket] {
        text.split(separator: "\n").dropFirst().compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count > 9, let colon = fields[2].lastIndex(of: ":"),
                  let port = UInt16(fields[2][fields[2].index(after: colon)...], radix: 16),
                  let inode = UInt64(fields[9]) else { return nil }
            return Socket(remotePort: port, established: fields[3] == "01", inode: inode)
        }
    }

    /// The relay (one of `ports`) that process `pid` holds an established TCP connection to, if
    /// exactly one: where a `tandem host` or `join` is connected now.
    static func relayPort(of pid: Int32, among ports: [UInt16]) -> UInt16? {
        let links = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        let inodes = Set(links.compactMap { link -> UInt64? in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(link)"),
                  target.hasPrefix("socket:[") else { return nil }
            return UInt64(target.dropFirst("socket:[".count).dropLast())
        })
        // Read to the end: a `/proc` file has no size, and reading it by its size reads a page at most.
        let text = ["/proc/net/tcp", "/proc/net/tcp6"].compactMap { path in
            (try? FileHandle(forReadingFrom: URL(fileURLWithPath: path)).readToEnd()).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) }
        }
        let connected = Set(text.flatMap { sockets(procNetTCP: $0) }
            .filter { $0.established && inodes.contains($0.inode) && ports.contains($0.remotePort) }.map(\.remotePort))
        return connected.count == 1 ? connected.first : nil
    }
}
