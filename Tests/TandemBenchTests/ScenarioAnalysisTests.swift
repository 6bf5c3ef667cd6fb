import Foundation
import Testing
import TandemParty
@testable import TandemBench
import TandemMediaTypes
import TandemHarness

/// The suite's statistics on made-up runs: the shared timeline's instants, convergence, the
/// spread of position readings, which change a command became, and a whole run's figures.
@Suite struct ScenarioAnalysisTests {
    typealias Timeline = ScenarioAnalysis.Timeline

    static let timelines = [
        Timeline(version: 1, effective: 1_000_000_000, mediaTime: 0, rate: 0),
        Timeline(version: 2, effective: 2_000_000_000, mediaTime: 5, rate: 1),
        Timeline(version: 3, effective: 4_000_000_000, mediaTime: 10, rate: 2),
    ]

    /// A presentation record as a log line would give it.
    static func record(pts: Double, scheduled: Int64, presented: Int64) -> PresentationRecord {
        let line = #"{"item":"clip","pts":\#(pts),"scheduled_ns":\#(scheduled),"presented_ns":\#(presented)}"#
        return try! JSONDecoder().decode(PresentationRecord.self, from: Data(line.utf8))
    }

    @Test func theSharedTimelineGivesEachFrameItsInstant() {
        let timelines = ScenarioAnalysisTests.timelines
        #expect(ScenarioAnalysis.idealInstant(pts: 5.5, at: 2_500_000_000, timelines: timelines) == 2_500_000_000)
        // The frame covering a seek's target starts before it: due at the change itself.
        #expect(ScenarioAnalysis.idealInstant(pts: 4.98, at: 2_000_000_000, timelines: timelines) == 2_000_000_000)
        // Paused: no instant.
        #expect(ScenarioAnalysis.idealInstant(pts: 0, at: 1_500_000_000, timelines: timelines) == nil)
        #expect(ScenarioAnalysis.idealInstant(pts: 10.4, at: 4_200_000_000, timelines: timelines) == 4_200_000_000)
        // Half a millisecond early (a peer's clock error) still belongs to the change it starts.
        #expect(ScenarioAnalysis.idealInstant(pts: 10, at: 3_999_500_000, timelines: timelines) == 4_000_000_000)
    }

    @Test func timelinesComeOncePerVersionFromEveryKindOfChange() {
        func announced(_ kind: String, _ version: Int, _ effective: Int64, media: Double? = 1, rate: Double? = 1) -> WatchEvent {
            // Without a media time or a rate, a line is no typed timeline.
            guard let media, let rate else { return WatchEvent(.other(name: kind, fields: ["version": .int(Int64(version))])) }
            let timeline = WatchPartyEvent.Timeline(version: version, rate: rate, mediaTime: media, effectiveSessionNanoseconds: effective, item: "")
            return switch kind {
            case "waiting": WatchEvent(.waiting(timeline, .init(waitingFor: [])))
            case "resumed": WatchEvent(.resumed(timeline, .init(by: "")))
            default: WatchEvent(.timeline(timeline, .init(by: "", change: "play")))
            }
        }
        let peers = [
            [announced("timeline", 2, 20), announced("waiting", 3, 30, rate: 0)],
            [announced("timeline", 2, 20), announced("resumed", 4, 40), announced("timeline", 5, 50, media: nil), WatchEvent(.joined(.init(session: "", participant: "", item: "")))],
        ]
        let timelines = ScenarioAnalysis.timelines(peers)
        #expect(timelines.map(\.version) == [2, 3, 4])
        #expect(timelines.map(\.effective) == [20, 30, 40])
        #expect(timelines[1].rate == 0)
    }

