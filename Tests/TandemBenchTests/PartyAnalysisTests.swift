import Foundation
import Testing
import TandemMediaTypes
import TandemHarness
import TandemMedia
@testable import TandemBench

/// The party scenarios' figures on made-up logs: the others after the host left (spread, frames
/// skipped), and joiners that stream (joined to first frame, seek to the first frame at the new
/// position, seeks never shown).
@Suite struct PartyAnalysisTests {
    static let frame: Int64 = 40_000_000

    /// Frames of 40 ms from `pts` on, presented `offset` ns after the instant the timeline gives
    /// them, starting at `start`; `missing` are frame numbers left out.
    static func frames(from pts: Double, start: Int64, count: Int, offset: Int64 = 0, missing: Set<Int> = [], still: Bool = false) -> [PresentationRecord] {
        (0..<count).filter { !missing.contains($0) }.map { number in
            let scheduled = start + Int64(number) * frame
            return PresentationRecord(item: "clip", pts: pts + Double(number) * 0.04, scheduledNanoseconds: scheduled,
                                      presentedNanoseconds: scheduled + offset, still: still ? true : nil)
        }
    }

    @Test func theOthersSpreadAfterTheHostLeftCountsOnlyTheirFramesFromThen() {
        let start: Int64 = 1_000_000_000
        let left = start + 50 * Self.frame
        // Two staying peers 0.2 ms apart, one of them 3 ms off before the leave (not counted).
        let one = Self.frames(from: 0, start: start, count: 100)
        var two = Self.frames(from: 0, start: start, count: 100, offset: 200_000)
        for index in 0..<50 { two[index].presentedNanoseconds += 3_000_000 }
        let figures = ScenarioAnalysis.hostLeave(left: left, scriptStarted: start - 500_000_000, staying: [one, two],
                                                 changes: [start], dropped: 0, changesAfter: 1)
        let spread = try! #require(figures.spread)
        #expect(spread.count == 49)
        #expect(abs(spread.max - 0.2) < 1e-9)
        #expect(abs(figures.leftAt - 2.5) < 1e-9)
        #expect(figures.framesAfter == 99)
        #expect(figures.framesSkipped == 0)
        #expect(figures.changesAfter == 1)
    }

    @Test func framesMissingAfterTheLeaveAreSkippedButASeekIsNot() {
        let start: Int64 = 1_000_000_000
        let seek = start + 60 * Self.frame
        // Frames 10 and 11 missing before the leave (not counted), 30 and 41–43 after it; then a
        // seek to 12 s is a new segment, not a skip.
        let before = Self.frames(from: 0, start: start, count: 60, missing: [10, 11, 30, 41, 42, 43])
        let after = Self.frames(from: 12, start: seek, count: 20)
        let skipped = ScenarioAnalysis.skippedFrames(before + after, after: start + 20 * Self.frame, changes: [start, seek])
        #expect(skipped == 4)
        // Stills are no frames of a playing timeline.
        let stills = Self.frames(from: 5, start: start, count: 10, missing: [4], still: true)
        #expect(ScenarioAnalysis.skippedFrames(stills, after: 0, changes: [start]) == 0)
    }

    @Test func streamingJoinersFirstFramesAndSeeksAreMeasuredFromTheirOwnInstants() {
        let start: Int64 = 10_000_000_000
        let host = Self.frames(from: 0, start: start, count: 200)
        // A joiner whose first frame (a still) comes 300 ms after it joined, then plays; a seek
        // to 4 s written at +2 s, shown by it from +2.15 s.
        let joined = start - 300_000_000
        let seekWritten = start + 2_000_000_000
        let seekShown = start + 2_150_000_000
        var first = [PresentationRecord(item: "clip", pts: 0, scheduledNanoseconds: start, presentedNanoseconds: start, still: true)]
        first += Self.frames(from: 0, start: start, count: 50, offset: 100_000)
        first += Self.frames(from: 4, start: seekShown, count: 40)
        // A second that joins after the seek: its first frame counts, the seek does not.
        let lateJoined = start + 3_000_000_000
        let late = Self.frames(from: 7, start: lateJoined + 500_000_000, count: 20)
        // A third that never shows the seek's position before the next command.
        let lost = Self.frames(from: 0, start: start, count: 100)
        let figures = ScenarioAnalysis.streamed(
            joins: [(joined, first), (lateJoined, late), (nil, lost)],
            seeks: [(seekWritten, 4, start + 5_000_000_000)],
            spreadLogs: [host, Self.frames(from: 0, start: start, count: 50, offset: 100_000)], changes: [start])
        #expect(figures.joiners == 3)
        let toFirst = try! #require(figures.joinedToFirstFrame)
        #expect(toFirst.count == 2)
        #expect(abs(toFirst.min - 300) < 1e-6 && abs(toFirst.max - 500) < 1e-6)
        let toSeek = try! #require(figures.seekToFirstFrame)
        #expect(toSeek.count == 1)
        #expect(abs(toSeek.p50 - 150) < 1e-6)
        #expect(figures.seeksMissed == 1)
        #expect(abs((figures.spread?.max ?? 0) - 0.1) < 1e-9)
    }

