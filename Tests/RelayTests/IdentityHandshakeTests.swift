import Foundation
import TandemNet
import TandemWire
import Testing

/// The relay core's admission with a verifier and participants' own keys: pure, virtual time.
@Suite("Relay identity handshake")
struct IdentityHandshakeTests {
    private let admission = CoreAdmission(key: [UInt8](repeating: 9, count: 32), session: UUID())
    private var session: UUID { admission.session }

    private func entropy(_ seed: UInt8) -> [UInt8] { [UInt8](repeating: seed, count: RelayCore.entropyLength) }

    /// Opens `connection`, says hello as `entry`, returns the challenge's nonce and whether the session exists.
    private func greet(_ core: inout RelayCore, _ connection: RelayConnectionID, _ entry: RelayParticipantEntry,
                       create: Bool = false, resume: Bool = false) -> (nonce: [UInt8], exists: Bool)? {
        _ = core.onOpen(connection, entropy: entropy(UInt8(truncatingIfNeeded: connection.value) &+ 40), at: 0)
        let directives = core.onFrame(.hello(RelayHello(sessionID: session, participant: entry, create: create, activity: [],
                                                         resume: resume, received: 0)), from: connection, at: 0)
        guard case let .send(_, .challenge(nonce, exists))? = directives.first else { return nil }
        return (nonce, exists)
    }

    private func refusal(_ directives: [RelayDirective], to connection: RelayConnectionID) -> RelayFault? {
        for frame in CoreAdmission.frames(directives, to: connection) { if case let .refusal(fault) = frame { return fault } }
        return nil
    }

    private func welcomed(_ directives: [RelayDirective], _ connection: RelayConnectionID) -> Bool {
        CoreAdmission.frames(directives, to: connection).contains { if case .welcome = $0 { true } else { false } }
    }

    @Test("the creator registers a verifier; joiners prove with the derived key and their own")
    func verifierAdmission() {
        var core = RelayCore()
        let ana = TestIdentities.make()
        let ben = TestIdentities.make()
        #expect(welcomed(admission.admit(&core, RelayConnectionID(1), ana, create: true, at: 0), RelayConnectionID(1)))
        #expect(welcomed(admission.admit(&core, RelayConnectionID(2), ben, create: false, at: 0), RelayConnectionID(2)))
        #expect(core.participants(of: session) == [ana, ben])
        // Someone with another secret is refused.
        let mallory = TestIdentities.make()
        let other = CoreAdmission(key: [UInt8](repeating: 1, count: 32), session: session)
        let refused = other.admit(&core, RelayConnectionID(3), mallory, create: false, at: 0)
        #expect(refusal(refused, to: RelayConnectionID(3))?.code == .wrongSecret)
        #expect(core.participants(of: session) == [ana, ben])
    }

    @Test("an observer of the creator's connection cannot join with what it saw")
    func observerLearnsNothing() throws {
        var core = RelayCore()
        let ana = TestIdentities.make()
        let creator = RelayConnectionID(1)
        let (nonce, exists) = try #require(greet(&core, creator, TestIdentities.entry(ana, "ana"), create: true))
        #expect(!exists)
        let claim = CoreAdmission.answer(nonce: nonce, exists: false, session: session, sessionKey: admission.sessionKey,
                                         participant: ana, identity: TestIdentities.key(of: ana))
        #expect(welcomed(core.onFrame(claim, from: creator, at: 0), creator))
        guard case let .claim(verifier, sessionSignature, _) = claim else { Issue.record("not a claim"); return }
        #expect(verifier == admission.sessionKey.publicKey, "the claim carries only the public verifier")
        // Eve saw the whole claim: she answers her own challenge with its verifier and signature.
        let eve = TestIdentities.make()
        let eveKey = TestIdentities.key(of: eve)
        let observer = RelayConnectionID(2)
        let (eveNonce, _) = try #require(greet(&core, observer, TestIdentities.entry(eve, "eve")))
        let eveSignature = eveKey.sign(RelayAuthenticator.challengeMessage(.participant, nonce: eveNonce, sessionID: session,
                                                                           participantID: eve, participantKey: eveKey.publicKey))
        let replayed = core.onFrame(.proof(sessionSignature: sessionSignature, participantSignature: eveSignature), from: observer, at: 0)
        #expect(refusal(replayed, to: observer)?.code == .wrongSecret)
        // A claim of the same verifier, signed with a key she made herself, is no better.
        let forged = SigningKeyPair()
        let third = RelayConnectionID(3)
        let (thirdNonce, _) = try #require(greet(&core, third, TestIdentities.entry(eve, "eve"), create: true))
        let message = { (signer: RelayAuthenticator.Signer) in
            RelayAuthenticator.challengeMessage(signer, nonce: thirdNonce, sessionID: session, participantID: eve, participantKey: eveKey.publicKey)
        }
        let claimed = core.onFrame(.claim(verifier: verifier, sessionSignature: forged.sign(message(.session)),
                                          participantSignature: eveKey.sign(message(.participant))), from: third, at: 0)
        // The session exists by now, so a claim is out of place; either way she is not admitted.
        #expect(!welcomed(claimed, third))
        #expect(core.participants(of: session) == [ana])
    }

