import Foundation
import Testing
import TandemMediaTypes
import TandemParty
@testable import TandemBench
import TandemHarness

/// The `stall-auto` figures on made-up runs: from a player's own stall to the group's waiting,
/// stalls the group did not wait for, the spread after resuming, and the report's line.
@Suite struct StallAnalysisTests {
    typealias Timeline = ScenarioAnalysis.Timeline

    static func event(_ kind: String, version: Int? = nil, effective: Int64? = nil, rate: Double = 1, received: Int64 = 0) -> WatchEvent {
        let timeline = version.map { WatchPartyEvent.Timeline(version: $0, rate: rate, mediaTime: 1, effectiveSessionNanoseconds: effective ?? 0, item: "") }
        let payload: WatchPartyEvent = switch (kind, timeline) {
        case ("timeline", let timeline?): .timeline(timeline, .init(by: "", change: "play"))
        case ("waiting", let timeline?): .waiting(timeline, .init(waitingFor: []))
        case ("resumed", let timeline?): .resumed(timeline, .init(by: ""))
        case ("stalled", _): .stalled
        case ("stall-recovered", _): .stallRecovered
        default: .other(name: kind, fields: [:])
        }
        return WatchEvent(payload, receivedNanoseconds: received)
    }

    static func showing(at instant: Int64, spread: Double) -> SyncLogAnalysis.FrameShowing {
        SyncLogAnalysis.FrameShowing(key: SyncLogAnalysis.FrameKey(segment: 0, pts: instant / 1_000), firstPresented: instant,
                                     presentedSpread: spread, scheduledSpread: spread, showings: 4)
    }

    @Test func eachStallIsTimedToTheGroupsNextWaitingAndTheSpreadIsTakenAfterEachResume() {
        let timelines = [
            Timeline(version: 2, effective: 1_000_000_000, mediaTime: 0, rate: 1),
            Timeline(version: 3, effective: 3_040_000_000, mediaTime: 2, rate: 0),
            Timeline(version: 4, effective: 4_000_000_000, mediaTime: 2, rate: 1),
            Timeline(version: 5, effective: 6_000_000_000, mediaTime: 4, rate: 0),
        ]
        let events = [
            [Self.event("timeline", version: 2, effective: 1_000_000_000), Self.event("waiting", version: 3, effective: 3_040_000_000, rate: 0),
             Self.event("resumed", version: 4, effective: 4_000_000_000), Self.event("timeline", version: 5, effective: 6_000_000_000, rate: 0)],
            // The stalled peer: its stall reached the suite 40 ms before the waiting took effect;
            // a later stall that nobody waited for.
            [Self.event("stalled", received: 3_000_000_000), Self.event("stall-recovered", received: 3_900_000_000),
             Self.event("stalled", received: 5_000_000_000)],
        ]
        let showings = [
            Self.showing(at: 2_000_000_000, spread: 9),    // before the stall: not counted after resuming
            Self.showing(at: 4_000_000_000, spread: 0.2),
            Self.showing(at: 5_500_000_000, spread: 0.6),
            Self.showing(at: 6_000_000_000, spread: 7),    // the next change's: not counted
        ]
        let figures = ScenarioAnalysis.stallFigures(events: events, showings: showings, timelines: timelines)
        #expect(figures.stalls == 2)
        #expect(figures.toWait.count == 1)
        #expect(abs(figures.toWait[0] - 40) < 1e-9)
        #expect(figures.unanswered == 1)
        #expect(figures.resumedSpread == [0.2, 0.6])
    }

    @Test func aWaitingBeforeTheStallBeyondThePipesSlackIsNotItsAnswer() {
        let timelines = [Timeline(version: 3, effective: 1_000_000_000, mediaTime: 0, rate: 0)]
        let events = [[Self.event("waiting", version: 3, effective: 1_000_000_000, rate: 0), Self.event("stalled", received: 1_100_000_000)]]
        let figures = ScenarioAnalysis.stallFigures(events: events, showings: [], timelines: timelines)
        #expect(figures.toWait.isEmpty)
        #expect(figures.unanswered == 1)
        #expect(figures.resumedSpread.isEmpty)
    }

    @Test func theReportSaysHowSoonTheGroupWaitedAndHowCloseItResumed() {
        var tandem = ReportFixture.steady.runs[1]
        tandem.stalls = 3
        tandem.unansweredStalls = 0
        tandem.stallToWait = Percentiles([12, 20, 31])
        tandem.resumedSpread = Percentiles([0.2, 0.4])
        var baseline = ReportFixture.steady.runs[0]
        baseline.stalls = 2
        baseline.unansweredStalls = 2
        let scenario = ScenarioResult(name: "stall-auto", summary: "", peers: 4, player: "builtin", network: "loopback",
                                      runs: [baseline, tandem])
        let table = SuiteTable(SuiteReport(date: "", machine: "", quick: false, seconds: 1, scenarios: [scenario, ReportFixture.steady]))
        #expect(table.stallLines == [
            "stall-auto, apply on receipt: 2 stalls, the group waited for none",
            "stall-auto, tandem: 3 stalls, the group waited for 3; stall → waiting p50 20.0, max 31.0 ms; "
                + "spread after resuming p99 0.400, max 0.400 ms (2 frames)",
        ])
        #expect(SuiteMarkdown.table(SuiteReport(date: "", machine: "", quick: false, seconds: 1, scenarios: [scenario]))
            .contains("the group waited for 3"))
    }
}

/// The `long-session` line: the raw client's proposals, and when the late joiner was on time.
@Suite struct ProposalLineTests {
    @Test func theLineSaysHowManyHowFastAndWhenTheJoinerWasOnTime() {
        var run = ReportFixture.steady.runs[1]
        let scenario = ScenarioResult(name: "long-session", summary: "", peers: 3, player: "builtin", network: "loopback", runs: [run])
        #expect(SuiteTable.proposalLine(scenario, run) == nil)
        run.rawProposals = 100_000
        run.rawProposalSeconds = 10.24
        run.convergence = Percentiles([412])
        run.convergenceEvents = 1
        run.notConverged = 0
        #expect(SuiteTable.proposalLine(scenario, run)
            == "long-session, tandem: a raw client made 100000 proposals in 10.2 s; the late joiner was on time 412 ms after its process start")
        run.convergence = nil
        run.notConverged = 1
        #expect(SuiteTable.proposalLine(scenario, run)?.hasSuffix("the late joiner was never on time") == true)
        let report = SuiteReport(date: "", machine: "", quick: false, seconds: 1, scenarios: [
            ScenarioResult(name: "long-session", summary: "", peers: 3, player: "builtin", network: "loopback", runs: [run]),
        ])
        #expect(SuiteTable(report).proposalLines.count == 1)
        #expect(SuiteMarkdown.table(report).contains("a raw client made 100000 proposals"))
    }
}
