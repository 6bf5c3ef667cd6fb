import Foundation
import TandemMediaTypes
import TandemMedia

/// The figures of the party scenarios (`host-leaves`, `streamed`): pure functions of the logs,
/// the events and the instants a run recorded, and a thin reader of a run's outcome over them.
extension ScenarioAnalysis {
    /// A step of media time larger than this many frames, within one segment, counts as frames
    /// skipped.
    static let skipFactor = 1.5
    /// How far past a seek's target a frame may be and still count as its first frame at the
    /// new position (seconds).
    static let seekWindow = 0.5

    /// `host-leaves`' figures for `outcome`, nil when no peer 0 left during the script.
    static func hostLeave(_ outcome: ScenarioRun.Outcome, logs: [[PresentationRecord]], timelines: [Timeline]) -> HostLeaveFigures? {
        guard let left = outcome.leaves.first(where: { $0.peer == 0 })?.written else { return nil }
        let staying = outcome.peers.indices.filter { outcome.peers[$0].index != 0 }
        let dropped = staying.compactMap { outcome.peers[$0].events.last { $0.event == "statistics" }?.dropped }.reduce(0, +)
        let changesAfter = timelines.filter { $0.effective > left }.count
        return hostLeave(left: left, scriptStarted: outcome.scriptStarted, staying: staying.map { logs[$0] },
                         changes: timelines.map(\.effective).sorted(), dropped: dropped, changesAfter: changesAfter)
    }

    /// The figures of the peers that stayed (`staying`, moving frames) once the host was told to
    /// leave at `left`; `dropped` is what their statistics said.
    static func hostLeave(left: Int64, scriptStarted: Int64, staying: [[PresentationRecord]], changes: [Int64], dropped: Int,
                          changesAfter: Int) -> HostLeaveFigures {
        let showings = SyncLogAnalysis.showings(staying, changes: changes, minimumPeers: staying.count)
            .filter { $0.firstPresented > left }
        return HostLeaveFigures(
            leftAt: Double(left - scriptStarted) / 1e9, spread: Percentiles(showings.map(\.presentedSpread)),
            framesDropped: dropped, framesSkipped: staying.map { skippedFrames($0, after: left, changes: changes) }.reduce(0, +),
            framesAfter: staying.map { log in log.filter { $0.still != true && $0.presentedNanoseconds > left }.count }.reduce(0, +),
            changesAfter: changesAfter)
    }

    /// Frames missing from `log` after `instant`: between two frames presented one after the
    /// other in the same segment, a step of media time of more than `skipFactor` frames counts
    /// the frames it jumped. A frame is the log's median step of media time.
    static func skippedFrames(_ log: [PresentationRecord], after instant: Int64, changes: [Int64]) -> Int {
        let moving = log.filter { $0.still != true }.sorted { $0.presentedNanoseconds < $1.presentedNanoseconds }
        let steps = zip(moving, moving.dropFirst()).map { $1.pts - $0.pts }.filter { $0 > 0 }.sorted()
        guard !steps.isEmpty else { return 0 }
        let frame = steps[steps.count / 2]
        var skipped = 0
        for (previous, next) in zip(moving, moving.dropFirst()) where next.presentedNanoseconds > instant {
            guard SyncLogAnalysis.segment(scheduled: previous.scheduledNanoseconds, changes: changes)
                    == SyncLogAnalysis.segment(scheduled: next.scheduledNanoseconds, changes: changes) else { continue }
            let step = next.pts - previous.pts
            if step > skipFactor * frame { skipped += Int((step / frame).rounded()) - 1 }
        }
        return skipped
    }

    /// `streamed`'s figures for `outcome`, nil when the scenario has no streaming joiners;
    /// `logs` are each peer's moving frames (the joiners' whole logs are read again, stills
    /// included, for their first frame).
    static func streamed(_ outcome: ScenarioRun.Outcome, scenario: Scenario, logs: [[PresentationRecord]],
                         timelines: [Timeline]) throws -> StreamedFigures? {
        guard !scenario.streamingJoiners.isEmpty else { return nil }
        let everything = try outcome.peers.map { peer in
            FileManager.default.fileExists(atPath: peer.log) ? try PresentationRecord.read(path: peer.log) : []
        }
        let streaming = outcome.peers.indices.filter { scenario.streamingJoiners.contains(outcome.peers[$0].index) }
        let seeks = outcome.commands.compactMap { command -> (written: Int64, target: Double)? in
            let words = command.line.split(separator: " ")
            guard words.count == 2, words[0] == "seek", let target = Double(words[1]) else { return nil }
            return (command.written, target)
        }
        let later = outcome.commands.map(\.written)
        let host = outcome.peers.indices.filter { outcome.peers[$0].index == 0 }
        return streamed(joins: streaming.map { (outcome.peers[$0].joinedAt, everything[$0]) },
                        seeks: seeks.map { seek in (seek.written, seek.target, later.filter { $0 > seek.written }.min() ?? .max) },
                        spreadLogs: (host + streaming).map { logs[$0] }, changes: timelines.map(\.effective).sorted())
    }

    /// The figures of streaming joiners: each `joins` entry is a joiner's `joined` instant and its
    /// whole log (stills included); each seek is when it was written, its target (s) and when the
    /// next command was written; `spreadLogs` are the host's and the joiners' moving frames.
    static func streamed(joins: [(joined: Int64?, log: [PresentationRecord])], seeks: [(written: Int64, target: Double, until: Int64)],
                         spreadLogs: [[PresentationRecord]], changes: [Int64]) -> StreamedFigures {
        var toFirst: [Double] = []
        var toSeek: [Double] = []
        var missed = 0
        for join in joins {
            let ordered = join.log.sorted { $0.presentedNanoseconds < $1.presentedNanoseconds }
            if let joined = join.joined, let first = ordered.first(where: { $0.presentedNanoseconds >= joined }) {
                toFirst.append(Double(first.presentedNanoseconds - joined) / 1e6)
            }
            for seek in seeks {
                // Only seeks made while this joiner was presenting.
                guard let start = ordered.first?.presentedNanoseconds, start < seek.written else { continue }
                let shown = ordered.first { record in
                    record.still != true && record.presentedNanoseconds > seek.written && record.presentedNanoseconds < seek.until
                        && record.pts >= seek.target - 0.001 && record.pts < seek.target + seekWindow
                }
                if let shown {
                    toSeek.append(Double(shown.presentedNanoseconds - seek.written) / 1e6)
                } else {
                    missed += 1
                }
            }
        }
        return StreamedFigures(joiners: joins.count, joinedToFirstFrame: Percentiles(toFirst), seekToFirstFrame: Percentiles(toSeek),
                               seeksMissed: missed, spread: Percentiles(SyncLogAnalysis.spread(spreadLogs, changes: changes).presented))
    }

    /// The `monotonic_ns` of the first `joined` event among `lines` (a joiner that streams
    /// prints it: the instant it joined on its own clock, which the bench shares).
    static func joinedInstant(_ lines: [String]) -> Int64? {
        guard let line = lines.first(where: { $0.contains(#""event":"joined""#) }),
              let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
        return (object["monotonic_ns"] as? NSNumber)?.int64Value
    }
}
