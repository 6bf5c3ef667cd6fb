import Foundation
import Testing
import TandemClock
import TandemPlayback

/// The pre-roll gate as a pure value on ordered session instants: when a play takes effect with
/// every report in, with some missing (the deadline), with reports that arrive late, for another
/// play, twice, or from someone not waited for, and when participants stop being waited for.
@Suite struct PrerollGateTests {
    static let ana = UUID()
    static let ben = UUID()
    static let cy = UUID()

    /// Session instant `milliseconds` ms.
    static func ms(_ milliseconds: Int64) -> SessionInstant { SessionInstant(nanoseconds: milliseconds * 1_000_000) }

    /// A play, version 7, ordered at 10 s and effective at 10.1 s, waiting for Ana, Ben and Cy.
    static func gate(expecting expected: [UUID] = [ana, ben, cy], waitLimit: TimeSpan = PrerollGate.defaultWaitLimit) -> PrerollGate {
        PrerollGate(version: 7, orderedAt: ms(10_000), effectiveAt: ms(10_100), expected: expected, waitLimit: waitLimit)
    }

    @Test func aPlayWithNobodyToWaitForStartsAtItsEffectiveInstant() {
        let gate = Self.gate(expecting: [])
        #expect(gate.isComplete)
        #expect(gate.startInstant == Self.ms(10_100))
        #expect(!gate.hasStarted(at: Self.ms(10_099)))
        #expect(gate.hasStarted(at: Self.ms(10_100)))
    }

    @Test func untilEveryoneReportsThePlayStartsAtTheDeadline() {
        var gate = Self.gate()
        #expect(gate.deadline == Self.ms(11_000))
        #expect(!gate.isComplete)
        #expect(gate.startInstant == Self.ms(11_000))
        expect(gate.reportPrerolled(Self.ana, version: 7, orderedAt: Self.ms(10_200), effectiveAt: Self.ms(10_250)), .waiting(for: [Self.ben, Self.cy]))
        expect(gate.reportPrerolled(Self.ben, version: 7, orderedAt: Self.ms(10_300), effectiveAt: Self.ms(10_350)), .waiting(for: [Self.cy]))
        #expect(gate.pending == [Self.cy])
        #expect(gate.startInstant == Self.ms(11_000))
        #expect(!gate.hasStarted(at: Self.ms(10_999)))
        #expect(gate.hasStarted(at: Self.ms(11_000)))
    }

    @Test func onceEveryoneReportedThePlayStartsAtTheLatestReportsEffectiveInstant() {
        var gate = Self.gate()
        gate.reportPrerolled(Self.ben, version: 7, orderedAt: Self.ms(10_300), effectiveAt: Self.ms(10_420))
        gate.reportPrerolled(Self.ana, version: 7, orderedAt: Self.ms(10_350), effectiveAt: Self.ms(10_400))
        expect(gate.reportPrerolled(Self.cy, version: 7, orderedAt: Self.ms(10_360), effectiveAt: Self.ms(10_410)), .complete(startAt: Self.ms(10_420)))
        #expect(gate.isComplete)
        #expect(gate.pending.isEmpty)
        #expect(gate.startInstant == Self.ms(10_420))
    }

    @Test func reportsEffectiveBeforeThePlayLeaveItAtItsEffectiveInstant() {
        var gate = Self.gate(expecting: [Self.ana])
        expect(gate.reportPrerolled(Self.ana, version: 7, orderedAt: Self.ms(10_010), effectiveAt: Self.ms(10_060)), .complete(startAt: Self.ms(10_100)))
    }

    @Test func aCompletingReportEffectivePastTheDeadlineStartsThePlayAtTheDeadline() {
        var gate = Self.gate(expecting: [Self.ana])
        expect(gate.reportPrerolled(Self.ana, version: 7, orderedAt: Self.ms(10_900), effectiveAt: Self.ms(11_400)), .complete(startAt: Self.ms(11_000)))
        #expect(gate.startInstant == gate.deadline)
    }

