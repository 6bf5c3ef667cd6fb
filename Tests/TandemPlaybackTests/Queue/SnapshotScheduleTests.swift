import Foundation
import Testing
import TandemClock
import TandemPlayback

/// The snapshot schedule: the lowest id publishes, every 1,000 records or 60 s, whichever first,
/// never in a quiet session, and it says when to ask again.
@Suite struct SnapshotScheduleTests {
    static func id(_ text: String) -> UUID { UUID(uuidString: text)! }
    static let low = id("00000000-0000-0000-0000-000000000001")
    static let middle = id("7FFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")
    static let high = id("80000000-0000-0000-0000-000000000000")
    static let last = id("FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFE")

    static let start = SessionInstant(nanoseconds: 5_000_000_000)
    static func after(_ seconds: Double) -> SessionInstant { start + .seconds(seconds) }

    @Test func theOrderIsByteWiseOnTheSixteenBytes() {
        #expect(SnapshotSchedule.precedes(Self.low, Self.middle))
        #expect(SnapshotSchedule.precedes(Self.middle, Self.high))
        #expect(SnapshotSchedule.precedes(Self.high, Self.last))
        #expect(!SnapshotSchedule.precedes(Self.last, Self.low))
        #expect(!SnapshotSchedule.precedes(Self.low, Self.low))
        // The last byte decides when the first fifteen agree.
        #expect(SnapshotSchedule.precedes(Self.id("12345678-9ABC-DEF0-1234-56789ABCDE00"), Self.id("12345678-9ABC-DEF0-1234-56789ABCDE01")))
        #expect(SnapshotSchedule.publisher(among: [Self.last, Self.high, Self.low, Self.middle]) == Self.low)
        #expect(SnapshotSchedule.publisher(among: [UUID]()) == nil)
    }

    @Test func onlyTheLowestPresentIdPublishes() {
        let schedule = SnapshotSchedule()
        let present = [Self.high, Self.middle, Self.last]
        let decisions = present.map {
            schedule.decision(localParticipant: $0, presentParticipants: present, recordsSinceSnapshot: 1_000,
                              lastSnapshotAt: Self.start, now: Self.after(1))
        }
        #expect(decisions == [.idle, .publish, .idle])
        // Once it leaves, the next lowest takes over; one who is not present never publishes.
        #expect(schedule.shouldPublish(localParticipant: Self.high, presentParticipants: [Self.high, Self.last],
                                       recordsSinceSnapshot: 1_000, lastSnapshotAt: Self.start, now: Self.after(1)))
        #expect(!schedule.shouldPublish(localParticipant: Self.low, presentParticipants: [Self.high, Self.last],
                                        recordsSinceSnapshot: 1_000, lastSnapshotAt: Self.start, now: Self.after(1)))
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let records: Int
        let seconds: Double
        let decision: SnapshotSchedule.Decision
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "a quiet session, long after", records: 0, seconds: 3_600, decision: .idle),
        Case(name: "one record, at once", records: 1, seconds: 0, decision: .wake(at: after(60))),
        Case(name: "999 records in 30 s", records: 999, seconds: 30, decision: .wake(at: after(60))),
        Case(name: "1,000 records in 30 s", records: 1_000, seconds: 30, decision: .publish),
        Case(name: "5,000 records at once", records: 5_000, seconds: 0, decision: .publish),
        Case(name: "one record, a nanosecond short of 60 s", records: 1, seconds: 59.999_999_999, decision: .wake(at: after(60))),
        Case(name: "one record, 60 s after", records: 1, seconds: 60, decision: .publish),
        Case(name: "a negative count", records: -3, seconds: 100, decision: .idle),
    ]

    @Test(arguments: cases)
    func aSnapshotIsDueAfterAThousandRecordsOrAMinuteWithAny(_ example: Case) {
        let schedule = SnapshotSchedule()
        let decision = schedule.decision(localParticipant: Self.low, presentParticipants: [Self.low, Self.high],
                                         recordsSinceSnapshot: example.records, lastSnapshotAt: Self.start, now: Self.after(example.seconds))
        #expect(decision == example.decision)
        #expect(schedule.shouldPublish(localParticipant: Self.low, presentParticipants: [Self.low, Self.high],
                                       recordsSinceSnapshot: example.records, lastSnapshotAt: Self.start,
                                       now: Self.after(example.seconds)) == (example.decision == .publish))
    }

    @Test func theIntervalsAreConfigurable() {
        let schedule = SnapshotSchedule(recordInterval: 10, timeInterval: .seconds(5))
        #expect(schedule.nextDue(recordsSinceSnapshot: 9, lastSnapshotAt: Self.start) == Self.after(5))
        #expect(schedule.nextDue(recordsSinceSnapshot: 10, lastSnapshotAt: Self.start) == Self.start)
        #expect(schedule.nextDue(recordsSinceSnapshot: 0, lastSnapshotAt: Self.start) == nil)
        #expect(SnapshotSchedule(recordInterval: 0).recordInterval == 1)
        #expect(SnapshotSchedule(timeInterval: .seconds(-1)).timeInterval == .zero)
        #expect(SnapshotSchedule().nextDue(recordsSinceSnapshot: 1, lastSnapshotAt: .distantFuture) == .distantFuture)
    }
}
