import Foundation
import TandemNet
import TandemWire

/// Admission to a `RelayCore` as a client goes through it, for the core's tests: the hello, then
/// the claim of a new session's key or the proof of knowing an existing one's.
struct CoreAdmission {
    /// The session's key.
    let key: [UInt8]
    /// The session.
    let session: UUID

    /// Admits `participant` on `connection` at `now`, creating the session when asked; returns
    /// the directives of its admission (the welcome, or a refusal).
    func admit(_ core: inout RelayCore, _ connection: RelayConnectionID, _ participant: UUID, create: Bool,
               at now: Int64, peer: SocketAddress? = nil) -> [RelayDirective] {
        let opened = core.onOpen(connection, entropy: [UInt8](repeating: UInt8(truncatingIfNeeded: connection.value), count: RelayCore.entropyLength),
                                 at: now, peer: peer)
        guard opened.isEmpty else { return opened }
        let hello = RelayHello(sessionID: session, participant: RelayParticipantEntry(id: participant, displayName: "p"),
                               create: create, activity: [], resume: false, received: 0)
        let challenge = core.onFrame(.hello(hello), from: connection, at: now)
        guard case let .send(_, .challenge(nonce, exists))? = challenge.first else { return challenge }
        let answer: RelayFrame = exists
            ? .proof(mac: RelayAuthenticator.proof(key: key, nonce: nonce, sessionID: session, participantID: participant))
            : .claim(key: key)
        return core.onFrame(answer, from: connection, at: now)
    }

    /// The frames among `directives` sent to `connection`.
    static func frames(_ directives: [RelayDirective], to connection: RelayConnectionID) -> [RelayFrame] {
        directives.compactMap { if case let .send(id, frame) = $0, id == connection { frame } else { nil } }
    }
}
