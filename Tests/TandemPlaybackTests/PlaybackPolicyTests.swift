import Foundation
import Testing
@testable import Tandem
import TandemClock
@testable import TandemPlayback

/// Who may change playback, applied by the coordinator to every ordered proposal with the roles
/// as they stood before its order: every combination of role, policy and change is accepted or
/// refused alike by two live participants and by a late joiner that folds the whole history's
/// role records before it applies a single proposal.
@Suite struct PlaybackPolicyTests {
    static let host = UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!
    static let guest = UUID(uuidString: "00000000-0000-0000-0000-00000000000B")!
    static let second: Int64 = 1_000_000_000

    /// A change a participant may propose, and whether it is playback control.
    struct Change: Sendable, CustomTestStringConvertible {
        var name: String
        var proposal: PlaybackProposal
        var isControl: Bool
        var testDescription: String { name }
    }

    static let changes: [Change] = [
        Change(name: "play", proposal: .setRate(1), isControl: true),
        Change(name: "play now", proposal: .setRateImmediately(1), isControl: true),
        Change(name: "pause", proposal: .pause(at: nil), isControl: true),
        Change(name: "rate", proposal: .setRate(1.5), isControl: true),
        Change(name: "seek", proposal: .seek(to: ItemTime(nanoseconds: 3 * second)), isControl: true),
        Change(name: "seek now", proposal: .seekImmediately(to: ItemTime(nanoseconds: 3 * second)), isControl: true),
        Change(name: "item", proposal: .transition(item: "other", at: .zero), isControl: true),
        Change(name: "queue", proposal: .queue(.append(PlaybackQueue.Entry(identifier: "next"))), isControl: true),
        Change(name: "pause snapping", proposal: .pauseSnapping(false), isControl: true),
        Change(name: "state", proposal: .state(item: "film", identity: nil, ready: true), isControl: false),
        Change(name: "suspension", proposal: .beginSuspension(id: UUID(), reason: .stallRecovery, triggersWaiting: true, waitingLimit: nil),
               isControl: false),
        Change(name: "departure", proposal: .departed(UUID()), isControl: false),
    ]

    /// One combination: the policy, who proposes, and the change.
    struct Combination: Sendable, CustomTestStringConvertible {
        var policy: SessionPolicy.Control
        var byOperator: Bool
        var change: Change
        var refused: Bool { change.isControl && policy == .operators && !byOperator }
        var testDescription: String { "\(change.name) by \(byOperator ? "the operator" : "a guest") under \(policy)" }
    }

    static let combinations: [Combination] = SessionPolicy.Control.allCases.flatMap { policy in
        [true, false].flatMap { byOperator in changes.map { Combination(policy: policy, byOperator: byOperator, change: $0) } }
    }

    /// A role record or a proposal, in the order.
    enum Record {
        case role(RoleChange, by: UUID, order: UInt64)
        case proposal(OrderedProposal)
    }

    /// A participant: the session's book and the coordinator's core, with what the core said.
    struct Member {
        var book = RoleBook(creator: PlaybackPolicyTests.host)
        var core = CoordinationCore()
        var events: [CoordinationCore.Event] = []

        mutating func apply(_ proposal: OrderedProposal) {
            switch OrderedInput.proposal(proposal).permitted(by: book.roles(before: proposal.order)) {
            case .proposal(let permitted): events += core.apply(permitted)
            case .unreadable(let originator, let order, let rejection): events += core.skip(order: order, originator: originator, rejection: rejection)
            default: Issue.record("a proposal became something else")
            }
        }

        mutating func fold(_ change: RoleChange, by sender: UUID, order: UInt64) {
            _ = book.apply(change, by: sender, order: order)
            _ = core.skip(order: order, originator: sender, rejection: ProposalRejection(.unreadable, "a role record"))
        }
    }

    static func history(_ combination: Combination) -> [Record] {
        let at = { (seconds: Int64) in SessionInstant(nanoseconds: seconds * second) }
        let sender = combination.byOperator ? host : guest
        return [
            .proposal(OrderedProposal(originator: host, order: 1, effectiveAt: at(1), proposal: .transition(item: "film", at: .zero))),
            .role(.policy(SessionPolicy(playback: combination.policy)), by: host, order: 2),
            .proposal(OrderedProposal(originator: sender, order: 3, effectiveAt: at(2), proposal: combination.change.proposal)),
            // After it, the policy changes: a late joiner must not judge the proposal by it.
            .role(.policy(SessionPolicy(playback: combination.policy == .operators ? .everyone : .operators)), by: host, order: 4),
            .role(.grant(guest), by: host, order: 5),
        ]
    }

    @Test(arguments: combinations)
    func everyParticipantAcceptsOrRefusesTheSameChange(_ combination: Combination) {
        let records = Self.history(combination)
        // Two live participants take each record as it comes.
        var live = [Member(), Member()]
        for index in live.indices {
            for record in records {
                switch record {
                case .role(let change, let by, let order): live[index].fold(change, by: by, order: order)
                case .proposal(let proposal): live[index].apply(proposal)
                }
            }
        }
        // A late joiner's session folds every role record of the history before its coordinator
        // applies anything.
        var late = Member()
        for case .role(let change, let by, let order) in records { _ = late.book.apply(change, by: by, order: order) }
        for record in records {
            switch record {
            case .role(_, let by, let order): _ = late.core.skip(order: order, originator: by, rejection: ProposalRejection(.unreadable, "a role record"))
            case .proposal(let proposal): late.apply(proposal)
            }
        }
        for member in [live[1], late] {
            #expect(member.core == live[0].core)
            #expect(member.events == live[0].events)
        }
        let rejected = live[0].events.contains {
            if case .proposalRejected(let rejection, _, 3) = $0 { rejection.reason == .notPermitted } else { false }
        }
        #expect(rejected == combination.refused)
    }

    @Test func aRefusalSaysWhoMayAndASuspensionsEndLosesOnlyItsTime() throws {
        let roles = SessionRoles(operators: [Self.host], policy: SessionPolicy(playback: .operators))
        let pause = PlaybackProposal.pause(at: nil).policyRejection(from: Self.guest, under: roles, operatorNames: ["ana"])
        #expect(pause?.reason == .notPermitted)
        #expect(pause?.detail == "only operators may pause (ana is an operator)")
        #expect(PlaybackProposal.setRate(1).policyRejection(from: Self.guest, under: roles, operatorNames: ["ana", "ben"])?.detail
                == "only operators may play (the operators are ana, ben)")
        #expect(PlaybackProposal.pause(at: nil).policyRejection(from: Self.host, under: roles) == nil)
        // A guest's suspension ends where the group is, without moving it.
        let id = UUID()
        let scrub = OrderedProposal(originator: Self.guest, order: 9, effectiveAt: SessionInstant(nanoseconds: Self.second),
                                    proposal: .endSuspension(id: id, proposedTime: ItemTime(nanoseconds: 40 * Self.second), item: nil))
        guard case .proposal(let ended) = OrderedInput.proposal(scrub).permitted(by: roles) else {
            Issue.record("a suspension's end was refused")
            return
        }
        #expect(ended.proposal == .endSuspension(id: id, proposedTime: nil, item: nil))
        guard case .proposal(let hostScrub) = OrderedInput.proposal(OrderedProposal(originator: Self.host, order: 9, effectiveAt: scrub.effectiveAt,
                                                                                        proposal: scrub.proposal)).permitted(by: roles) else {
            Issue.record("an operator's suspension's end was refused")
            return
        }
        #expect(hostScrub.proposal == scrub.proposal)
    }
}
