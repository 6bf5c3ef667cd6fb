import Foundation
import Testing
@testable import Tandem
import TandemClock
import TandemNet
import TandemWire

/// The roles' pure rules and the session machine that applies them: who may change what, the
/// same accepted and refused on every participant and on a late joiner replaying the history,
/// and the handover when the last operator leaves.
@Suite struct SessionRolesTests {
    let ana = UUID()
    let ben = UUID()
    let cy = UUID()

    /// A change, whether its sender is an operator, and whether the book accepts it.
    struct Case: Sendable, CustomTestStringConvertible {
        var change: RoleChange
        var byOperator: Bool
        var accepted: Bool
        var testDescription: String { "\(change) by \(byOperator ? "an operator" : "a guest") → \(accepted ? "accepted" : "refused")" }
    }

    static let target = UUID(uuidString: "00000000-0000-0000-0000-0000000000C0")!

    static let cases: [Case] = [
        Case(change: .grant(target), byOperator: true, accepted: true),
        Case(change: .grant(target), byOperator: false, accepted: false),
        Case(change: .revoke(target), byOperator: false, accepted: false),
        Case(change: .policy(SessionPolicy(playback: .operators)), byOperator: true, accepted: true),
        Case(change: .policy(SessionPolicy(playback: .operators)), byOperator: false, accepted: false),
        Case(change: .claim(departed: []), byOperator: false, accepted: false),
        Case(change: .reinstate, byOperator: false, accepted: false),
        Case(change: .reinstate, byOperator: true, accepted: false),
    ]

    @Test(arguments: cases)
    func everyChangeIsAcceptedOrRefusedByTheSendersRole(_ testCase: Case) {
        // The creator is `ana`; a guest is `ben`.
        var book = RoleBook(creator: ana)
        let sender = testCase.byOperator ? ana : ben
        let event = book.apply(testCase.change, by: sender, order: 1)
        #expect((event?.refusal == nil) == testCase.accepted)
        // The check before sending is the same rule.
        #expect((RoleBook(creator: ana).refusal(of: testCase.change, by: sender) == nil) == testCase.accepted)
        if !testCase.accepted {
            #expect(book.current == RoleBook(creator: ana).current)
            #expect(event?.refusal?.isEmpty == false)
        }
    }

    @Test func operatorsGrantAndRevokeButTheLastKeepsTheRole() {
        var book = RoleBook(creator: ana)
        #expect(book.current.operators == [ana])
        #expect(book.apply(.revoke(ana), by: ana, order: 1)?.refusal != nil)
        #expect(book.apply(.grant(ben), by: ana, order: 2)?.refusal == nil)
        #expect(book.apply(.grant(ben), by: ana, order: 3)?.refusal == "already an operator")
        // A new operator may take the creator's role.
        #expect(book.apply(.revoke(ana), by: ben, order: 4)?.refusal == nil)
        #expect(book.current.operators == [ben])
        #expect(book.apply(.grant(cy), by: ana, order: 5)?.refusal == "only operators may make others operators")
        // A repeated order is no change at all.
        #expect(book.apply(.grant(cy), by: ben, order: 5) == nil)
        #expect(!book.current.isOperator(cy))
    }

    @Test func theRolesBeforeAnOrderIgnoreEveryLaterRecord() {
        var book = RoleBook(creator: ana)
        _ = book.apply(.policy(SessionPolicy(playback: .operators)), by: ana, order: 3)
        _ = book.apply(.grant(ben), by: ana, order: 7)
        book.pass(order: 8)
        _ = book.apply(.policy(SessionPolicy(playback: .everyone)), by: ben, order: 9)
        #expect(book.roles(before: 3).policy.playback == .everyone)
        #expect(book.roles(before: 4).policy.playback == .operators)
        #expect(!book.roles(before: 7).mayChangePlayback(ben))
        #expect(book.roles(before: 8).mayChangePlayback(ben))
        #expect(!book.roles(before: 9).mayChangePlayback(cy))
        #expect(book.roles(before: 10).mayChangePlayback(cy))
    }