    @Test func aReportOrderedAtOrAfterTheStartChangesNothing() {
        var gate = Self.gate(expecting: [Self.ana, Self.ben])
        gate.reportPrerolled(Self.ana, version: 7, orderedAt: Self.ms(10_200), effectiveAt: Self.ms(10_250))
        let before = gate
        expect(gate.reportPrerolled(Self.ben, version: 7, orderedAt: Self.ms(11_000), effectiveAt: Self.ms(11_050)), .ignored(.late))
        expect(gate.stopWaiting(for: Self.ben, orderedAt: Self.ms(11_500), effectiveAt: Self.ms(11_550)), .ignored(.late))
        #expect(gate == before)
        #expect(gate.startInstant == Self.ms(11_000))
    }

    @Test func aCompleteGateIsNotMovedByWhatFollows() {
        var gate = Self.gate(expecting: [Self.ana])
        gate.reportPrerolled(Self.ana, version: 7, orderedAt: Self.ms(10_150), effectiveAt: Self.ms(10_200))
        expect(gate.reportPrerolled(Self.ana, version: 7, orderedAt: Self.ms(10_160), effectiveAt: Self.ms(10_900)), .ignored(.alreadyReported))
        expect(gate.reportPrerolled(Self.ben, version: 7, orderedAt: Self.ms(10_170), effectiveAt: Self.ms(10_950)), .ignored(.notExpected))
        expect(gate.reportPrerolled(Self.ana, version: 7, orderedAt: Self.ms(10_300), effectiveAt: Self.ms(10_350)), .ignored(.late))
        expect(gate.stopWaiting(for: Self.ana, orderedAt: Self.ms(10_180), effectiveAt: Self.ms(10_990)), .complete(startAt: Self.ms(10_200)))
        #expect(gate.startInstant == Self.ms(10_200))
    }

    @Test func reportsForAnotherPlayFromStrangersOrTwiceAreIgnored() {
        var gate = Self.gate(expecting: [Self.ana, Self.ben])
        expect(gate.reportPrerolled(Self.ana, version: 6, orderedAt: Self.ms(10_200), effectiveAt: Self.ms(10_250)), .ignored(.otherVersion))
        expect(gate.reportPrerolled(Self.ana, version: 8, orderedAt: Self.ms(10_200), effectiveAt: Self.ms(10_250)), .ignored(.otherVersion))
        expect(gate.reportPrerolled(Self.cy, version: 7, orderedAt: Self.ms(10_200), effectiveAt: Self.ms(10_250)), .ignored(.notExpected))
        #expect(gate.reports.isEmpty)
        gate.reportPrerolled(Self.ana, version: 7, orderedAt: Self.ms(10_200), effectiveAt: Self.ms(10_250))
        // The first report counts: a second, later one does not push the start back.
        expect(gate.reportPrerolled(Self.ana, version: 7, orderedAt: Self.ms(10_600), effectiveAt: Self.ms(10_800)), .ignored(.alreadyReported))
        expect(gate.reportPrerolled(Self.ben, version: 7, orderedAt: Self.ms(10_300), effectiveAt: Self.ms(10_350)), .complete(startAt: Self.ms(10_350)))
    }

    @Test func aParticipantWhoDepartsOrSuspendsIsNoLongerWaitedFor() {
        var gate = Self.gate()
        gate.reportPrerolled(Self.ana, version: 7, orderedAt: Self.ms(10_200), effectiveAt: Self.ms(10_250))
        gate.reportPrerolled(Self.ben, version: 7, orderedAt: Self.ms(10_210), effectiveAt: Self.ms(10_260))
        // Cy's suspension is ordered later than both reports: the group learns of it last.
        expect(gate.stopWaiting(for: Self.cy, orderedAt: Self.ms(10_400), effectiveAt: Self.ms(10_450)), .complete(startAt: Self.ms(10_450)))
        #expect(gate.expected == [Self.ana, Self.ben])
        expect(gate.stopWaiting(for: Self.cy, orderedAt: Self.ms(10_410), effectiveAt: Self.ms(10_460)), .ignored(.notExpected))
    }

