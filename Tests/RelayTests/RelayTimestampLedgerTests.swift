import Testing
import TandemClock
import TandemNet

/// The matching of kernel timestamps to records and copies, without sockets.
@Suite struct RelayTimestampLedgerTests {
    private func at(_ nanoseconds: Int64) -> KernelStamp { KernelStamp(nanoseconds: nanoseconds) }

    @Test func aCopyTakesTheFirstStampAtOrPastItsLastByte() {
        var ledger = RelayTimestampLedger()
        let record = ledger.arrive(at: at(1_000))
        // Stream 1: a control frame (bytes 0…9) written alone, then the copy (10…59) with another
        // frame in one write ending at byte 99.
        ledger.send(record: record, stream: 1, lastByte: 59)
        ledger.stamp(stream: 1, key: 9, stage: .sent, at: at(900))
        ledger.stamp(stream: 1, key: 99, stage: .scheduled, at: at(1_300))
        ledger.stamp(stream: 1, key: 99, stage: .sent, at: at(1_400))
        // Stream 2: the copy alone.
        ledger.send(record: record, stream: 2, lastByte: 49)
        ledger.stamp(stream: 2, key: 49, stage: .scheduled, at: at(1_100))
        ledger.stamp(stream: 2, key: 49, stage: .sent, at: at(1_150))
        let sent = ledger.delays(to: .sent)
        #expect(sent.perSend.map(\.nanoseconds) == [400, 150])
        #expect(sent.lastSend.map(\.nanoseconds) == [400])
        #expect(sent.unmatched == 0)
        #expect(ledger.delays(to: .scheduled).perSend.map(\.nanoseconds) == [300, 100])
        #expect(ledger.records == 1 && ledger.copies == 2)
        #expect(ledger.stampCount(.sent) == 3 && ledger.stampCount(.scheduled) == 2)
    }

    @Test func aCopyWithNoStampIsUnmatchedAndItsRecordHasNoLastSend() {
        var ledger = RelayTimestampLedger()
        let first = ledger.arrive(at: at(0))
        let second = ledger.arrive(at: at(10_000))
        ledger.send(record: first, stream: 7, lastByte: 99)
        ledger.send(record: second, stream: 7, lastByte: 199)
        ledger.send(record: second, stream: 8, lastByte: 99)
        ledger.stamp(stream: 7, key: 99, stage: .sent, at: at(500))
        ledger.stamp(stream: 7, key: 199, stage: .sent, at: at(10_700))
        // Stream 8's stamp is for an earlier write: it is not this copy's.
        ledger.stamp(stream: 8, key: 50, stage: .sent, at: at(10_100))
        let sent = ledger.delays(to: .sent)
        #expect(sent.unmatched == 1)
        #expect(sent.perSend.map(\.nanoseconds) == [500, 700])
        #expect(sent.lastSend.map(\.nanoseconds) == [500])
    }

    @Test func keysThatWrapPast32BitsStillMatchInOrder() {
        var ledger = RelayTimestampLedger()
        let record = ledger.arrive(at: at(0))
        let beforeWrap = Int(UInt32.max) - 10
        ledger.send(record: record, stream: 1, lastByte: beforeWrap)
        ledger.send(record: record, stream: 1, lastByte: Int(UInt32.max) + 21)
        ledger.stamp(stream: 1, key: UInt32(beforeWrap), stage: .sent, at: at(100))
        // The byte 2³² + 20 is key 20 once the counter wraps.
        ledger.stamp(stream: 1, key: 20, stage: .sent, at: at(200))
        let sent = ledger.delays(to: .sent)
        #expect(sent.perSend.map(\.nanoseconds) == [100, 200])
        #expect(sent.lastSend.map(\.nanoseconds) == [200])
        #expect(sent.unmatched == 0)
    }

    @Test func anEmptyLedgerHasNothingToSay() {
        let delays = RelayTimestampLedger().delays(to: .scheduled)
        #expect(delays == RelayTimestampLedger.Delays())
    }
}
