import Foundation
import Testing
import Tandem
import TandemClock
@testable import TandemParty

/// The relay's time jumps as a watch party says them (`TimeJumpTally`, `relay-time-jump`): the
/// first at once, the rest counted into one line an interval, on virtual time.
@Suite struct TimeJumpTallyTests {
    static func at(_ seconds: Double) -> LocalInstant { LocalInstant(nanoseconds: Int64(seconds * 1e9)) }
    static func jump(_ order: UInt64, ms: Int64) -> SessionTimeJump { SessionTimeJump(order: order, ahead: .milliseconds(ms)) }

    @Test func theFirstJumpIsSaidAtOnceAndTheRestAreCountedIntoOneLine() {
        var tally = TimeJumpTally()
        #expect(tally.record(Self.jump(10, ms: 3_000), now: Self.at(100)) == [.init(order: 10, ahead: .milliseconds(3_000), count: 1)])
        #expect(tally.nextFlush == Self.at(110))
        // Within the interval: counted, not said.
        #expect(tally.record(Self.jump(11, ms: 900), now: Self.at(101)).isEmpty)
        #expect(tally.record(Self.jump(14, ms: 4_200), now: Self.at(105)).isEmpty)
        #expect(tally.record(Self.jump(15, ms: 600), now: Self.at(109.9)).isEmpty)
        #expect(tally.flush(now: Self.at(109.99)) == nil)
        // At its end, one line: how many, the furthest and the newest order.
        #expect(tally.flush(now: Self.at(110)) == .init(order: 15, ahead: .milliseconds(4_200), count: 3))
        #expect(tally.nextFlush == Self.at(120))
        // An interval with nothing in it closes; the next jump is said at once again.
        #expect(tally.flush(now: Self.at(120)) == nil)
        #expect(tally.nextFlush == nil)
        #expect(tally.record(Self.jump(40, ms: 700), now: Self.at(300)) == [.init(order: 40, ahead: .milliseconds(700), count: 1)])
    }

    @Test func aJumpAfterAnIntervalEndedUnflushedSaysItsCountFirst() {
        var tally = TimeJumpTally(interval: .seconds(10))
        _ = tally.record(Self.jump(1, ms: 1_000), now: Self.at(0))
        _ = tally.record(Self.jump(2, ms: 2_000), now: Self.at(1))
        // Nobody flushed at 10 s: the jump at 12 s brings the count of the interval before it,
        // and is counted into the next one.
        #expect(tally.record(Self.jump(3, ms: 500), now: Self.at(12)) == [.init(order: 2, ahead: .milliseconds(2_000), count: 1)])
        #expect(tally.flush(now: Self.at(22)) == .init(order: 3, ahead: .milliseconds(500), count: 1))
    }

    /// A relay that jumps twenty times a second for a minute costs at most a line every ten
    /// seconds, and the lines account for every jump.
    @Test func aRelayThatJumpsAgainAndAgainCostsALineAnInterval() {
        var tally = TimeJumpTally()
        var said: [(at: Double, count: TimeJumpTally.Count)] = []
        for step in 0..<1_200 {
            let now = Double(step) / 20
            if let due = tally.nextFlush, due <= Self.at(now), let count = tally.flush(now: Self.at(now)) { said.append((now, count)) }
            said += tally.record(Self.jump(UInt64(step + 1), ms: 300 + Int64(step % 7)), now: Self.at(now)).map { (now, $0) }
        }
        if let count = tally.flush(now: Self.at(70)) { said.append((70, count)) }
        #expect(said.count <= 8, "\(said.count) lines")
        #expect(said.map(\.count.count).reduce(0, +) == 1_200)
        #expect(said.last?.count.order == 1_200)
        for (earlier, later) in zip(said, said.dropFirst()) { #expect(later.at - earlier.at >= 10) }
    }

    @Test func theEventsFieldsAndSentence() throws {
        let once = WatchPartyEvent.relayTimeJump(.init(order: 57, aheadMilliseconds: 2_500, count: 1))
        #expect(once.name == "relay-time-jump")
        #expect(once.jsonLine == #"{"ahead_ms":2500,"count":1,"event":"relay-time-jump","order":57}"#)
        #expect(EventSentence.sentence(for: once)
            == "the relay's time jumped 2.5 s ahead of your clock (order 57): it cannot be trusted with this party's timing")
        let counted = WatchPartyEvent.relayTimeJump(.init(order: 80, aheadMilliseconds: 4_200, count: 4))
        #expect(EventSentence.sentence(for: counted) == "the relay's time jumped ahead of your clock 4 more times (up to 4.2 s, the last at order 80)")
        #expect(WatchPartyEvent(line: try #require(counted.jsonLine)) == counted)
    }
}