    @Test func aReportedParticipantWhoStopsBeingWaitedForStillCounts() {
        var gate = Self.gate(expecting: [Self.ana, Self.ben])
        gate.reportPrerolled(Self.ana, version: 7, orderedAt: Self.ms(10_500), effectiveAt: Self.ms(10_600))
        expect(gate.stopWaiting(for: Self.ana, orderedAt: Self.ms(10_700), effectiveAt: Self.ms(10_950)), .waiting(for: [Self.ben]))
        expect(gate.stopWaiting(for: Self.ben, orderedAt: Self.ms(10_710), effectiveAt: Self.ms(10_760)), .complete(startAt: Self.ms(10_760)))
        #expect(gate.reports[Self.ana] == Self.ms(10_600))
    }

    @Test func theDeadlineIsNeverBeforeThePlaysEffectiveInstant() {
        let longLead = PrerollGate(version: 1, orderedAt: Self.ms(0), effectiveAt: Self.ms(1_500), expected: [Self.ana])
        #expect(longLead.deadline == Self.ms(1_500))
        #expect(longLead.startInstant == Self.ms(1_500))
        let negative = Self.gate(waitLimit: TimeSpan(nanoseconds: .min))
        #expect(negative.deadline == Self.ms(10_100))
        let short = Self.gate(waitLimit: .milliseconds(400))
        #expect(short.deadline == Self.ms(10_400))
        let extreme = PrerollGate(version: 1, orderedAt: .distantFuture - .milliseconds(1), effectiveAt: .distantFuture - .milliseconds(1),
                                  expected: [Self.ana])
        #expect(extreme.deadline == .distantFuture)
    }

    @Test func withoutAnOrderingInstantAReportIsJudgedByItsEffectiveOne() {
        var gate = Self.gate(expecting: [Self.ana, Self.ben])
        expect(gate.reportPrerolled(Self.ana, version: 7, effectiveAt: Self.ms(11_000)), .ignored(.late))
        expect(gate.reportPrerolled(Self.ana, version: 7, effectiveAt: Self.ms(10_500)), .waiting(for: [Self.ben]))
        expect(gate.stopWaiting(for: Self.ben, effectiveAt: Self.ms(10_600)), .complete(startAt: Self.ms(10_600)))
    }

    /// Every participant feeds its gate the same ordered records, whatever it was doing in
    /// between: the same start instant everywhere. A gate rebuilt from its encoding agrees too.
    @Test func everyParticipantFedTheSameRecordsGetsTheSameStart() throws {
        let records: [(UUID, Int64)] = [(Self.cy, 10_300), (Self.ana, 10_320), (Self.ana, 10_330), (Self.ben, 10_700)]
        var first = Self.gate()
        var second = Self.gate()
        for (participant, ordered) in records {
            let one = first.reportPrerolled(participant, version: 7, orderedAt: Self.ms(ordered), effectiveAt: Self.ms(ordered + 50))
            let other = second.reportPrerolled(participant, version: 7, orderedAt: Self.ms(ordered), effectiveAt: Self.ms(ordered + 50))
            #expect(one == other)
            let decoded = try JSONDecoder().decode(PrerollGate.self, from: JSONEncoder().encode(first))
            #expect(decoded == first)
        }
        #expect(first.startInstant == Self.ms(10_750))
        #expect(second.startInstant == first.startInstant)
    }
}

/// Expects `update`, which a mutating call on the gate returned (`#expect` cannot make the call
/// itself), to be `expected`.
private func expect(_ update: PrerollGate.Update, _ expected: PrerollGate.Update, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(update == expected, sourceLocation: sourceLocation)
}
