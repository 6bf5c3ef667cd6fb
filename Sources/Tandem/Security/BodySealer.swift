import Foundation
import Synchronization
import TandemNet
import TandemWire

/// Signs and seals what this participant sends in a session, and opens and checks what it
/// receives: the seal (XChaCha20-Poly1305 under the key of the epoch the body names), then the signature, the
/// session, the path and kind, the attachment, the retention the relay's header states, the
/// sender the relay names, the recipients and the replay window of the sender on that path, in
/// that order.
///
/// The counters are per session and path and never reused, kept across the link's resumptions
/// because they live here, not in the link. One counter per path (the path is signed), so that
/// each path's replay window sees consecutive numbers: datagrams reordered around many reliable
/// bodies are not taken for replays.
///
/// It holds a key for each epoch it knows (`EpochKeyring`): bodies are sealed under the newest
/// one it was told to seal with (`advance(to:)`), and each body is opened with the key of the
/// epoch it names, so that records sealed before a removal still open after it.
final class BodySealer: Sendable {
    /// What a receiver expects of a body on the path it arrived by.
    struct Expectation: Sendable {
        /// The path it arrived by.
        var path: BodyPath
        /// The kinds that path carries.
        var kinds: Set<BodyKind>
        /// Whom the relay names as its sender (its owner, for an attachment), nil when it names nobody.
        var sender: UUID?
        /// The attachment it must be for, nil when it must be for none.
        var attachment: UUID?
        /// Whether its counter goes through the sender's replay window on this path (not for the
        /// journal, whose entries are kept by id and may be read again).
        var checksReplay: Bool
        /// The retention the relay's header states (`.kept` on every path but the ordered one):
        /// the signed one must be the same, and a snapshot's kind must go with a snapshot's
        /// retention.
        var retention: OrderedRetention = .kept
    }

    private struct WindowKey: Hashable {
        var sender: UUID
        var path: BodyPath
    }

    /// The keys of the epochs this participant knows, and the one it seals with.
    private let keyring: Mutex<EpochKeyring>
    let sessionID: UUID
    /// This participant's own key for the session.
    let identity: SigningKeyPair
    /// This participant's identity, certified by `identity`'s public key.
    let localID: UUID
    private let counters = Mutex<[BodyPath: UInt64]>([:])
    private let windows = Mutex<[WindowKey: ReplayWindow]>([:])

    /// A sealer holding `secret` as the key of `epoch` (an invite's: 0 unless the invite says
    /// otherwise), sealing with it.
    init(secret: SessionSecret, sessionID: UUID, identity: SigningKeyPair, epoch: UInt16 = 0) {
        keyring = Mutex(EpochKeyring(sessionID: sessionID, secret: secret, epoch: epoch))
        self.sessionID = sessionID
        self.identity = identity
        localID = RelayAuthenticator.participantID(for: identity.publicKey)
    }

    /// `payload` signed as a body of `kind` on `path` for `recipients`, kept by the relay by
    /// `retention` (ordered records only), then sealed.
    func seal(_ payload: [UInt8], kind: BodyKind, path: BodyPath, to recipients: Recipients = .everyone,
              attachment: UUID? = nil, retention: OrderedRetention = .kept) -> [UInt8] {
        let listed: [UUID]? = switch recipients {
        case .everyone: nil
        case .only(let ids): ids.sorted { $0.uuidString < $1.uuidString }
        }
        let body = SignedBody(kind: kind, path: path, retention: retention, sessionID: sessionID, sender: localID,
                              senderKey: identity.publicKey, counter: nextCounter(on: path), recipients: listed,
                              attachment: attachment, payload: payload)
        return sealer.seal(body.signed(with: identity))
    }

    /// The sealer of the epoch bodies are sealed under now.
    var sealer: Sealer { keyring.withLock { $0.sealing } }

    /// The epoch bodies are sealed under now.
    var epoch: UInt16 { keyring.withLock { $0.sealing.epoch } }

    /// The secret of `epoch`, nil when this participant does not know it.
    func secret(of epoch: UInt16) -> SessionSecret? { keyring.withLock { $0.secrets[epoch] } }

    /// Every epoch's secret this participant knows.
    var secrets: [UInt16: SessionSecret] { keyring.withLock { $0.secrets } }

