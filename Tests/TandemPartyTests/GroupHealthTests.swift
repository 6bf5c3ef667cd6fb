import Foundation
import Testing
import TandemClock
@testable import TandemParty

/// The `h` key's lines (`GroupHealth`): this participant first with its distance from the group
/// and its clock's error bound, then the others by name, each with what is known of it here.
@Suite struct GroupHealthTests {
    @Test func oneLinePerParticipantYouFirst() {
        let health = GroupHealth(members: [
            .init(name: "Cy", suspensions: [.init(reason: "stallRecovery", holdsGroup: true)]),
            .init(name: "Ana", isLocal: true),
            .init(name: "Ben"),
            .init(name: "Dee", isAway: true, isPrerolling: true),
            .init(name: "Eve", isMismatched: true, hasReported: true),
            .init(name: "Fay", hasReported: false),
        ], isPlaying: true, syncError: .microseconds(-420), clockErrorBound: .microseconds(210))
        #expect(health.lines == [
            "you (Ana): 0.4 ms behind the group, clock ±0.21 ms",
            "Ben: playing with the group",
            "Cy: catching up (the group waits)",
            "Dee: away: its connection dropped, getting ready to play",
            "Eve: plays a different file",
            "Fay: has not said what it plays yet",
        ])
    }

    /// This participant's line says whether its chain over the session's order is vouched for,
    /// and the line of anyone the relay showed another history says so.
    @Test func theChainsStandingIsShown() {
        let members: [GroupHealth.Member] = [.init(name: "Ana", isLocal: true), .init(name: "Ben", hasDiverged: true), .init(name: "Cy")]
        let line = { (chain: GroupHealth.Chain?) in
            GroupHealth(members: members, isPlaying: false, syncError: nil, clockErrorBound: .microseconds(210), chain: chain).lines
        }
        #expect(line(nil) == [
            "you (Ana): paused with the group, clock ±0.21 ms",
            "Ben: the relay showed it different changes than you",
            "Cy: with the group",
        ])
        #expect(line(.init(startOrder: 0, isVouched: true)).first == "you (Ana): paused with the group, clock ±0.21 ms, history checked from the start")
        #expect(line(.init(startOrder: 40, isVouched: true)).first == "you (Ana): paused with the group, clock ±0.21 ms, history vouched for by others")
        #expect(line(.init(startOrder: 40, isVouched: false)).first
            == "you (Ana): paused with the group, clock ±0.21 ms, history from one participant's snapshot (order 40), not vouched for yet")
    }

    @Test func whatIsNotMeasuredIsSaidSo() {
        let paused = GroupHealth(members: [.init(name: "Ana", isLocal: true), .init(name: "Ben")], isPlaying: false, syncError: nil,
                                 clockErrorBound: nil)
        #expect(paused.lines == ["you (Ana): paused with the group, clock not synchronised yet", "Ben: with the group"])
        let early = GroupHealth(members: [.init(name: "Ana", isLocal: true, suspensions: [.init(reason: "custom", holdsGroup: false)])],
                                isPlaying: true, syncError: nil, clockErrorBound: .milliseconds(3))
        #expect(early.lines == ["you (Ana): distance from the group not measured yet, clock ±3.00 ms, custom"])
        let ahead = GroupHealth(members: [.init(name: "Ana", isLocal: true)], isPlaying: true, syncError: .microseconds(1_250),
                                clockErrorBound: .microseconds(50))
        #expect(ahead.lines == ["you (Ana): 1.2 ms ahead of the group, clock ±0.05 ms"])
    }
}
