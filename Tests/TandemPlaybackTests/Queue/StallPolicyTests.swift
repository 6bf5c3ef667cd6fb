import Foundation
import Testing
import TandemClock
import TandemPlayback

/// The stall policy on ordered session instants: three stalls a minute hold the group, the
/// fourth does not, the window slides, participants are counted apart, and memory stays bounded.
@Suite struct StallPolicyTests {
    static let ana = UUID()
    static let ben = UUID()

    /// Session instant `seconds` s.
    static func at(_ seconds: Double) -> SessionInstant { .zero + .seconds(seconds) }

    @Test func threeStallsAMinuteHoldTheGroupAndTheFourthDoesNot() {
        var policy = StallPolicy()
        #expect(policy.holdsGroup(for: Self.ana, at: Self.at(0)))
        #expect(record(&policy, Self.ana, at: 0))
        #expect(record(&policy, Self.ana, at: 10))
        #expect(record(&policy, Self.ana, at: 20))
        #expect(policy.recentStalls(of: Self.ana, at: Self.at(20)) == 3)
        #expect(!policy.holdsGroup(for: Self.ana, at: Self.at(30)))
        #expect(!record(&policy, Self.ana, at: 30))
        #expect(!record(&policy, Self.ana, at: 40))
    }

    @Test func theWindowSlidesAndStallsThatDidNotHoldStillCount() {
        var policy = StallPolicy()
        for seconds in [0.0, 10, 20, 30] { record(&policy, Self.ana, at: seconds) }
        // At 61 s the stalls of 10, 20 and 30 s are within the minute.
        #expect(!policy.holdsGroup(for: Self.ana, at: Self.at(61)))
        // At 70 s the one of 10 s is exactly a minute old: out.
        #expect(policy.holdsGroup(for: Self.ana, at: Self.at(70)))
        #expect(!policy.holdsGroup(for: Self.ana, at: Self.at(69.999)))
        #expect(record(&policy, Self.ana, at: 70))
        #expect(!record(&policy, Self.ana, at: 75))
    }

    @Test func participantsAreCountedApart() {
        var policy = StallPolicy()
        for seconds in [0.0, 1, 2, 3] { record(&policy, Self.ana, at: seconds) }
        #expect(!policy.holdsGroup(for: Self.ana, at: Self.at(4)))
        #expect(policy.holdsGroup(for: Self.ben, at: Self.at(4)))
        #expect(record(&policy, Self.ben, at: 4))
        policy.forget(Self.ana)
        #expect(policy.holdsGroup(for: Self.ana, at: Self.at(5)))
        #expect(policy.stalls[Self.ana] == nil)
    }

    @Test func theLimitAndTheWindowAreConfigurable() {
        var once = StallPolicy(limit: 1, window: .seconds(10))
        #expect(record(&once, Self.ana, at: 0))
        #expect(!record(&once, Self.ana, at: 9.9))
        #expect(record(&once, Self.ana, at: 20))

        var never = StallPolicy(limit: 0)
        #expect(!record(&never, Self.ana, at: 0))
        #expect(never.stalls.isEmpty)
        #expect(StallPolicy(limit: -5).limit == 0)
        #expect(StallPolicy(window: TimeSpan(nanoseconds: -1)).window == .zero)
    }

    @Test func whatItKeepsIsBounded() {
        var policy = StallPolicy()
        for step in 0..<10_000 { record(&policy, Self.ana, at: Double(step) * 0.01) }
        #expect(policy.stalls[Self.ana]?.count == StallPolicy.defaultLimit)
        for index in 0..<500 { record(&policy, UUID(), at: 100 + Double(index) * 0.1) }
        #expect(policy.stalls.count == 501)
        policy.forget(before: Self.at(150))
        #expect(policy.stalls.count == 501)
        // Only those who stalled after 105.05 s (the window ending at 165.05 s) remain: Ana's
        // stalls ended at 99.99 s, and the others' of 100 to 105 s are gone.
        policy.forget(before: Self.at(165.05))
        #expect(policy.stalls.count == 449)
        #expect(policy.stalls[Self.ana] == nil)
        policy.forget(before: Self.at(1_000))
        #expect(policy.stalls.isEmpty)
    }

    @Test func anInstantOutOfOrderIsPlacedWhereItBelongs() {
        var policy = StallPolicy()
        record(&policy, Self.ana, at: 30)
        record(&policy, Self.ana, at: 10)
        #expect(policy.stalls[Self.ana] == [Self.at(10), Self.at(30)])
        #expect(policy.recentStalls(of: Self.ana, at: Self.at(20)) == 1)
        #expect(policy.recentStalls(of: Self.ana, at: Self.at(30)) == 2)
    }

    @Test func extremeInstantsSaturate() {
        var policy = StallPolicy()
        #expect(record(&policy, Self.ana, atInstant: .distantPast))
        #expect(record(&policy, Self.ana, atInstant: .distantFuture))
        // A minute before the end of time is long after its start: one stall within the window.
        #expect(policy.recentStalls(of: Self.ana, at: .distantFuture) == 1)
        #expect(policy.holdsGroup(for: Self.ana, at: .distantFuture))
    }

    /// The same stalls give the same decisions everywhere, and the policy survives encoding (it
    /// travels in snapshots).
    @Test func theSameStallsGiveTheSameDecisions() throws {
        var random = QueueTestRandom(seed: 3)
        var first = StallPolicy()
        var second = StallPolicy()
        var now = 0.0
        let people = [Self.ana, Self.ben, UUID()]
        for _ in 0..<300 {
            now += Double(random.next() % 30_000) / 1_000
            let who = people[Int(random.next() % 3)]
            #expect(record(&first, who, at: now) == record(&second, who, at: now))
        }
        #expect(first == second)
        #expect(try JSONDecoder().decode(StallPolicy.self, from: JSONEncoder().encode(first)) == first)
    }
}

/// Records `participant`'s stall at `seconds` and returns whether it holds the group (`#expect`
/// cannot call a mutating method itself).
@discardableResult
private func record(_ policy: inout StallPolicy, _ participant: UUID, at seconds: Double) -> Bool {
    policy.recordStall(of: participant, at: StallPolicyTests.at(seconds))
}

/// Records `participant`'s stall at `instant` and returns whether it holds the group.
@discardableResult
private func record(_ policy: inout StallPolicy, _ participant: UUID, atInstant instant: SessionInstant) -> Bool {
    policy.recordStall(of: participant, at: instant)
}