    /// A queue's switch of items: item "a" plays from 1 s (version 1), and at 4 s its end starts
    /// item "b" at 0: the `item-ended` event's timeline, of the same version (an end is no
    /// record). Both are kept, as two peers announced them, and each frame is due on its own
    /// item's timeline: kept by version alone, or measured against the other item's, a frame
    /// read as a clock error of a whole clip (the queue scenario's clock-error p99 of 5.8 to
    /// 17.8 s).
    @Test func eachFrameIsDueOnItsOwnItemsTimeline() {
        let a = WatchPartyEvent.Timeline(version: 1, rate: 1, mediaTime: 0, effectiveSessionNanoseconds: 1_000_000_000, item: "a")
        let b = WatchPartyEvent.Timeline(version: 1, rate: 1, mediaTime: 0, effectiveSessionNanoseconds: 4_000_000_000, item: "b")
        let peer = [WatchEvent(.timeline(a, .init(by: "peer-0", change: "play"))),
                    WatchEvent(.itemEnded(b, .init(identifier: "b", index: 1, change: "end of item: next")))]
        let timelines = ScenarioAnalysis.inForce(ScenarioAnalysis.timelines([peer, peer]))
        #expect(timelines.map(\.effective) == [1_000_000_000, 4_000_000_000])
        #expect(timelines.map(\.item) == ["a", "b"])
        // The first frames of "b".
        #expect(ScenarioAnalysis.idealInstant(pts: 0.5, item: "b", at: 4_500_000_000, timelines: timelines) == 4_500_000_000)
        // The last frame of "a", presented half a millisecond after the switch: still due on a's
        // timeline, at 3.999 s (item-unaware, b's timeline would put it at 6.999 s).
        #expect(ScenarioAnalysis.idealInstant(pts: 2.999, item: "a", at: 4_000_500_000, timelines: timelines) == 3_999_000_000)
        #expect(ScenarioAnalysis.idealInstant(pts: 2.999, at: 4_000_500_000, timelines: timelines) == 6_999_000_000)
        // An item no timeline names is measured against them all.
        #expect(ScenarioAnalysis.idealInstant(pts: 0.5, item: "c", at: 4_500_000_000, timelines: timelines) == 4_500_000_000)
    }

    /// A gated play (`PrerollGate`): ordered at 10 s, it first announces a provisional v2
    /// anchored at the gate's deadline (11 s); once everyone has pre-rolled, v3 starts it at
    /// 10.3 s, before that deadline; a pause (v4) at 12 s. The provisional v2 never takes
    /// effect, and the play's effect is v3's.
    @Test func aGatedPlaysProvisionalTimelineNeverTakesEffect() {
        let announced = [
            Timeline(version: 1, effective: 5_000_000_000, mediaTime: 0, rate: 0),
            Timeline(version: 2, effective: 11_000_000_000, mediaTime: 0, rate: 1),
            Timeline(version: 3, effective: 10_300_000_000, mediaTime: 0, rate: 1),
            Timeline(version: 4, effective: 12_000_000_000, mediaTime: 1.7, rate: 0),
        ]
        let inForce = ScenarioAnalysis.inForce(announced)
        #expect(inForce.map(\.version) == [1, 3, 4])
        #expect(ScenarioAnalysis.completing(2, in: announced)?.version == 3)
        #expect(ScenarioAnalysis.completing(3, in: announced)?.version == 3)
        #expect(ScenarioAnalysis.completing(4, in: announced)?.version == 4)
        #expect(ScenarioAnalysis.completing(9, in: announced) == nil)
        // Between the real start and the deadline, frames are due on v3 ...
        #expect(ScenarioAnalysis.idealInstant(pts: 0.5, at: 10_800_000_000, timelines: inForce) == 10_800_000_000)
        // ... and after the deadline still on v3, not back on the stale v2 (which would say 11.5 s).
        #expect(ScenarioAnalysis.idealInstant(pts: 1.2, at: 11_500_000_000, timelines: inForce) == 11_500_000_000)
        #expect(ScenarioAnalysis.idealInstant(pts: 1.2, at: 11_500_000_000, timelines: announced) == 12_200_000_000)
    }

    @Test(arguments: [
        ([5.0, 3, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 2], 2 as Int?),
        ([0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 2, 0.5], nil),
        ([1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5], nil),
    ])
    func convergenceIsTheFirstOfTenFramesInARowWithinAMillisecond(spreads: [Double], first: Int?) {
        let showings = spreads.enumerated().map { position, spread in
            SyncLogAnalysis.FrameShowing(key: .init(segment: 0, pts: Int64(position)), firstPresented: Int64(position) * 33_000_000,
                                         presentedSpread: spread, scheduledSpread: 0, showings: 3)
        }
        // Given in any order: it is the order of presentation that counts.
        let converged = ScenarioAnalysis.convergedInstant(showings.reversed())
        #expect(converged == first.map { Int64($0) * 33_000_000 })
    }