    @Test func aClaimTakesTheRoleOnlyWhenItNamesEveryOperatorAndTheFirstWins() {
        var book = RoleBook(creator: ana)
        _ = book.apply(.grant(ben), by: ana, order: 1)
        #expect(book.apply(.claim(departed: [ana]), by: cy, order: 2)?.refusal == "an operator is still present")
        #expect(book.apply(.claim(departed: [ana, ben]), by: cy, order: 3)?.refusal == nil)
        #expect(book.current.operators == [cy])
        // A second heir's claim, ordered later, names the operators that were: refused.
        let dan = UUID()
        #expect(book.apply(.claim(departed: [ana, ben]), by: dan, order: 4)?.refusal == "an operator is still present")
        #expect(book.current.operators == [cy])
    }

    @Test func aParticipantAFalseClaimNamedTakesItsRoleBackFromTheClaimant() {
        var book = RoleBook(creator: ana)
        _ = book.apply(.claim(departed: [ana]), by: ben, order: 1)
        #expect(book.current.operators == [ben])
        // A grant by the claimant does not shut its victim out.
        _ = book.apply(.grant(cy), by: ben, order: 2)
        #expect(book.apply(.reinstate, by: cy, order: 3)?.refusal != nil)
        #expect(book.apply(.reinstate, by: ana, order: 4)?.refusal == nil)
        #expect(book.current.operators == [ana, cy])
        #expect(book.apply(.reinstate, by: ana, order: 5)?.refusal != nil)
    }

