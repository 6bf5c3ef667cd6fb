import Testing
import TandemMediaTypes
@testable import TandemBench

/// Frames are compared by item as well as by media time: in a queue the group moves to the next
/// item at an item's end with no timeline change, so two items' frames at the same media time
/// fall in one segment.
@Suite struct FrameKeyItemTests {
    /// Two items of 3 s, each starting at media time 0, played back to back in one segment; a
    /// frame every 40 ms, shown by both peers 0.1 ms apart, except that peer B dropped the first
    /// item's frame at 1 s.
    static func logs() -> [[PresentationRecord]] {
        let start: Int64 = 1_000_000_000_000
        func log(shift: Int64, dropping dropped: (item: String, frame: Int)?) -> [PresentationRecord] {
            ["first", "second"].enumerated().flatMap { index, item in
                (0..<75).compactMap { frame -> PresentationRecord? in
                    if let dropped, dropped.item == item, dropped.frame == frame { return nil }
                    let due = start + Int64(index) * 3_000_000_000 + Int64(frame) * 40_000_000
                    return PresentationRecord(item: item, pts: Double(frame) * 0.04, scheduledNanoseconds: due,
                                              presentedNanoseconds: due + shift)
                }
            }
        }
        return [log(shift: 0, dropping: nil), log(shift: 100_000, dropping: (item: "first", frame: 25))]
    }

    @Test func aFrameDroppedInOneItemIsNotPairedWithTheNextItemsFrameAtTheSameTime() {
        let showings = SyncLogAnalysis.showings(Self.logs(), changes: [], minimumPeers: 2)
        // Every frame both showed, once per item: 75 + 74.
        #expect(showings.count == 149)
        let widest = showings.map(\.presentedSpread).max() ?? 0
        #expect(abs(widest - 0.1) < 1e-9, "a frame was paired across items: \(widest) ms")
    }

    @Test func theSameMediaTimeInTwoItemsIsTwoFrames() {
        let record = Self.logs()[0][0]
        var next = record
        next.item = "second"
        #expect(SyncLogAnalysis.key(record, changes: []) != SyncLogAnalysis.key(next, changes: []))
        #expect(SyncLogAnalysis.key(record, changes: []).item == "first")
    }
}