    @Test func readingsAreComparedPerBinAcrossPeers() {
        // Two peers read every 50 ms over a second of playing from 2 s: one 2 ms late, one 1 ms early.
        func record(pts: Double, scheduled: Int64, presented: Int64) -> PresentationRecord {
            ScenarioAnalysisTests.record(pts: pts, scheduled: scheduled, presented: presented)
        }
        func readings(error: Int64) -> [PresentationRecord] {
            (0..<20).map { step in
                let instant = 2_000_000_000 + Int64(step) * 50_000_000
                return record(pts: 5 + Double(step) * 0.05, scheduled: instant, presented: instant + error)
            }
        }
        var lonely = readings(error: 0)
        lonely = lonely.map { record in
            var moved = record
            // A third peer reads only in a bin of its own, long after: not compared.
            moved.presentedNanoseconds += 10_000_000_000
            moved.pts += 10
            return moved
        }
        let spreads = ScenarioAnalysis.readingSpreads([readings(error: 2_000_000), readings(error: -1_000_000), lonely],
                                                      timelines: ScenarioAnalysisTests.timelines)
        #expect(spreads.count == 10)
        for spread in spreads { #expect(abs(spread.spread - 3) < 1e-6) }
    }

    @Test func eachCommandIsMatchedWithTheChangeItsPeerMade() {
        func change(_ version: Int, by name: String, _ what: String) -> WatchEvent {
            WatchEvent(.timeline(.init(version: version, rate: 1, mediaTime: 0, effectiveSessionNanoseconds: 0, item: ""), .init(by: name, change: what)))
        }
        let events = [change(5, by: "peer-1", "seek 8.000"), change(6, by: "peer-2", "pause"), change(7, by: "peer-1", "rate 1.5")]
        let outcome = ScenarioRun.Outcome(
            peers: [ScenarioRun.Peer(name: "peer-0", index: 0, log: "", events: events, exitStatus: 0, started: 0,
                                     joinedDuringScript: false, usage: PeerUsage(peer: "peer-0", cpuPercent: nil, peakMemoryMiB: nil))],
            commands: [ScenarioRun.Command(peer: 1, line: "seek 8", written: 10), ScenarioRun.Command(peer: 1, line: "stall 1", written: 11),
                       ScenarioRun.Command(peer: 1, line: "rate 1.5", written: 12), ScenarioRun.Command(peer: 1, line: "pause", written: 13)],
            scriptStarted: 0, errors: [])
        #expect(outcome.commands.map { ScenarioAnalysis.change(for: $0, outcome: outcome) } == [5, nil, 7, nil])
    }

    @Test func invitesAreRewrittenToGoThroughTheProxy() throws {
        let invite = "tandem://127.0.0.1:40211/339843af-6056-4ed8-815d-d11121a6b40a?k=c2VjcmV0"
        #expect(ScenarioRun.port(of: invite) == 40211)
        let rewritten = try ScenarioRun.invite(invite, throughPort: 5555)
        #expect(rewritten == "tandem://127.0.0.1:5555/339843af-6056-4ed8-815d-d11121a6b40a?k=c2VjcmV0")
        #expect(throws: BenchmarkError.self) { try ScenarioRun.invite("not an invite", throughPort: 1) }
    }

    /// Three peers play from 0 at 10 s and seek to 5 at 13 s (on the raw clock): the first on
    /// time, the second scheduling 0.2 ms late and presenting 0.05 ms after that, the third
    /// 0.3 ms early.
    static func madeUpRun(in directory: URL) throws -> ScenarioRun.Outcome {
        let errors: [(scheduled: Int64, presented: Int64)] = [(0, 0), (200_000, 50_000), (-300_000, 0)]
        var peers: [ScenarioRun.Peer] = []
        for (index, error) in errors.enumerated() {
            var lines: [String] = []
            for frame in 0..<90 {
                let ideal = 10_000_000_000 + Int64(frame) * 33_333_333
                lines.append(#"{"item":"clip","pts":\#(Double(frame) / 30),"scheduled_ns":\#(ideal + error.scheduled),"presented_ns":\#(ideal + error.scheduled + error.presented)}"#)
            }
            for frame in 0..<60 {
                let ideal = 13_000_000_000 + Int64(frame) * 33_333_333
                lines.append(#"{"item":"clip","pts":\#(5 + Double(frame) / 30),"scheduled_ns":\#(ideal + error.scheduled),"presented_ns":\#(ideal + error.scheduled + error.presented)}"#)
            }
            let log = directory.appendingPathComponent("peer-\(index).jsonl")
            try lines.joined(separator: "\n").write(to: log, atomically: true, encoding: .utf8)
            let play = WatchEvent(.timeline(.init(version: 2, rate: 1, mediaTime: 0, effectiveSessionNanoseconds: 10_000_000_000, item: ""),
                                            .init(by: "peer-0", change: "play")),
                                  receivedNanoseconds: 9_980_000_000 + Int64(index) * 5_000_000)
            let seek = WatchEvent(.timeline(.init(version: 3, rate: 1, mediaTime: 5, effectiveSessionNanoseconds: 13_000_000_000, item: ""),
                                            .init(by: "peer-1", change: "seek 5.000")),
                                  receivedNanoseconds: [12_980_000_000, 12_990_000_000, 13_001_000_000][index])
            let statistics = WatchEvent(.statistics(.init(presented: 150, dropped: index, stills: 0)))
            peers.append(ScenarioRun.Peer(name: "peer-\(index)", index: index, log: log.path, events: [play, seek, statistics],
                                          exitStatus: index == 0 ? 0 : 3, started: 0, joinedDuringScript: false,
                                          usage: PeerUsage(peer: "peer-\(index)", cpuPercent: 4, peakMemoryMiB: 70)))
        }
        return ScenarioRun.Outcome(peers: peers, commands: [ScenarioRun.Command(peer: 0, line: "play", written: 9_970_000_000),
                                                            ScenarioRun.Command(peer: 1, line: "seek 5", written: 12_970_000_000)],
                                   scriptStarted: 9_000_000_000, errors: [])
    }

    /// The same run with its seek made while paused: one still frame until the next change,
    /// nothing to converge, so no convergence event (counted, it read as never converged).
    @Test func aSeekWhilePausedIsNoConvergenceEvent() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-analysis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var outcome = try ScenarioAnalysisTests.madeUpRun(in: directory)
        for index in outcome.peers.indices {
            outcome.peers[index].events = outcome.peers[index].events.map { event in
                guard case .timeline(var timeline, let change) = event.payload, timeline.version == 3 else { return event }
                timeline.rate = 0
                return WatchEvent(.timeline(timeline, change), receivedNanoseconds: event.receivedNanoseconds)
            }
        }
        let scenario = Scenario(name: "made-up", summary: "", peers: 3, steps: [])
        let result = try ScenarioAnalysis.result(outcome, scenario: scenario, mode: .coordinator)
        #expect(result.convergenceEvents == 0 && result.notConverged == 0)
    }

    @Test func aWholeRunGivesItsFigures() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-analysis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outcome = try ScenarioAnalysisTests.madeUpRun(in: directory)
        let scenario = Scenario(name: "made-up", summary: "", peers: 3, steps: [])
        let ours = try ScenarioAnalysis.result(outcome, scenario: scenario, mode: .coordinator)
        #expect(ours.errors.isEmpty, "\(ours.errors)")
        #expect(ours.spread?.count == 150)
        #expect(abs((ours.spread?.p50 ?? 0) - 0.55) < 0.001)
        #expect(abs((ours.clockError?.max ?? 0) - 0.3) < 0.001)
        #expect(ours.clockErrorSeries.map(\.peer) == ["peer-0", "peer-1", "peer-2"])
        #expect(abs((ours.clockErrorSeries[1].points.first?.value ?? 0) - 0.2) < 0.001)
        #expect(ours.commandToEffect.map { [$0.min, $0.max] } == [30, 30])
        // The seek: ten frames in a row within 1 ms from its first frame, which peer-2 showed 0.3 ms early.
        #expect(ours.convergenceEvents == 1 && ours.notConverged == 0)
        #expect(abs((ours.convergence?.p50 ?? 0) - 29.7) < 0.001)
        #expect(ours.framesPresented == 450 && ours.framesDropped == 3)
        #expect(abs((ours.spreadSeries.first?.t ?? 0) - 1.0) < 0.001)

        // The baseline: no clock error; a change is in effect once it reached the last peer.
        let baseline = try ScenarioAnalysis.result(outcome, scenario: scenario, mode: .onReceipt)
        #expect(baseline.clockError == nil && baseline.clockErrorSeries.isEmpty)
        #expect(abs((baseline.commandToEffect?.max ?? 0) - 31) < 0.001)
        #expect(abs((baseline.commandToEffect?.min ?? 0) - 20) < 0.001)
    }

    @Test func aPeerThatFailedIsAnError() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-analysis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var outcome = try ScenarioAnalysisTests.madeUpRun(in: directory)
        outcome.peers[2].exitStatus = nil
        outcome.commands.append(ScenarioRun.Command(peer: 2, line: "pause", written: 15_000_000_000))
        let result = try ScenarioAnalysis.result(outcome, scenario: Scenario(name: "made-up", summary: "", peers: 3, steps: []), mode: .coordinator)
        #expect(result.errors.contains("peer-2 exited with status none (killed)"))
        #expect(result.errors.contains("peer-2's 'pause' became no timeline change"))
        // A log that is not a log is a clear error.
        try "not json".write(toFile: outcome.peers[1].log, atomically: true, encoding: .utf8)
        #expect(throws: BenchmarkError.self) {
            try ScenarioAnalysis.result(outcome, scenario: Scenario(name: "made-up", summary: "", peers: 3, steps: []), mode: .coordinator)
        }
    }
}
