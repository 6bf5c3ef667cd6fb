import Foundation
@testable import Tandem
import TandemNet
import TandemTestKit
import Testing

/// The relay learns of a change of who may remove and rekey from whoever accepts its record,
/// not from its maker alone: whole participants in virtual time (`VirtualSessions`), over the
/// in-memory relay's real core.
@Suite struct RelayAuthorityHandOnTests {
    @Test func anOperatorGrantedByOneWhoLeftAtOnceRemovesSomeoneAtTheRelayToo() throws {
        let sessions = VirtualSessions(activity: Quiz(topic: "rivers"))
        defer { sessions.shutdown() }
        let host = try sessions.join("host").session
        let ben = try sessions.join("ben").session
        let cy = try sessions.join("cy").session
        sessions.run(for: 100)

        // The host makes Ben an operator and leaves before its record comes back ordered: it
        // never sees its grant accepted, so the others must tell the relay.
        try host.makeOperator(ben.localParticipant)
        host.leave()
        sessions.run(for: 200)
        #expect(ben.roles.isOperator(ben.localParticipant.id))
        #expect(cy.roles.isOperator(ben.localParticipant.id))

        // Ben removes Cy: everyone moves on, and the relay, which took the host's grant from
        // Ben's or Cy's copy, takes Ben's new key and admits by it alone.
        try ben.remove(cy.localParticipant)
        sessions.run(for: 200)
        guard case .invalidated(let reason) = cy.state else {
            Issue.record("Cy's session is still \(cy.state)")
            return
        }
        #expect(reason.code == .removed)
        // The invite Cy held admits nobody any more.
        #expect(throws: (any Error).self) { try sessions.join("dee") }
        #expect(ben.rejectionCounts.isEmpty, "\(ben.rejectionCounts)")
    }
}
