import Foundation
@testable import Tandem
import TandemNet
import TandemTestKit
import Testing

/// A late joiner verifies what was signed by participants who have since left, and names them
/// by their own signed presence, which the relay kept: whole participants in virtual time
/// (`VirtualSessions`).
@Suite struct LateJoinerIdentityTests {
    /// Every ordered delivery `deliveries` holds once its session is over (the sequence then ends).
    static func drained(_ deliveries: AsyncStream<OrderedPlaintext>) async -> [OrderedPlaintext] {
        var all: [OrderedPlaintext] = []
        for await delivery in deliveries { all.append(delivery) }
        return all
    }

    @Test func historyFromADepartedParticipantIsVerifiedAndNamed() async throws {
        let sessions = VirtualSessions(activity: Quiz(topic: "rivers"))
        defer { sessions.shutdown() }
        let host = try sessions.join("host").session
        let ana = try sessions.join("ana").session
        sessions.run(for: 100)
        let anaID = ana.localParticipant.id
        #expect(RelayAuthenticator.isIdentity(anaID, of: ana.bodies.identity.publicKey), "identities are self-certifying")
        #expect(ana.localParticipant.fingerprint == String(anaID.uuidString.lowercased().prefix(8)))
        let hostOrdered = host.orderedDeliveries()
        try ana.sendOrdered(Array("pause".utf8))
        sessions.run(for: 100)
        ana.leave()
        sessions.run(for: 100)
        #expect(host.activeParticipants.count == 1)

        // Ben joins after Ana left: her proposal is in the history he gets, verified, under her name.
        let ben = try sessions.join("ben").session
        let benOrdered = ben.orderedDeliveries()
        sessions.run(for: 100)
        #expect(ben.participant(identifiedBy: anaID)?.displayName == "ana")
        #expect(ben.rejectionCounts.isEmpty, "\(ben.rejectionCounts)")
        #expect(host.rejectionCounts.isEmpty, "\(host.rejectionCounts)")
        ben.leave()
        host.leave()
        sessions.run(for: 100)
        #expect(await Self.drained(hostOrdered).map(\.body) == [Array("pause".utf8)])
        let received = await Self.drained(benOrdered)
        #expect(received.count == 1)
        let first = try #require(received.first)
        #expect(first.sender == anaID && first.body == Array("pause".utf8))
    }

    @Test func twoWhoShareANameAreToldApartByFingerprint() {
        let one = Participant(id: RelayAuthenticator.participantID(for: SigningKeyPair().publicKey), displayName: "sam")
        let two = Participant(id: RelayAuthenticator.participantID(for: SigningKeyPair().publicKey), displayName: "sam")
        let three = Participant(id: RelayAuthenticator.participantID(for: SigningKeyPair().publicKey), displayName: "kim")
        let everyone = [one, two, three]
        #expect(one.name(among: everyone) == "sam [\(one.fingerprint)]")
        #expect(two.name(among: everyone) == "sam [\(two.fingerprint)]")
        #expect(one.name(among: everyone) != two.name(among: everyone))
        #expect(three.name(among: everyone) == "kim")
        #expect(one.fingerprint.count == 8 && one.fingerprint.allSatisfy(\.isHexDigit))
    }
}
