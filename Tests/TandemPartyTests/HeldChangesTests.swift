import Testing
import TandemClock
@testable import TandemParty

/// Changes made while the relay is away, on virtual time: sent on its return if made within
/// 2 s, refused otherwise, at its return or as soon as they are 2 s old; none dropped.
@Suite struct HeldChangesTests {
    static func at(_ milliseconds: Int64) -> LocalInstant { LocalInstant(nanoseconds: milliseconds * 1_000_000) }

    @Test func freshChangesGoOutInOrderAndStaleOnesAreRefused() {
        var held = HeldChanges()
        #expect(held.nextExpiry == nil)
        let old = held.hold(at: Self.at(0))
        let pause = held.hold(at: Self.at(1_500))
        let seek = held.hold(at: Self.at(1_900))
        #expect(held.nextExpiry == Self.at(2_000))
        let (send, refuse) = held.relayReturned(at: Self.at(3_000))
        #expect(send == [pause, seek])
        #expect(refuse == [old])
        #expect(held.isEmpty && held.nextExpiry == nil)
    }

    @Test func aChangeIsRefusedOnceTwoSecondsOldWhileTheRelayIsStillAway() {
        var held = HeldChanges()
        let first = held.hold(at: Self.at(0))
        let second = held.hold(at: Self.at(1_000))
        #expect(held.expire(at: Self.at(2_000)).isEmpty, "exactly 2 s is still fresh")
        #expect(held.expire(at: Self.at(2_001)) == [first])
        #expect(held.nextExpiry == Self.at(3_000))
        #expect(held.expire(at: Self.at(3_001)) == [second])
        #expect(held.relayReturned(at: Self.at(3_100)) == ([], []))
    }
}