    @Test("a hello whose identity is not its key's is refused before any challenge")
    func identityMustBeTheKeys() {
        var core = RelayCore()
        let ana = TestIdentities.make()
        _ = admission.admit(&core, RelayConnectionID(1), ana, create: true, at: 0)
        let connection = RelayConnectionID(2)
        _ = core.onOpen(connection, entropy: entropy(2), at: 0)
        let mallory = SigningKeyPair()
        let directives = core.onFrame(.hello(RelayHello(
            sessionID: session, participant: RelayParticipantEntry(id: ana, publicKey: mallory.publicKey, displayName: "ana"),
            create: false, activity: [], resume: true, received: 0)), from: connection, at: 0)
        #expect(refusal(directives, to: connection)?.code == .wrongIdentity)
        #expect(!CoreAdmission.frames(directives, to: connection).contains { if case .challenge = $0 { true } else { false } })
    }

    @Test("resuming someone else's seat with the session's secret is refused; the victim is untouched")
    func seatTheftRefused() throws {
        var core = RelayCore()
        let ana = TestIdentities.make()
        let ben = TestIdentities.make()
        let anaConnection = RelayConnectionID(1)
        _ = admission.admit(&core, anaConnection, ana, create: true, at: 0)
        _ = admission.admit(&core, RelayConnectionID(2), ben, create: false, at: 0)
        // Mallory holds the secret and knows Ana's identity and public key (every welcome lists them).
        let thief = RelayConnectionID(3)
        let (nonce, exists) = try #require(greet(&core, thief, TestIdentities.entry(ana, "ana"), resume: true))
        #expect(exists)
        let malloryKey = SigningKeyPair()
        let message = { (signer: RelayAuthenticator.Signer) in
            RelayAuthenticator.challengeMessage(signer, nonce: nonce, sessionID: session, participantID: ana,
                                                participantKey: TestIdentities.key(of: ana).publicKey)
        }
        // The session's part is right (she has the secret); the participant's part is her own key's.
        let directives = core.onFrame(.proof(sessionSignature: admission.sessionKey.sign(message(.session)),
                                             participantSignature: malloryKey.sign(message(.participant))), from: thief, at: 0)
        #expect(refusal(directives, to: thief)?.code == .wrongIdentity)
        #expect(directives.allSatisfy { directive in
            switch directive {
            case let .send(connection, _), let .close(connection): connection == thief
            default: true
            }
        }, "nothing reaches Ana or Ben: \(directives)")
        #expect(core.participants(of: session) == [ana, ben])
        // Ana herself resumes with her own key.
        let anaAgain = RelayConnectionID(4)
        let resumed = admission.admit(&core, anaAgain, ana, create: false, resume: true, at: 1)
        #expect(welcomed(resumed, anaAgain))
        #expect(CoreAdmission.frames(resumed, to: anaConnection).contains { if case .error = $0 { true } else { false } },
                "her half-open old connection is replaced")
    }

    @Test("a late joiner's welcome lists who left, with their kept presences, before those present")
    func formerParticipantsAreKept() throws {
        var core = RelayCore()
        let ana = TestIdentities.make()
        let ben = TestIdentities.make()
        _ = admission.admit(&core, RelayConnectionID(1), ana, create: true, at: 0)
        _ = admission.admit(&core, RelayConnectionID(2), ben, create: false, at: 0)
        _ = core.onFrame(.leave(sequence: 1), from: RelayConnectionID(2), at: 1)
        let carl = TestIdentities.make()
        let welcome = CoreAdmission.frames(admission.admit(&core, RelayConnectionID(3), carl, create: false, at: 2), to: RelayConnectionID(3))
        guard case let .welcome(frame)? = welcome.first else {
            Issue.record("no welcome: \(welcome)")
            return
        }
        #expect(frame.participants.map(\.id) == [ben, ana, carl])
        #expect(frame.participants.map(\.departed) == [true, false, false])
        #expect(frame.participants.allSatisfy { RelayAuthenticator.isIdentity($0.id, of: $0.publicKey) })
        #expect(core.participants(of: session) == [ana, carl])
    }

    @Test("a hello of another protocol version is refused in a frame that version reads, naming both",
          arguments: [UInt8(2), 3, 11])
    func versionRefusal(peerVersion: UInt8) {
        var core = RelayCore()
        let connection = RelayConnectionID(1)
        _ = core.onOpen(connection, entropy: entropy(1), at: 0)
        let directives = core.onMalformed(WireError(.unsupportedVersion(peerVersion), context: "relay frame"), from: connection, at: 0)
        let frames = CoreAdmission.frames(directives, to: connection)
        guard case let .versionRefusal(version, fault)? = frames.first else {
            Issue.record("expected a version refusal, got \(frames)")
            return
        }
        #expect(version == peerVersion)
        #expect(fault.code == .versionMismatch)
        #expect(fault.text == "relay speaks protocol v\(RelayFrame.version), this tandem speaks v\(peerVersion)")
        #expect(directives.contains { if case .close(connection) = $0 { true } else { false } })
        // On the wire: that version's byte, the refusal's type, then the code and text as it lays them out.
        let bytes = frames[0].encoded()
        #expect(bytes[4] == peerVersion && bytes[5] == 0x07 && bytes[6] == RelayFaultCode.versionMismatch.rawValue)
        let length = Int(bytes[7]) << 8 | Int(bytes[8])
        #expect(String(decoding: bytes[9..<(9 + length)], as: UTF8.self) == fault.text)
        #expect(bytes.count == 9 + length)
        // Version 1 is older than any refusal this build can write: a current refusal, still one line.
        var old = RelayCore()
        _ = old.onOpen(connection, entropy: entropy(1), at: 0)
        let ancient = CoreAdmission.frames(old.onMalformed(WireError(.unsupportedVersion(1), context: "relay frame"), from: connection, at: 0), to: connection)
        #expect(ancient == [.refusal(RelayFault(.versionMismatch, "relay speaks protocol v\(RelayFrame.version), this tandem speaks v1"))])
    }
}
