import Foundation
import TandemNet
import TandemWire

/// The relay's handshake for a raw client, in one place, so that attack tests speak it without
/// repeating it (whoever changes the handshake changes it here).
extension RawRelayClient {
    /// Says hello as a participant with key pair `identity` (its identity derived from the
    /// public key) in `session`, answers the challenge with the session key that the secret `key`
    /// seeds (a claim registering its verifier when the session is new and `create` is set, else
    /// a proof) and returns the welcome.
    @discardableResult
    func admit(session: UUID, identity: SigningKeyPair = SigningKeyPair(), key: [UInt8], create: Bool, name: String = "raw",
               activity: [UInt8] = []) throws -> RelayWelcomeFrame {
        let participant = RelayParticipantEntry(id: RelayAuthenticator.participantID(for: identity.publicKey),
                                                publicKey: identity.publicKey, displayName: name)
        let hello = RelayHello(sessionID: session, participant: participant, create: create, activity: activity, resume: false, received: 0)
        try send(RelayFrame.hello(hello).encoded())
        guard case let .challenge(nonce, exists)? = try nextFrame() else { throw RawRelayClientError.refused("no challenge") }
        let answer = RelayAuthenticator.answer(nonce: nonce, sessionExists: exists, sessionID: session,
                                               sessionKey: SigningKeyPair(seed: key), identity: identity)
        try send(answer.encoded())
        while let frame = try nextFrame() {
            switch frame {
            case let .welcome(welcome): return welcome
            case let .refusal(fault), let .error(fault): throw RawRelayClientError.refused(fault.description)
            default: continue
            }
        }
        throw RawRelayClientError.refused("no welcome")
    }

    /// The next frame, nil when the relay closed the connection; throws when none comes in
    /// `timeout`.
    func nextFrame(timeout: Duration = .seconds(10)) throws -> RelayFrame? {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let frame = try reader.next() { return frame }
            guard let count = try socket.read(into: &buffer) else {
                Thread.sleep(forTimeInterval: 0.002)
                continue
            }
            if count == 0 { return nil }
            reader.append(buffer[..<count])
        }
        throw RawRelayClientError.refused("no frame within \(timeout)")
    }
}

/// What went wrong for a raw client.
enum RawRelayClientError: Error, CustomStringConvertible {
    case refused(String)

    var description: String {
        switch self {
        case let .refused(reason): "refused: \(reason)"
        }
    }
}