    /// The baseline's effect of a command is the last of the peers already there hearing it; a
    /// peer that joins later hears it in its history (`sync`'s late joiner), which is no effect.
    @Test func aLaterJoinerHearingAChangeInItsHistoryIsNoEffectOfTheCommand() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-party-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var outcome = try ScenarioAnalysisTests.madeUpRun(in: directory)
        // peer-2 starts at 11 s, after the play was written (9.97 s), and hears it at 11.5 s.
        outcome.peers[2].started = 11_000_000_000
        outcome.peers[2].events[0].receivedNanoseconds = 11_500_000_000
        let baseline = try ScenarioAnalysis.result(outcome, scenario: Scenario(name: "made-up", summary: "", peers: 3, steps: []), mode: .onReceipt)
        // The play: peer-1's 9.985 s; the seek: peer-2's 13.001 s, for it was there by then.
        #expect(abs((baseline.commandToEffect?.min ?? 0) - 15) < 0.001)
        #expect(abs((baseline.commandToEffect?.max ?? 0) - 31) < 0.001)
    }

    @Test func joinedInstantIsReadFromTheJoinedLine() {
        let lines = [#"tandem://x"#, #"{"event":"streaming","item":"a"}"#, #"{"event":"joined","streamed":true,"monotonic_ns":123456789}"#]
        #expect(ScenarioAnalysis.joinedInstant(lines) == 123_456_789)
        #expect(ScenarioAnalysis.joinedInstant([#"{"event":"joined","participant":"ana"}"#]) == nil)
    }

    @Test func thePartyLinesSayWhatWasMeasured() {
        var run = ModeResult(mode: .coordinator, spread: nil, clockError: nil, commandToEffect: nil, convergence: nil, convergenceEvents: 0,
                             notConverged: 0, framesPresented: 0, framesDropped: 0, peers: [], spreadSeries: [], clockErrorSeries: [], errors: [])
        run.hostLeave = HostLeaveFigures(leftAt: 4, spread: Percentiles([0.1, 0.2, 0.4]), framesDropped: 0, framesSkipped: 1,
                                         framesAfter: 300, changesAfter: 2)
        run.streamed = StreamedFigures(joiners: 2, joinedToFirstFrame: Percentiles([310, 420]), seekToFirstFrame: nil, seeksMissed: 2,
                                       spread: nil)
        let scenario = ScenarioResult(name: "party", summary: "", peers: 3, player: "builtin", network: "loopback", runs: [run])
        let lines = SuiteTable.partyLines(SuiteReport(date: "", machine: "", quick: true, seconds: 1, scenarios: [scenario]))
        #expect(lines.count == 2)
        #expect(lines[0].contains("the host left at 4.000 s") && lines[0].contains("p99 0.400") && lines[0].contains("1 skipped of 300"))
        #expect(lines[1].contains("2 joiners streaming") && lines[1].contains("p50 310, max 420 ms") && lines[1].contains("(2 missed)"))
    }

    @Test func theFrameFlipLineSaysThePeersAndTheFloorAndSurvivesTheReport() throws {
        var run = ModeResult(mode: .coordinator, spread: nil, clockError: nil, commandToEffect: nil, convergence: nil, convergenceEvents: 0,
                             notConverged: 0, framesPresented: 0, framesDropped: 0, peers: [], spreadSeries: [], clockErrorSeries: [], errors: [])
        run.frameFlips = FrameFlipFigures(spread: Percentiles([0.2, 0.4, 0.6, 5]), floor: nil)
        let scenario = ScenarioResult(name: "mpv", summary: "", peers: 3, player: "mpv", network: "loopback", runs: [run])
        let report = SuiteReport(date: "", machine: "", quick: true, seconds: 1, scenarios: [scenario])
        let lines = SuiteTable.partyLines(report)
        #expect(lines.count == 1)
        #expect(lines[0].hasPrefix("mpv, tandem: frames shown (frame-flip probe) p50 ") && lines[0].contains("max 5.000 ms (4 frames)"), "\(lines)")
        #expect(lines[0].hasSuffix("the floor, 3 bare mpv in the same sitting: \(SuiteTable.missing)"), "\(lines)")
        // In the JSON report, and back.
        let decoded = try JSONDecoder().decode(SuiteReport.self, from: JSONEncoder().encode(report))
        #expect(decoded.scenarios[0].runs[0].frameFlips == run.frameFlips)
    }
}
