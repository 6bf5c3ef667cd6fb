import Foundation
import Testing
import TandemBench
import TandemMediaTypes

/// The pairing behind `tandem bench sync`, on made-up logs.
@Suite struct SyncLogAnalysisTests {
    private func record(_ pts: Double, scheduled: Int64, presented: Int64) -> PresentationRecord {
        // As a log line, the way the benchmark reads them.
        let line = "{\"item\":\"clip\",\"pts\":\(pts),\"scheduled_ns\":\(scheduled),\"presented_ns\":\(presented)}"
        return try! JSONDecoder().decode(PresentationRecord.self, from: Data(line.utf8))
    }

    @Test func aFrameShownTwiceAfterASeekBackPairsEachShowingWithItsOwn() {
        // A change at 1 s: the seek back; frame 0.5 is shown before and after it.
        let changes: [Int64] = [1_000_000_000]
        let a = [record(0.5, scheduled: 500_000_000, presented: 500_100_000),
                 record(0.5, scheduled: 1_000_000_000, presented: 1_000_200_000)]
        let b = [record(0.5, scheduled: 500_000_000, presented: 500_300_000),
                 record(0.5, scheduled: 999_990_000, presented: 1_000_100_000)]
        let spread = SyncLogAnalysis.spread([a, b], changes: changes)
        #expect(spread.presented == [0.2, 0.1])
        #expect(spread.scheduled == [0, 0.01])
        #expect(spread.unpaired == 0)
    }

    @Test func framesNotEveryPeerShowedAreCountedNotPaired() {
        let a = [record(0.1, scheduled: 100, presented: 100), record(0.2, scheduled: 200, presented: 200)]
        let b = [record(0.1, scheduled: 100, presented: 150)]
        let spread = SyncLogAnalysis.spread([a, b], changes: [])
        #expect(spread.presented.count == 1)
        #expect(spread.unpaired == 1)
    }

    @Test func aLateJoinerIsOnTimeFromTheFirstOfTenFramesInARowWithinAMillisecond() {
        let frames = (0..<20).map { Double($0) / 30 }
        let others = [frames.map { record($0, scheduled: Int64($0 * 1e9), presented: Int64($0 * 1e9)) }]
        // Its first three frames are 5 ms late, the rest within 0.5 ms.
        let joiner = frames.enumerated().map { index, pts in
            record(pts, scheduled: Int64(pts * 1e9), presented: Int64(pts * 1e9) + (index < 3 ? 5_000_000 : 500_000))
        }
        let result = SyncLogAnalysis.lateJoin(joiner, others: others, changes: [])
        #expect(result.firstFrame == 5_000_000)
        #expect(result.onTime == Int64(frames[3] * 1e9) + 500_000)
        #expect(result.errorsAfterOnTime.count == 17)
        #expect(result.framesCompared == 20)
    }
}
