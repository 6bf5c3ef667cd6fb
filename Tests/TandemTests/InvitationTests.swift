import Foundation
import Testing
@testable import Tandem
import TandemNet

/// Invitations, secrets and sealing: what lets people in and keeps the relay out.
@Suite struct InvitationTests {
    @Test func inviteRoundTripsThroughItsURL() throws {
        let invitation = Invitation(host: "127.0.0.1", port: 7400, sessionID: UUID(), secret: SessionSecret())
        let text = invitation.url.absoluteString
        #expect(text.hasPrefix("tandem://127.0.0.1:7400/"))
        #expect(text.contains("?k="))
        #expect(try Invitation(parsing: text) == invitation)
        #expect(try Invitation(parsing: "  \(text)\n") == invitation)

        let v6 = Invitation(host: "::1", port: 9, sessionID: UUID(), secret: SessionSecret())
        #expect(v6.description.hasPrefix("tandem://[::1]:9/"))
        #expect(try Invitation(parsing: v6.description) == v6)
    }

    @Test(arguments: [
        "http://127.0.0.1:7400/6b3f2a56-0b1e-4a8e-9f3e-1a2b3c4d5e6f?k=AAAA",
        "tandem://127.0.0.1/6b3f2a56-0b1e-4a8e-9f3e-1a2b3c4d5e6f?k=AAAA",
        "tandem://127.0.0.1:7400/not-a-session?k=AAAA",
        "tandem://127.0.0.1:7400/6b3f2a56-0b1e-4a8e-9f3e-1a2b3c4d5e6f",
        "tandem://127.0.0.1:7400/6b3f2a56-0b1e-4a8e-9f3e-1a2b3c4d5e6f?k=tooshort",
        "",
    ])
    func badInvitesAreClearErrors(text: String) {
        #expect(throws: InvitationError.self) { try Invitation(parsing: text) }
    }

