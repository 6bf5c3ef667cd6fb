import Foundation
import Tandem
import TandemClock
import TandemParty
import Testing

/// The party reports bodies dropped on arrival as counts per sender, path and reason over a
/// second, on virtual time: a flood costs a line a second for each kind, and a lone rejection
/// still shows at once.
@Suite struct RejectionTallyTests {
    static let mallory = UUID(uuidString: "00000000-0000-0000-0000-00000000000F")!
    static let oscar = UUID(uuidString: "00000000-0000-0000-0000-00000000000E")!

    static func at(_ milliseconds: Int64) -> LocalInstant { LocalInstant(nanoseconds: milliseconds * 1_000_000) }
    static func replay(from sender: UUID = mallory) -> Rejection { Rejection(reason: .replayed, sender: sender, path: "ordered") }

    @Test func aFloodIsReportedOnceASecondForEachKind() {
        var tally = RejectionTally()
        var reported: [RejectionTally.Count] = []
        // 100 a second for 3.5 s from mallory, with a malformed one from oscar at 1.2 s.
        for tick in Int64(0)..<350 {
            let now = Self.at(tick * 10)
            reported += tally.flush(now: now)
            reported += tally.record(Self.replay(), now: now)
            if tick == 120 { reported += tally.record(Rejection(reason: .malformed, sender: Self.oscar, path: "ordered"), now: now) }
        }
        reported += tally.flush(now: Self.at(10_000))
        reported += tally.flush(now: Self.at(20_000))
        let mallorys = reported.filter { $0.kind.sender == Self.mallory }.map(\.count)
        #expect(mallorys.first == 1, "the first at once")
        #expect(mallorys.count == 5, "then one count a second: \(mallorys)")
        #expect(mallorys.reduce(0, +) == 350, "every rejection counted once")
        #expect(reported.filter { $0.kind.sender == Self.oscar }.map(\.count) == [1])
        #expect(reported.allSatisfy { $0.kind.path == "ordered" })
        #expect(tally.nextFlush == nil, "a second with nothing closes the kind")
    }

    @Test func aLoneRejectionShowsAtOnceAndAfterAQuietSecondAgain() {
        var tally = RejectionTally()
        #expect(tally.record(Self.replay(), now: Self.at(0)).map(\.count) == [1])
        #expect(tally.nextFlush == Self.at(1_000))
        #expect(tally.flush(now: Self.at(999)).isEmpty)
        #expect(tally.flush(now: Self.at(1_000)).isEmpty)
        #expect(tally.nextFlush == nil)
        #expect(tally.record(Self.replay(), now: Self.at(5_000)).map(\.count) == [1])
        // Within the second: counted, reported when it ends.
        #expect(tally.record(Self.replay(), now: Self.at(5_100)).isEmpty)
        #expect(tally.record(Self.replay(), now: Self.at(5_200)).isEmpty)
        #expect(tally.record(Rejection(reason: .badSignature, sender: Self.mallory, path: "ordered"), now: Self.at(5_300)).map(\.count) == [1])
        let counts = tally.flush(now: Self.at(6_000))
        #expect(counts.map(\.count) == [2])
        #expect(counts.first?.kind.reason == .replayed)
    }

    @Test func theRejectedEventCarriesItsCount() throws {
        let event = WatchPartyEvent.bodyRejected(.init(reason: "replayed", sender: Self.mallory.uuidString, path: "ordered", count: 97))
        let line = try #require(event.jsonLine)
        #expect(line.contains("\"count\":97"))
        #expect(WatchPartyEvent(line: line) == event)
    }
}
