import Foundation
import TandemMediaTypes
import TandemHarness

extension SyncBenchmark {
    /// The design's bounds on the inter-peer presentation spread (ms): p50 and p99.
    public static let spreadTargets = (p50: 0.3, p99: 1.0)

    /// Turns what a run of `Scenario.sync(peers:)` produced into figures: the peers there from
    /// the start are compared with each other, the one that joined during the script is the late
    /// joiner.
    static func report(_ outcome: ScenarioRun.Outcome, peers: Int, clip: String, seconds: Double) throws -> SyncBenchmarkReport {
        let originals = outcome.peers.filter { !$0.joinedDuringScript }
        // Every peer's changes, in case one missed some: they are checked for agreement below.
        // A gated play's provisional timeline never takes effect (`ScenarioAnalysis.inForce`).
        let announced = ScenarioAnalysis.timelines(originals.map(\.events))
        let changes = Array(Set(ScenarioAnalysis.inForce(announced).map(\.effective))).sorted()
        let hostTimeline = timeline(outcome.peers[0].events)
        let logs = try originals.map(records)
        let spread = SyncLogAnalysis.spread(logs, changes: changes)

        var commands: [SyncBenchmarkReport.Command] = []
        for command in outcome.commands {
            let version = ScenarioAnalysis.change(for: command, outcome: outcome)
            var row = SyncBenchmarkReport.Command(command: command.line, version: version, toEffect: nil, toFirstFrame: nil)
            // A command's effect is the version that carried it out (a gated play's completion).
            let change = version.flatMap { version in announced.first { $0.version == version } }
            let completed = version.flatMap { ScenarioAnalysis.completing($0, in: announced) }
            if let effective = completed?.effective ?? change?.effective {
                row.toEffect = Double(effective - command.written) / 1e6
                if (change?.rate ?? 0) > 0 {
                    let segment = SyncLogAnalysis.segment(scheduled: effective, changes: changes)
                    let firsts = logs.map { log in
                        log.filter { $0.still != true && SyncLogAnalysis.key($0, changes: changes).segment == segment }
                            .map(\.presentedNanoseconds).min()
                    }
                    if firsts.allSatisfy({ $0 != nil }), let last = firsts.compactMap({ $0 }).max() {
                        row.toFirstFrame = Double(last - command.written) / 1e6
                    }
                }
            }
            commands.append(row)
        }

        var lateJoiner: SyncBenchmarkReport.LateJoiner?
        if let late = outcome.peers.first(where: \.joinedDuringScript), let joined = late.events.first(where: { $0.event == "joined" }) {
            let result = SyncLogAnalysis.lateJoin(try records(late), others: logs, changes: changes)
            lateJoiner = SyncBenchmarkReport.LateJoiner(
                peer: peer(late, hostTimeline: hostTimeline),
                toJoined: Double(joined.receivedNanoseconds - late.started) / 1e6,
                toFirstFrame: result.firstFrame.map { Double($0 - late.started) / 1e6 },
                toOnTime: result.onTime.map { Double($0 - late.started) / 1e6 },
                errorAfterOnTime: Percentiles(result.errorsAfterOnTime),
                framesCompared: result.framesCompared)
        }

        let presented = Percentiles(spread.presented)
        let targets = [
            SyncBenchmarkReport.Target(name: "presented spread p50", bound: spreadTargets.p50, measured: presented?.p50,
                                       met: (presented?.p50).map { $0 <= spreadTargets.p50 } ?? false),
            SyncBenchmarkReport.Target(name: "presented spread p99", bound: spreadTargets.p99, measured: presented?.p99,
                                       met: (presented?.p99).map { $0 <= spreadTargets.p99 } ?? false),
        ]
        return SyncBenchmarkReport(
            peers: peers, clip: clip, peerRuns: originals.map { peer($0, hostTimeline: hostTimeline) },
            presentedSpread: presented, scheduledSpread: Percentiles(spread.scheduled),
            pairedFrames: spread.presented.count, unpairedFrames: spread.unpaired,
            commands: commands, commandToEffect: Percentiles(commands.compactMap(\.toEffect)),
            lateJoiner: lateJoiner, targets: targets,
            errors: outcome.errors,
            seconds: seconds)
    }

    /// A peer's run as the report shows it, with the clock the suite's runner gave it.
    private static func peer(_ run: ScenarioRun.Peer, hostTimeline: [Int: Int64]) -> SyncBenchmarkReport.Peer {
        let statistics = run.events.last { $0.event == "statistics" }
        let own = timeline(run.events)
        // Every change the host saw from this peer's first one on, with the same effective instant.
        let first = own.keys.min() ?? Int.max
        let agrees = !own.isEmpty && hostTimeline.allSatisfy { version, instant in version < first || own[version] == instant }
            && own.allSatisfy { hostTimeline[$0.key] == $0.value }
        return SyncBenchmarkReport.Peer(name: run.name, clockOffsetSeconds: clockOffsets[run.index % clockOffsets.count],
                                        clockDriftPPM: clockDrifts[run.index % clockDrifts.count],
                                        presented: statistics?.presented, dropped: statistics?.dropped,
                                        exitStatus: run.exitStatus, agreesOnTimeline: agrees)
    }

    /// Timeline versions and their effective instants, from `timeline` events.
    private static func timeline(_ events: [WatchEvent]) -> [Int: Int64] {
        var versions: [Int: Int64] = [:]
        for event in events where event.event == "timeline" {
            if let version = event.version, let instant = event.effectiveSessionNanoseconds { versions[version] = instant }
        }
        return versions
    }

    private static func records(_ run: ScenarioRun.Peer) throws -> [PresentationRecord] {
        try SyncLogAnalysis.moving(log: run.log, of: run.name)
    }
}