    /// Learns `secret` as the key of `epoch` (a key already held for it is replaced only when
    /// `replacing`), without sealing with it yet.
    func learn(_ secret: SessionSecret, epoch: UInt16, replacing: Bool = false) {
        keyring.withLock { $0.learn(secret, epoch: epoch, replacing: replacing) }
    }

    /// Seals with the key of `epoch` from now on, when it is known and newer than the one in use;
    /// whether it is the one in use afterwards.
    @discardableResult
    func advance(to epoch: UInt16) -> Bool {
        keyring.withLock { $0.advance(to: epoch) }
    }

    /// The next counter on `path`: 1, 2, 3, ...
    private func nextCounter(on path: BodyPath) -> UInt64 {
        counters.withLock { counters in
            counters[path, default: 0] += 1
            return counters[path, default: 0]
        }
    }

    /// This participant's presence for the relay to keep and hand to everyone (late joiners
    /// too): its name, signed, on the journal's path (kept, so read again without a window).
    func keptPresence(name: String) -> [UInt8] {
        seal(SessionEnvelope.presence(name: name).encoded, kind: .presence, path: .journal)
    }

    /// The body in `sealed` if it passes every check `expected` asks for, else why not.
    func open(_ sealed: [UInt8], expecting expected: Expectation) -> Result<SignedBody, RejectionReason> {
        verify(sealed, expecting: expected).flatMap { admit($0, expecting: expected) }
    }

    /// Opens `batch` as `open(_:expecting:)` would each in turn, the seals and signatures on
    /// every processor (a joiner's history: a signature is some 50 µs, and a long session's
    /// history is a couple of thousand records), the replay windows in `batch`'s order.
    func open(_ batch: [(sealed: [UInt8], expected: Expectation)]) -> [Result<SignedBody, RejectionReason>] {
        let verified = Mutex([Result<SignedBody, RejectionReason>?](repeating: nil, count: batch.count))
        let chunk = 64
        DispatchQueue.concurrentPerform(iterations: (batch.count + chunk - 1) / chunk) { index in
            let range = index * chunk..<min(batch.count, (index + 1) * chunk)
            let results = range.map { verify(batch[$0].sealed, expecting: batch[$0].expected) }
            verified.withLock { $0.replaceSubrange(range, with: results.map(Optional.some)) }
        }
        return verified.withLock { $0 }.enumerated().map { index, result in
            result!.flatMap { admit($0, expecting: batch[index].expected) }
        }
    }

    /// Every check of `open(_:expecting:)` but the replay window's: no state is read or
    /// changed, so bodies may be verified in parallel (and a joiner's history looked through
    /// for older epochs' keys before it is taken in order).
    func verify(_ sealed: [UInt8], expecting expected: Expectation) -> Result<SignedBody, RejectionReason> {
        guard let epoch = Sealer.epoch(of: sealed) else { return .failure(.malformed) }
        guard let sealer = keyring.withLock({ $0.sealers[epoch] }) else { return .failure(.unknownEpoch) }
        guard let plaintext = sealer.open(sealed) else { return .failure(.malformed) }
        let body: SignedBody
        switch SignedBody.verified(plaintext) {
        case .success(let verified): body = verified
        case .failure(let reason): return .failure(reason)
        }
        guard body.sessionID == sessionID else { return .failure(.wrongSession) }
        guard body.path == expected.path, expected.kinds.contains(body.kind), body.attachment == expected.attachment else {
            return .failure(.wrongKind)
        }
        guard body.retention == expected.retention,
              (body.kind == .playbackSnapshot) == (body.retention.reflectedOrder != nil) else {
            return .failure(.wrongRetention)
        }
        if let sender = expected.sender, sender != body.sender { return .failure(.wrongSender) }
        if let recipients = body.recipients, !recipients.contains(localID) { return .failure(.notRecipient) }
        return .success(body)
    }

    /// `body`, verified, through its sender's replay window on its path when `expected` asks.
    private func admit(_ body: SignedBody, expecting expected: Expectation) -> Result<SignedBody, RejectionReason> {
        if expected.checksReplay {
            let fresh = windows.withLock { $0[WindowKey(sender: body.sender, path: body.path), default: ReplayWindow()].accept(body.counter) }
            guard fresh else { return .failure(.replayed) }
        }
        return .success(body)
    }
}