    @Test(arguments: [
        "http://127.0.0.1:7400/6b3f2a56-0b1e-4a8e-9f3e-1a2b3c4d5e6f?k=pFUlHzmR_sLoyKVkjB2QQXCATgHY20JSQHkPEruawfY",
        "tandem//127.0.0.1:7400/6b3f2a56-0b1e-4a8e-9f3e-1a2b3c4d5e6f?k=pFUlHzmR_sLoyKVkjB2QQXCATgHY20JSQHkPEruawfY",
        "  127.0.0.1:7400?x=1&k=pFUlHzmR_sLoyKVkjB2QQXCATgHY20JSQHkPEruawfY#frag  ",
        "tandem://127.0.0.1:7400/not-a-session?k=pFUlHzmR_sLoyKVkjB2QQXCATgHY20JSQHkPEruawfY",
        "tandem://127.0.0.1:7400/6b3f2a56-0b1e-4a8e-9f3e-1a2b3c4d5e6f?k=pFUlHzmR_sLoyKVkjB2QQXCATgHY20JSQHkPEruawf",
    ])
    func errorsNeverEchoTheSecret(text: String) {
        #expect {
            try Invitation(parsing: text)
        } throws: { error in
            let message = "\(error)"
            return !message.contains("pFUlHzmR") && !message.contains("k=p")
        }
    }

    @Test func redactionHidesEverySecretAndKeepsTheRest() {
        let invite = Invitation(host: "relay.example", port: 7462, sessionID: UUID(), secret: SessionSecret())
        let redacted = Invitation.redacted(invite.description)
        #expect(redacted == "tandem://relay.example:7462/\(invite.sessionID.uuidString.lowercased())?k=…")
        #expect(!redacted.contains(invite.secret.text))
        #expect(Invitation.redacted("'tandem://h:1/s?a=1&k=SECRET&b=2' and k=OTHER") == "'tandem://h:1/s?a=1&k=…&b=2' and k=…")
        #expect(Invitation.redacted("no secret here: k=") == "no secret here: k=")
        #expect(Invitation.redacted("relay.example:7462") == "relay.example:7462")
        // What it echoes is safe for a terminal too.
        #expect(Invitation.redacted("\u{1B}]0;x\u{7}k=SECRET") == "k=…")
    }

    @Test func aSecretNeverDescribesItself() {
        let secret = SessionSecret()
        let invitation = Invitation(host: "127.0.0.1", port: 7462, sessionID: UUID(), secret: secret)
        for text in ["\(secret)", String(describing: secret), String(reflecting: secret)] {
            #expect(!text.contains(secret.text), "\(text)")
            #expect(text == "SessionSecret(…)")
        }
        #expect(invitation.description.contains(secret.text), "the invite itself carries it")
    }

    @Test func keysAreDerivedApartAndDependOnTheSecret() {
        let secret = SessionSecret()
        #expect(secret.verifier.count == 32)
        #expect(secret.verifier != secret.sealingKey)
        #expect(secret.verifier == SessionSecret(bytes: secret.bytes)!.verifier)
        #expect(SessionSecret().verifier != secret.verifier)
        // The verifier checks the session key's signatures, and only those.
        let message = Array("challenge".utf8)
        #expect(SigningKeyPair.verify(secret.signingKey.sign(message), of: message, publicKey: secret.verifier))
        #expect(!SigningKeyPair.verify(SessionSecret().signingKey.sign(message), of: message, publicKey: secret.verifier))
    }

    @Test func sealedBodiesHideTheirContentAndRejectTheWrongKey() {
        let session = UUID()
        let secret = SessionSecret()
        let sealer = Sealer(secret: secret, sessionID: session)
        let plaintext = Array("the answer is forty-two".utf8)
        let sealed = sealer.seal(plaintext)
        #expect(sealed.count == plaintext.count + Sealer.overhead)
        #expect(!sealed.indices.contains { sealed[$0...].starts(with: Array("answer".utf8)) })
        #expect(sealer.open(sealed) == plaintext)
        // Another secret, another session, or one flipped bit: nothing opens.
        #expect(Sealer(secret: SessionSecret(), sessionID: session).open(sealed) == nil)
        #expect(Sealer(secret: secret, sessionID: UUID()).open(sealed) == nil)
        var altered = sealed
        altered[altered.count / 2] ^= 1
        #expect(sealer.open(altered) == nil)
        #expect(sealer.open([1, 2, 3]) == nil)
        // The same message sealed twice looks different (fresh nonces).
        #expect(sealer.seal(plaintext) != sealed)
    }

    @Test func envelopesDecodeOnlyWhatTheyEncoded() {
        let message = SessionEnvelope.message(type: "Answer", payload: Array("{}".utf8))
        #expect(SessionEnvelope(decoding: message.encoded) == message)
        #expect(SessionEnvelope(decoding: SessionEnvelope.presence(name: "Ana ✨").encoded) == .presence(name: "Ana ✨"))
        #expect(SessionEnvelope(decoding: [1, 1, 0xFF, 0xFE]) == nil)
        #expect(SessionEnvelope(decoding: []) == nil)
        #expect(SessionEnvelope(decoding: [9, 9, 9]) == nil)
        #expect(SessionEnvelope(decoding: [2, 0, 200, 65]) == nil)
    }

    @Test func publishedValuesStartWithTheCurrentValueAndFollowChanges() async {
        final class Model: @unchecked Sendable {
            @Published var count = 0
        }
        let model = Model()
        var iterator = model.$count.values.makeAsyncIterator()
        #expect(await iterator.next() == 0)
        model.count = 1
        #expect(await iterator.next() == 1)
        // A slow reader sees only the newest value.
        model.count = 2
        model.count = 3
        #expect(await iterator.next() == 3)
        #expect(model.count == 3)
    }

    @Test func stateObserverFollowsTheRelayConfiguration() async {
        let center = ActivityCenter()
        let observer = GroupStateObserver(center: center)
        #expect(!observer.isEligibleForGroupSession)
        var values = observer.$isEligibleForGroupSession.values.makeAsyncIterator()
        #expect(await values.next() == false)
        center.configure(relay: UnreachableRelay(), host: "127.0.0.1", port: 9)
        #expect(await values.next() == true)
        #expect(center.isEligible)
        center.removeRelay()
        #expect(await values.next() == false)
        #expect(!center.isEligible)
    }
}

/// A connector whose relay never answers.
struct UnreachableRelay: RelayConnector {
    func join(_ request: RelayJoinRequest) async throws(RelayError) -> any RelayLink {
        throw RelayError(.unreachable, "127.0.0.1:9: connection refused")
    }
}
