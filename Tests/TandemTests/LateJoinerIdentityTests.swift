import Foundation
import Synchronization
@testable import Tandem
import TandemNet
import TandemTestKit
import Testing

/// A late joiner verifies what was signed by participants who have since left, and names them
/// by their own signed presence, which the relay kept: on both transports.
@Suite struct LateJoinerIdentityIOTests {
    @Test(arguments: TransportKind.allCases)
    func historyFromADepartedParticipantIsVerifiedAndNamed(transport: TransportKind) async throws {
        let hosted = try await SessionIOTests.host(transport)
        defer { hosted.relay.shutDown() }
        let ana = try await SessionIOTests.guest("ana", of: hosted)
        let anaID = ana.localParticipant.id
        #expect(RelayAuthenticator.isIdentity(anaID, of: ana.bodies.identity.publicKey), "identities are self-certifying")
        #expect(ana.localParticipant.fingerprint == String(anaID.uuidString.lowercased().prefix(8)))
        try ana.sendOrdered(Array("pause".utf8))
        let hostOrdered = Mutex<[OrderedPlaintext]>([])
        let hostReader = Task { for await delivery in hosted.session.orderedDeliveries() { hostOrdered.withLock { $0.append(delivery) } } }
        defer { hostReader.cancel() }
        #expect(await eventually { hostOrdered.withLock { $0.count } == 1 })
        ana.leave()
        #expect(await eventually { hosted.session.activeParticipants.count == 1 })

        // Ben joins after Ana left: her proposal is in the history he gets, verified, under her name.
        let ben = try await SessionIOTests.guest("ben", of: hosted)
        let benOrdered = Mutex<[OrderedPlaintext]>([])
        let benReader = Task { for await delivery in ben.orderedDeliveries() { benOrdered.withLock { $0.append(delivery) } } }
        defer { benReader.cancel() }
        #expect(await eventually { benOrdered.withLock { $0.count } == 1 })
        let first = try #require(benOrdered.withLock { $0.first })
        #expect(first.sender == anaID && first.body == Array("pause".utf8))
        #expect(ben.participant(identifiedBy: anaID)?.displayName == "ana")
        #expect(ben.rejectionCounts.isEmpty, "\(ben.rejectionCounts)")
        #expect(hosted.session.rejectionCounts.isEmpty, "\(hosted.session.rejectionCounts)")
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
