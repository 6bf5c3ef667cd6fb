import Testing
import TandemClock
import TandemMpv

/// The pure core of "no echo": which reported changes are Tandem's own, and which a person's.
@Suite struct MpvRequestLedgerTests {
    let ms: Int64 = 1_000_000

    @Test func aRequestedChangeIsOursAndAnUnrequestedOneIsAPersons() {
        var ledger = MpvRequestLedger(paused: true, speed: 1)
        ledger.requestPause(false, at: HostInstant(nanoseconds: 100 * ms))
        #expect(ledger.observe(.pause(false), at: HostInstant(nanoseconds: 101 * ms)) == nil)
        // Nobody asked for this pause.
        #expect(ledger.observe(.pause(true), at: HostInstant(nanoseconds: 900 * ms)) == .setPaused(true))
        #expect(ledger.paused)
    }

    @Test func aReportThatArrivedBeforeTheRequestWasSentIsNotItsEcho() {
        var ledger = MpvRequestLedger(paused: false, speed: 1)
        ledger.requestPause(true, at: HostInstant(nanoseconds: 500 * ms))
        #expect(ledger.observe(.pause(true), at: HostInstant(nanoseconds: 499 * ms)) == .setPaused(true))
    }

    @Test func requestsExpireAfterTheWindow() {
        var ledger = MpvRequestLedger(paused: false, speed: 1)
        // mpv never reported this one (it coalesced it away, say): a much later change is a person's.
        ledger.requestPause(true, at: HostInstant(nanoseconds: 0))
        #expect(ledger.observe(.pause(true), at: HostInstant(nanoseconds: ledger.window + 1 * ms)) == .setPaused(true))
    }

    @Test func correctionNudgesNeverBecomeSpeedChanges() {
        var ledger = MpvRequestLedger(paused: false, speed: 1)
        var time: Int64 = 0
        for speed in [1.03, 1.012346, 0.98, 1.0] {
            time += 250 * ms
            ledger.requestSpeed((speed * 10_000).rounded() / 10_000, at: HostInstant(nanoseconds: time))
            // mpv prints six decimals.
            #expect(ledger.observe(.speed((speed * 1e6).rounded() / 1e6), at: HostInstant(nanoseconds: time + 1 * ms)) == nil)
        }
        #expect(ledger.observe(.speed(1.1), at: HostInstant(nanoseconds: time + 100 * ms)) == .setSpeed(1.1))
    }

    @Test func coalescedSeeksAreAllOurs() {
        var ledger = MpvRequestLedger(paused: true, speed: 1)
        ledger.requestSeek(to: ItemTime(nanoseconds: 6_000 * ms), at: HostInstant(nanoseconds: 10 * ms))
        ledger.requestSeek(to: ItemTime(nanoseconds: 7_000 * ms), at: HostInstant(nanoseconds: 11 * ms))
        // mpv ran both as one seek, to the second target.
        #expect(ledger.observe(.seekLanded(at: 7_000 * ms), at: HostInstant(nanoseconds: 40 * ms)) == nil)
        #expect(!ledger.hasPendingSeek(at: HostInstant(nanoseconds: 41 * ms)))
        // The next landing nobody asked for is a person's.
        #expect(ledger.observe(.seekLanded(at: 3_000 * ms), at: HostInstant(nanoseconds: 900 * ms)) == .seek(to: 3_000 * ms))
    }

    @Test func aSeekFarFromEveryTargetIsAPersonsEvenWhileOneOfOursIsPending() {
        var ledger = MpvRequestLedger(paused: false, speed: 1)
        ledger.requestSeek(to: ItemTime(nanoseconds: 10_000 * ms), at: HostInstant(nanoseconds: 0))
        #expect(ledger.observe(.seekLanded(at: 2_000 * ms), at: HostInstant(nanoseconds: 30 * ms)) == .seek(to: 2_000 * ms))
        #expect(ledger.observe(.seekLanded(at: 10_010 * ms), at: HostInstant(nanoseconds: 60 * ms)) == nil)
    }

    @Test func theEndOfTheFilePausesWithoutAnyoneAsking() {
        var ledger = MpvRequestLedger(paused: false, speed: 1)
        #expect(ledger.observe(.endReached(true), at: HostInstant(nanoseconds: 10 * ms)) == nil)
        #expect(ledger.observe(.pause(true), at: HostInstant(nanoseconds: 20 * ms)) == nil)
        #expect(ledger.observe(.endReached(false), at: HostInstant(nanoseconds: 30 * ms)) == nil)
        #expect(ledger.observe(.pause(false), at: HostInstant(nanoseconds: 40 * ms)) == .setPaused(false))
    }

    @Test func aReportOfTheStateMpvIsAlreadyInChangesNothing() {
        var ledger = MpvRequestLedger(paused: true, speed: 1.25)
        #expect(ledger.observe(.pause(true), at: HostInstant(nanoseconds: 0)) == nil)
        #expect(ledger.observe(.speed(1.25), at: HostInstant(nanoseconds: 0)) == nil)
    }
}