    @Test func aRecordRoundTripsAndAnythingElseIsNoRecord() {
        let changes: [RoleChange] = [.grant(ana), .revoke(ben), .policy(SessionPolicy(playback: .operators, ending: .operators)),
                                     .claim(departed: [ana, ben]), .reinstate]
        for change in changes { #expect(RoleRecord.decode(RoleRecord.encode(change)) == change) }
        #expect(RoleRecord.decode([0x00, 0x52]) == nil)
        #expect(RoleRecord.decode([0x00, 0x52, 9]) == nil)
        #expect(RoleRecord.decode([0x00, 0x52, 3, 0, 2]) == nil)
        #expect(RoleRecord.decode(RoleRecord.encode(.reinstate) + [0]) == nil)
        #expect(RoleRecord.decode([0x00, 0x52, 4, UInt8(RoleBook.maximumOperators + 1)] + Array(repeating: 0, count: 16 * 65)) == nil)
        #expect(RoleRecord.decode(Array(repeating: 0x52, count: RoleRecord.maximumBytes + 1)) == nil)
        #expect(!RoleRecord.isRoleRecord(Array("{\"pause\":{}}".utf8)))
    }

    @Test func twoParticipantsAndALateJoinerAcceptAndRefuseTheSameChanges() throws {
        var group = RoleTestGroup()
        let (host, ana, ben) = (group.member(), group.member(), group.member())
        var hostMachine = try group.joined(host, "host", creator: host, others: [])
        var anaMachine = try group.joined(ana, "ana", creator: host, others: [(host, "host")])
        let records = [
            group.role(.grant(ben.localID), by: ana),                                 // refused: ana is no operator
            group.role(.policy(SessionPolicy(playback: .operators)), by: host),       // accepted
            group.role(.grant(ana.localID), by: host),                                // accepted
            group.role(.grant(ana.localID), by: host),                                // refused: already one
            group.role(.revoke(host.localID), by: ana),                               // accepted
            group.role(.policy(SessionPolicy()), by: host),                           // refused: no longer one
            group.role(.grant(ben.localID), by: ana, retention: .playback),           // refused by the session: not kept
        ]
        var hostEvents: [SessionRoleEvent] = []
        var anaEvents: [SessionRoleEvent] = []
        for record in records {
            hostEvents += roleEvents(hostMachine.onRelayEvent(.ordered(record), at: group.now))
            anaEvents += roleEvents(anaMachine.onRelayEvent(.ordered(record), at: group.now))
        }
        // Ben joins late and replays the history the relay kept.
        let benMachine = try group.joined(ben, "ben", creator: host, others: [(host, "host"), (ana, "ana")], history: records)
        #expect(hostEvents == anaEvents)
        #expect(hostEvents.map { $0.refusal == nil } == [false, true, true, false, true, false])
        #expect(hostEvents[0].refusal == "only operators may make others operators")
        for machine in [hostMachine, anaMachine, benMachine] {
            #expect(machine.roleBook == hostMachine.roleBook)
            #expect(machine.roleBook.current.operators == [ana.localID])
            #expect(machine.roleBook.current.policy.playback == .operators)
            // What each order was decided under is the same everywhere too.
            for order in 1...UInt64(records.count + 1) {
                #expect(machine.roleBook.roles(before: order) == hostMachine.roleBook.roles(before: order))
            }
        }
        #expect(!hostMachine.roleBook.roles(before: 3).isOperator(ana.localID))
    }

    @Test func whenTheLastOperatorLeavesTheLongestPresentClaimsAndEveryoneAgrees() throws {
        var group = RoleTestGroup()
        let (host, ana, ben) = (group.member(), group.member(), group.member())
        var machines = [
            try group.joined(ana, "ana", creator: host, others: [(host, "host"), (ben, "ben")]),
            try group.joined(ben, "ben", creator: host, others: [(host, "host"), (ana, "ana")]),
        ]
        // Ana spoke first in the order (she has been present longest); then ben.
        let first = [group.ordered(Array("{}".utf8), by: ana), group.ordered(Array("{}".utf8), by: ben)]
        for index in machines.indices {
            for record in first { _ = machines[index].onRelayEvent(.ordered(record), at: group.now) }
            // The operator is present: nobody claims.
            #expect(machines[index].onRolesReview().isEmpty)
            _ = machines[index].onRelayEvent(.participantLeft(host.localID), at: group.now)
        }
        #expect(machines[0].onRolesReview() == [.send(.claim(departed: [host.localID]))])
        #expect(machines[1].onRolesReview().isEmpty)
        // Sent once for these roles.
        #expect(machines[0].onRolesReview().isEmpty)
        // Ben claims too (his view differs, say): the first in the order wins, everywhere.
        let claims = [group.role(.claim(departed: [host.localID]), by: ana), group.role(.claim(departed: [host.localID]), by: ben)]
        for index in machines.indices {
            let events = claims.flatMap { roleEvents(machines[index].onRelayEvent(.ordered($0), at: group.now)) }
            #expect(events.map { $0.refusal == nil } == [true, false])
            #expect(machines[index].roleBook.current.operators == [ana.localID])
            #expect(machines[index].onRolesReview().isEmpty)
        }
    }

    @Test func aLateJoinerWhoseHistoryWasCutShortJudgesWhoIsLongestPresentByItsWelcome() throws {
        var group = RoleTestGroup()
        let (host, ana, cy) = (group.member(), group.member(), group.member())
        // Ana proposed the session's first record; the relay's history no longer holds it. Cy
        // joins late and proposes at order 10. Then the host, the only operator, leaves.
        let others = [(host, "host"), (ana, "ana")]
        var told = try group.joined(cy, "cy", creator: host, others: others, firstOrders: [ana.localID: 1])
        // The same participant without the welcome's word, with a sealer of its own (each
        // opens a record once).
        let cyAgain = BodySealer(secret: group.secret, sessionID: group.sessionID, identity: cy.identity)
        var untold = try group.joined(cyAgain, "cy", creator: host, others: others)
        let mine = group.ordered(Array("{}".utf8), by: cy, at: 10)
        for event in [RelayEvent.ordered(mine), .participantLeft(host.localID)] {
            _ = told.onRelayEvent(event, at: group.now)
            _ = untold.onRelayEvent(event, at: group.now)
        }
        // Told by its welcome, Cy leaves the role to Ana, as the relay and Ana herself judge.
        #expect(told.onRolesReview().isEmpty)
        // Judging by the history alone, it would have claimed a role the relay refuses.
        #expect(untold.onRolesReview() == [.send(.claim(departed: [host.localID]))])
    }

    @Test func everyoneWhoAcceptsAGrantRevocationPolicyOrClaimHandsItsMakersStatementToTheRelay() throws {
        var group = RoleTestGroup()
        let (host, ana, ben) = (group.member(), group.member(), group.member())
        var hostMachine = try group.joined(host, "host", creator: host, others: [(ana, "ana"), (ben, "ben")])
        var anaMachine = try group.joined(ana, "ana", creator: host, others: [(host, "host"), (ben, "ben")])
        var benMachine = try group.joined(ben, "ben", creator: host, others: [(host, "host"), (ana, "ana")])
        // The host grants Ben, then revokes him: each participant hands on the host's own
        // statement, naming Ben's key, so that the relay learns of it whoever is still there.
        let grant = group.role(.grant(ben.localID), by: host)
        let revoke = group.role(.revoke(ben.localID), by: host)
        for record in [grant, revoke] {
            let expected: RelayAuthority.Change = record.order == grant.order ? .grant(publicKey: ben.identity.publicKey) : .revoke(publicKey: ben.identity.publicKey)
            let told = [hostMachine, anaMachine, benMachine].indices.map { index in
                switch index {
                case 0: statements(hostMachine.onRelayEvent(.ordered(record), at: group.now))
                case 1: statements(anaMachine.onRelayEvent(.ordered(record), at: group.now))
                default: statements(benMachine.onRelayEvent(.ordered(record), at: group.now))
                }
            }
            #expect(told.allSatisfy { $0.count == 1 && $0.first == told[0].first })
            #expect(told[0].first?.change == expected)
            #expect(told[0].first?.signer == host.identity.publicKey)
            #expect(told[0].first?.counter == record.order)
        }
        // Who may end, as the policy says, is the relay's to enforce: handed on too.
        let policy = group.role(.policy(SessionPolicy(playback: .everyone, ending: .operators)), by: host)
        let policyTold = statements(anaMachine.onRelayEvent(.ordered(policy), at: group.now))
        #expect(policyTold.map(\.change) == [.ending(operatorsOnly: true)])
        #expect(statements(benMachine.onRelayEvent(.ordered(policy), at: group.now)) == policyTold)
        // A refused grant (Ana is no operator) is handed on by nobody, not even Ana.
        let refused = group.role(.grant(ana.localID), by: ana)
        #expect(statements(anaMachine.onRelayEvent(.ordered(refused), at: group.now)).isEmpty)
        #expect(statements(benMachine.onRelayEvent(.ordered(refused), at: group.now)).isEmpty)
        // The host leaves; Ana's claim, once accepted, is handed on by Ben too.
        _ = hostMachine
        let claim = group.role(.claim(departed: [host.localID]), by: ana)
        let anaTold = statements(anaMachine.onRelayEvent(.ordered(claim), at: group.now))
        #expect(anaTold.count == 1 && anaTold.first?.change == .claim && anaTold.first?.signer == ana.identity.publicKey)
        #expect(statements(benMachine.onRelayEvent(.ordered(claim), at: group.now)) == anaTold)
    }

    @Test func aStatementThatIsNotTheRecordsMakersOrDoesNotSayWhatItSaysIsNotHandedOn() throws {
        var group = RoleTestGroup()
        let (host, ana, ben) = (group.member(), group.member(), group.member())
        var benMachine = try group.joined(ben, "ben", creator: host, others: [(host, "host"), (ana, "ana")])
        let grantBen = RoleChange.grant(ben.localID)
        var forged = group.statement(of: grantBen, by: host, counter: 1)!
        forged.counter = 2
        let wrong: [RelayAuthority] = [
            group.statement(of: .grant(ana.localID), by: host, counter: 1)!,    // names another participant
            group.statement(of: grantBen, by: ana, counter: 1)!,                // signed by someone else
            forged,                                                             // its signature does not verify
        ]
        for statement in wrong {
            let record = group.ordered(RoleRecord.encode(grantBen, statement: statement), by: host, kind: .roles, retention: .kept)
            let out = benMachine.onRelayEvent(.ordered(record), at: group.now)
            // The record is the host's and is taken; the statement it carries is not passed on.
            #expect(roleEvents(out).count == 1)
            #expect(statements(out).isEmpty)
            let revoke = group.role(.revoke(ben.localID), by: host)
            #expect(statements(benMachine.onRelayEvent(.ordered(revoke), at: group.now)).count == 1)
        }
        // A record whose statement bytes are cut short is no record.
        let cut = RoleRecord.encode(grantBen, statement: wrong[0]).dropLast()
        #expect(RoleRecord.decode(Array(cut)) == nil)
        #expect(RoleRecord.decodeWithStatement(RoleRecord.encode(grantBen, statement: wrong[0]))?.statement == wrong[0])
    }

    @Test func aRecordsStatementCountsPastEveryOrderSeenAndEveryCounterUsed() throws {
        var group = RoleTestGroup()
        let (host, ana) = (group.member(), group.member())
        var hostMachine = try group.joined(host, "host", creator: host, others: [(ana, "ana")])
        func counter(_ record: (bytes: [UInt8], statement: RelayAuthority?)) -> UInt64? {
            // The statement sent with the record is the one inside it.
            #expect(RoleRecord.decodeWithStatement(record.bytes)?.statement == record.statement)
            return record.statement?.counter
        }
        // Two changes made before either is ordered count 1 and 2.
        #expect(counter(hostMachine.recordBytes(for: .grant(ana.localID))) == 1)
        #expect(counter(hostMachine.recordBytes(for: .revoke(ana.localID))) == 2)
        // Past the orders seen since.
        for _ in 0..<5 { _ = hostMachine.onRelayEvent(.ordered(group.ordered(Array("{}".utf8), by: ana)), at: group.now) }
        #expect(counter(hostMachine.recordBytes(for: .grant(ana.localID))) == 6)
        // A policy carries who may end, which the relay enforces; a reinstatement and an epoch
        // history carry theirs, by which the relay mirrors the one and pins both.
        #expect(RoleRecord.decodeWithStatement(hostMachine.recordBytes(for: .policy(SessionPolicy())).bytes)?.statement?.change
            == .ending(operatorsOnly: false))
        #expect(RoleRecord.decodeWithStatement(hostMachine.recordBytes(for: .reinstate).bytes)?.statement?.change == .reinstate)
        #expect(hostMachine.recordBytes(for: .epochHistory([:])).statement?.change == .epochHistory)
    }

