import Foundation
import Testing
import TandemHarness
@testable import TandemBench
import TandemMediaTypes

/// The `queue` measure on made-up logs: the first frames of each next item, per item.
@Suite struct QueueAnalysisTests {
    static func record(_ item: String, pts: Double, presented: Int64, still: Bool = false) -> PresentationRecord {
        let line = #"{"item":"\#(item)","pts":\#(pts),"scheduled_ns":\#(presented),"presented_ns":\#(presented)\#(still ? #","still":true"# : "")}"#
        return try! JSONDecoder().decode(PresentationRecord.self, from: Data(line.utf8))
    }

    @Test func eachNextItemsFirstFramesAreComparedAcrossPeers() {
        // Two peers; item a plays first, then b (peer 1 a little late on b's first frame), then c.
        let base: Int64 = 1_000_000_000
        let peer0 = [Self.record("a", pts: 0, presented: base), Self.record("a", pts: 0.04, presented: base + 40_000_000),
                     Self.record("b", pts: 0, presented: base + 80_000_000, still: true),
                     Self.record("b", pts: 0, presented: base + 100_000_000), Self.record("b", pts: 0.04, presented: base + 140_000_000),
                     Self.record("b", pts: 0.08, presented: base + 180_000_000),
                     Self.record("c", pts: 0, presented: base + 300_000_000)]
        let peer1 = [Self.record("a", pts: 0, presented: base + 100_000), Self.record("b", pts: 0, presented: base + 100_500_000),
                     Self.record("b", pts: 0.04, presented: base + 140_200_000),
                     // A repeat of b's first frame later on counts at its first showing.
                     Self.record("b", pts: 0, presented: base + 900_000_000),
                     Self.record("c", pts: 0, presented: base + 300_300_000)]
        let transitions = QueueAnalysis.transitions([peer0, peer1], frames: 2)
        #expect(transitions.map(\.item) == ["b", "c"])
        // b: its first two frames (the third is past `frames`); the still is not a frame shown.
        #expect(transitions[0].spreads.count == 2)
        #expect(abs(transitions[0].spreads[0] - 0.5) < 1e-9)
        #expect(abs(transitions[0].spreads[1] - 0.2) < 1e-9)
        #expect(transitions[1].spreads.count == 1)
        #expect(abs(transitions[1].spreads[0] - 0.3) < 1e-9)
    }

    @Test func aFrameOnlyOnePeerShowedIsNotASpread() {
        let logs = [[Self.record("a", pts: 0, presented: 0), Self.record("b", pts: 0, presented: 10)],
                    [Self.record("a", pts: 0, presented: 0)]]
        let transitions = QueueAnalysis.transitions(logs)
        #expect(transitions == [QueueAnalysis.Transition(item: "b", spreads: [])])
        #expect(QueueAnalysis.transitions([[Self.record("a", pts: 0, presented: 0)]]).isEmpty)
    }
}
