import Foundation
import Testing
import TandemParty
import TandemMediaTypes
import TandemHarness
import TandemMedia
@testable import TandemBench

/// `tandem bench sync` as the suite's scenario `sync`: its script, and its report's figures read
/// off a made-up run of the suite's runner (the spread between the peers there from the start,
/// each command's effect and first frame, the late joiner).
@Suite struct SyncScenarioTests {
    @Test func theSyncScenarioIsTheHostsScriptThenALateJoiner() {
        let scenario = Scenario.sync(peers: 4)
        #expect(scenario.name == "sync" && scenario.peers == 4)
        var lines: [String] = []
        var joined: [Int] = []
        for step in scenario.steps {
            switch step {
            case .commands(let commands):
                #expect(commands.allSatisfy { $0.peer == 0 })
                lines += commands.map(\.line)
            case .join(let index): joined.append(index)
            default: break
            }
        }
        #expect(lines == ["play", "pause", "seek 10", "rate 1.5", "seek 2", "rate 1", "pause"])
        #expect(joined == [4])
        #expect(scenario.allPeers == [0, 1, 2, 3, 4])
    }

    static let frame: Int64 = 40_000_000

    static func log(_ path: String, start: Int64, count: Int, offset: Int64) throws {
        let lines = (0..<count).map { number in
            let scheduled = start + Int64(number) * frame
            return #"{"item":"clip","pts":\#(Double(number) * 0.04),"scheduled_ns":\#(scheduled),"presented_ns":\#(scheduled + offset)}"#
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    static func event(_ kind: String, version: Int? = nil, effective: Int64? = nil, rate: Double? = nil, by: String? = nil,
                      change: String? = nil, received: Int64 = 0) -> WatchEvent {
        let payload: WatchPartyEvent
        switch kind {
        case "joined": payload = .joined(.init(session: "", participant: "", item: ""))
        case "timeline":
            payload = .timeline(.init(version: version ?? 0, rate: rate ?? 0, mediaTime: 0, effectiveSessionNanoseconds: effective ?? 0, item: ""),
                                .init(by: by ?? "", change: change ?? ""))
        default: payload = .other(name: kind, fields: [:])
        }
        return WatchEvent(payload, receivedNanoseconds: received)
    }

    @Test func theReportComparesThePeersFromTheStartAndMeasuresTheLateJoiner() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-scenario-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let written: Int64 = 1_000_000_000
        let effective = written + 30_000_000
        // Host and joiner 0.2 ms apart; the late joiner 5 ms late for its first 20 frames, then on time.
        try Self.log(directory + "/0.jsonl", start: effective, count: 100, offset: 0)
        try Self.log(directory + "/1.jsonl", start: effective, count: 100, offset: 200_000)
        let lateStart = effective + 40 * Self.frame
        let lateLines = (40..<100).map { number in
            let scheduled = effective + Int64(number) * Self.frame
            let presented = scheduled + (number < 60 ? 5_000_000 : 100_000)
            return #"{"item":"clip","pts":\#(Double(number) * 0.04),"scheduled_ns":\#(scheduled),"presented_ns":\#(presented)}"#
        }
        try (lateLines.joined(separator: "\n") + "\n").write(toFile: directory + "/2.jsonl", atomically: true, encoding: .utf8)

        let play = Self.event("timeline", version: 2, effective: effective, rate: 1, by: "peer-0", change: "play")
        func peer(_ index: Int, late: Bool = false, events: [WatchEvent], started: Int64) -> ScenarioRun.Peer {
            ScenarioRun.Peer(name: "peer-\(index)", index: index, log: directory + "/\(index).jsonl",
                             events: [Self.event("joined", received: started + 300_000_000)] + events + [WatchEvent(.statistics(.init(presented: 100, dropped: 0, stills: 0)))], exitStatus: 3, started: started, joinedDuringScript: late,
                             usage: PeerUsage(peer: "peer-\(index)", cpuPercent: nil, peakMemoryMiB: nil))
        }
        let outcome = ScenarioRun.Outcome(
            peers: [peer(0, events: [play], started: 0), peer(1, events: [play], started: 0),
                    peer(2, late: true, events: [play], started: lateStart - 400_000_000)],
            commands: [ScenarioRun.Command(peer: 0, line: "play", written: written)],
            scriptStarted: written, errors: [])
        let report = try SyncBenchmark.report(outcome, peers: 2, clip: "clip.mp4", seconds: 20)

        #expect(report.peerRuns.map(\.name) == ["peer-0", "peer-1"])
        #expect(report.peerRuns.allSatisfy { $0.agreesOnTimeline })
        #expect(report.peerRuns[1].clockOffsetSeconds == SyncBenchmark.clockOffsets[1])
        #expect(report.pairedFrames == 100)
        #expect(abs((report.presentedSpread?.max ?? 0) - 0.2) < 1e-9)
        #expect(report.commands.count == 1 && report.commands[0].version == 2)
        #expect(abs((report.commands[0].toEffect ?? 0) - 30) < 1e-9)
        // The last peer's first frame of the play: joiner 1's, 0.2 ms after the effect.
        #expect(abs((report.commands[0].toFirstFrame ?? 0) - 30.2) < 1e-9)
        let late = try #require(report.lateJoiner)
        #expect(late.peer.name == "peer-2")
        #expect(abs((late.toJoined ?? 0) - 300) < 1e-9)
        #expect(abs((late.toFirstFrame ?? 0) - 405) < 1e-9)
        // On time from its 60th frame on: 20 frames and 0.1 ms after its first frame's instant.
        #expect(abs((late.toOnTime ?? 0) - (400 + 20 * 40 + 0.1)) < 1e-9)
        #expect(report.targets.map(\.met) == [true, true])
    }
}