    @Test func aParticipantNamedDepartedWhileHereTakesItsRoleBack() throws {
        var group = RoleTestGroup()
        let (host, ana) = (group.member(), group.member())
        var hostMachine = try group.joined(host, "host", creator: host, others: [(ana, "ana")])
        let claim = group.role(.claim(departed: [host.localID]), by: ana)
        _ = hostMachine.onRelayEvent(.ordered(claim), at: group.now)
        #expect(hostMachine.roleBook.current.operators == [ana.localID])
        #expect(hostMachine.onRolesReview() == [.send(.reinstate)])
        _ = hostMachine.onRelayEvent(.ordered(group.role(.reinstate, by: host)), at: group.now)
        #expect(hostMachine.roleBook.current.operators == [host.localID])
    }

    @Test func anInviteNamesItsCreatorAndABadOneSaysSo() throws {
        var invitation = Invitation(host: "relay.example", port: 7462, sessionID: UUID(), secret: SessionSecret())
        invitation.creator = ana
        let parsed = try Invitation(parsing: invitation.description)
        #expect(parsed.creator == ana)
        #expect(parsed == invitation)
        let old = Invitation(host: "relay.example", port: 7462, sessionID: UUID(), secret: SessionSecret())
        #expect(try Invitation(parsing: old.description).creator == nil)
        #expect(throws: InvitationError.self) { try Invitation(parsing: old.description + "&o=nobody") }
        #expect(throws: InvitationError.self) { try Invitation(parsing: invitation.description + "&o=\(ben.uuidString)") }
    }
}
