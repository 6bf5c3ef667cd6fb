import Foundation
import Synchronization
import TandemNet
import TandemWire

/// Admission to a `RelayCore` as a client goes through it, for the core's tests: the hello, then
/// the claim of a new session's verifier or the proof of knowing its key, signed with the
/// session's key and the participant's own.
struct CoreAdmission {
    /// The seed of the session's key.
    let key: [UInt8]
    /// The session.
    let session: UUID

    /// The session's signing key.
    var sessionKey: SigningKeyPair { SigningKeyPair(seed: key) }

    /// Admits `participant` (an identity from `TestIdentities.make()`) on `connection` at `now`,
    /// creating the session when asked; returns the directives of its admission (the welcome,
    /// or a refusal).
    /// With `creationKey`, the hello proves that key (`RelayCreationKey`).
    func admit(_ core: inout RelayCore, _ connection: RelayConnectionID, _ participant: UUID, create: Bool,
               resume: Bool = false, at now: Int64, peer: SocketAddress? = nil, creationKey: [UInt8]? = nil) -> [RelayDirective] {
        let opened = core.onOpen(connection, entropy: [UInt8](repeating: UInt8(truncatingIfNeeded: connection.value), count: RelayCore.entropyLength),
                                 at: now, peer: peer)
        guard opened.isEmpty else { return opened }
        let identity = TestIdentities.key(of: participant)
        let hello = RelayHello(sessionID: session, participant: TestIdentities.entry(participant, "p"),
                               create: create, activity: [], resume: resume, received: 0,
                               creationProof: creationKey.map {
                                   RelayCreationKey.proof(key: $0, sessionID: session, participantID: participant, participantKey: identity.publicKey)
                               })
        let challenge = core.onFrame(.hello(hello), from: connection, at: now)
        guard case let .send(_, .challenge(nonce, exists))? = challenge.first else { return challenge }
        return core.onFrame(CoreAdmission.answer(nonce: nonce, exists: exists, session: session, sessionKey: sessionKey,
                                                 participant: participant, identity: identity), from: connection, at: now)
    }

    /// A core whose session has one participant, on connection 1, that created it at instant 0.
    func startedCore(_ configuration: RelayCoreConfiguration = RelayCoreConfiguration()) -> RelayCore {
        var core = RelayCore(configuration: configuration)
        _ = admit(&core, RelayConnectionID(1), TestIdentities.make(), create: true, at: 0)
        return core
    }

    /// What a fresh joiner on `connection` receives at `now`: its welcome (nil when it is not
    /// welcomed, with the frames it got instead) and the history entries that follow. With
    /// `leaving`, the joiner's connection closes after, so that the same connection can join again.
    func historyOnJoin(_ core: inout RelayCore, on connection: RelayConnectionID, at now: Int64, leaving: Bool = false)
        -> (welcome: RelayWelcomeFrame?, history: [RelayOrderedEntry], frames: [RelayFrame]) {
        let frames = CoreAdmission.frames(admit(&core, connection, TestIdentities.make(), create: false, at: now), to: connection)
        if leaving { _ = core.onClose(connection, at: now) }
        let welcome: RelayWelcomeFrame? = if case let .welcome(welcome)? = frames.first { welcome } else { nil }
        return (welcome, frames.compactMap { if case let .historyEntry(entry) = $0 { entry } else { nil } }, frames)
    }

    /// The proof (or, for a new session, the claim) that answers `nonce`.
    static func answer(nonce: [UInt8], exists: Bool, session: UUID, sessionKey: SigningKeyPair, participant: UUID,
                       identity: SigningKeyPair) -> RelayFrame {
        RelayAuthenticator.answer(nonce: nonce, sessionExists: exists, sessionID: session, sessionKey: sessionKey,
                                  identity: identity, participant: participant)
    }

    /// The frames among `directives` sent to `connection`.
    static func frames(_ directives: [RelayDirective], to connection: RelayConnectionID) -> [RelayFrame] {
        directives.compactMap { if case let .send(id, frame) = $0, id == connection { frame } else { nil } }
    }
}

/// Self-certifying participant identities for tests, each with its key remembered.
enum TestIdentities {
    private static let keys = Mutex<[UUID: SigningKeyPair]>([:])

    /// A fresh identity, certified by a fresh key.
    static func make() -> UUID {
        let key = SigningKeyPair()
        let id = RelayAuthenticator.participantID(for: key.publicKey)
        keys.withLock { $0[id] = key }
        return id
    }

    /// The key of an identity from `make()` (a fresh, unrelated one for any other).
    static func key(of id: UUID) -> SigningKeyPair {
        keys.withLock { $0[id] } ?? SigningKeyPair()
    }

    /// The entry of `id` with its key and `name`.
    static func entry(_ id: UUID, _ name: String) -> RelayParticipantEntry {
        RelayParticipantEntry(id: id, publicKey: key(of: id).publicKey, displayName: name)
    }
}
