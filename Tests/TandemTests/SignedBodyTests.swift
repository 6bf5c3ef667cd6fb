import Foundation
@testable import Tandem
import TandemNet
import TandemTestKit
import TandemWire
import Testing

/// The signed, sealed envelope every body travels in, and the checks a receiver makes: pure,
/// no relay.
@Suite struct SignedBodyTests {
    let secret = SessionSecret()
    let session = UUID()

    func sealer(_ identity: SigningKeyPair = SigningKeyPair(), session: UUID? = nil) -> BodySealer {
        BodySealer(secret: secret, sessionID: session ?? self.session, identity: identity)
    }

    func expect(_ path: BodyPath, _ kinds: Set<BodyKind>, sender: UUID?, attachment: UUID? = nil,
                replay: Bool = true, retention: OrderedRetention = .kept) -> BodySealer.Expectation {
        BodySealer.Expectation(path: path, kinds: kinds, sender: sender, attachment: attachment, checksReplay: replay,
                               retention: retention)
    }

    @Test func theRetentionIsSignedAndAHeaderThatSaysOtherwiseIsRejected() throws {
        let ana = sealer()
        let ben = sealer()
        let kinds: Set<BodyKind> = [.playbackProposal, .playbackSnapshot]
        func ordered(_ retention: OrderedRetention) -> BodySealer.Expectation {
            expect(.ordered, kinds, sender: ana.localID, retention: retention)
        }
        // A kept record relabelled as droppable, a playback record as kept or as a snapshot: each
        // rejected before the replay window sees it, so the honest label still opens after.
        let kept = ana.seal([1], kind: .playbackProposal, path: .ordered)
        #expect(ben.open(kept, expecting: ordered(.playback)).failure == .wrongRetention)
        #expect(ben.open(kept, expecting: ordered(.kept)).success?.retention == .kept)
        let playback = ana.seal([2], kind: .playbackProposal, path: .ordered, retention: .playback)
        #expect(ben.open(playback, expecting: ordered(.kept)).failure == .wrongRetention)
        #expect(ben.open(playback, expecting: ordered(.snapshot(reflecting: 1))).failure == .wrongRetention)
        #expect(ben.open(playback, expecting: ordered(.playback)).success?.retention == .playback)
        // A snapshot whose reflected order was moved, or that was relabelled as a playback record.
        let snapshot = ana.seal([3], kind: .playbackSnapshot, path: .ordered, retention: .snapshot(reflecting: 2))
        #expect(ben.open(snapshot, expecting: ordered(.snapshot(reflecting: 1))).failure == .wrongRetention)
        #expect(ben.open(snapshot, expecting: ordered(.snapshot(reflecting: 3))).failure == .wrongRetention)
        #expect(ben.open(snapshot, expecting: ordered(.playback)).failure == .wrongRetention)
        let opened = try ben.open(snapshot, expecting: ordered(.snapshot(reflecting: 2))).get()
        #expect(opened.kind == .playbackSnapshot && opened.retention == .snapshot(reflecting: 2) && opened.payload == [3])
        // A signer's kind and retention must go together: a snapshot kind kept, a proposal kind as a snapshot.
        let keptSnapshot = ana.seal([4], kind: .playbackSnapshot, path: .ordered)
        #expect(ben.open(keptSnapshot, expecting: ordered(.kept)).failure == .wrongRetention)
        let snapshotProposal = ana.seal([5], kind: .playbackProposal, path: .ordered, retention: .snapshot(reflecting: 1))
        #expect(ben.open(snapshotProposal, expecting: ordered(.snapshot(reflecting: 1))).failure == .wrongRetention)
        // On other paths only `kept` is expected: a message signed as droppable is not taken.
        let message = ana.seal([6], kind: .message, path: .reliable, retention: .playback)
        #expect(ben.open(message, expecting: expect(.reliable, [.message], sender: ana.localID)).failure == .wrongRetention)
    }

    @Test func theEnvelopeOfFormatOneIsRefused() throws {
        let ana = sealer()
        let ben = sealer()
        var plaintext = try #require(ana.sealer.open(ana.seal([1], kind: .message, path: .reliable)))
        #expect(plaintext.first == 2, "format 2 carries the retention")
        plaintext[0] = 1
        #expect(ben.open(ana.sealer.seal(plaintext), expecting: expect(.reliable, [.message], sender: ana.localID)).failure == .malformed)
        // The retention byte names nothing: malformed (before the signature is even checked).
        var unknown = try #require(ana.sealer.open(ana.seal([1], kind: .message, path: .reliable)))
        unknown[4] = 9
        #expect(ben.open(ana.sealer.seal(unknown), expecting: expect(.reliable, [.message], sender: ana.localID)).failure == .malformed)
    }

    @Test func aSignedBodyOpensWithEverythingItWasSignedWith() throws {
        let ana = sealer()
        let ben = sealer()
        let sealed = ana.seal(Array("hello".utf8), kind: .message, path: .reliable, to: .only([ben.localID, UUID()]))
        let body = try ben.open(sealed, expecting: expect(.reliable, [.message], sender: ana.localID)).get()
        #expect(body.payload == Array("hello".utf8))
        #expect(body.sender == ana.localID && body.senderKey == ana.identity.publicKey)
        #expect(body.sessionID == session && body.kind == .message && body.path == .reliable)
        #expect(body.counter == 1)
        #expect(body.recipients?.contains(ben.localID) == true)
        #expect(body.recipients == body.recipients?.sorted { $0.uuidString < $1.uuidString }, "recipients are signed sorted")
        #expect(RelayAuthenticator.isIdentity(ana.localID, of: ana.identity.publicKey), "identities are self-certifying")
        let next = ana.seal([], kind: .presence, path: .reliable)
        #expect(try ben.open(next, expecting: expect(.reliable, [.presence], sender: ana.localID)).get().counter == 2)
    }

    @Test func everyByteTamperedIsRejectedNeverAccepted() throws {
        let ana = sealer()
        let ben = sealer()
        let attachment = UUID()
        let sealed = ana.seal([1, 2, 3, 4], kind: .attachmentMetadata, path: .journal, to: .only([ben.localID]), attachment: attachment)
        let plaintext = try #require(ana.sealer.open(sealed))
        var reasons: Set<RejectionReason> = []
        for index in plaintext.indices {
            for flip: UInt8 in [0x01, 0x80] {
                var tampered = plaintext
                tampered[index] ^= flip
                let resealed = ana.sealer.seal(tampered)
                switch ben.open(resealed, expecting: expect(.journal, [.attachmentMetadata], sender: ana.localID,
                                                             attachment: attachment, replay: false)) {
                case .success:
                    Issue.record("byte \(index) flipped by \(flip) was accepted")
                case .failure(let reason):
                    reasons.insert(reason)
                }
            }
        }
        #expect(reasons.isSubset(of: [.malformed, .badSignature, .forgedIdentity]))
        #expect(reasons.contains(.badSignature) && reasons.contains(.forgedIdentity))
        // Untouched, it opens.
        #expect(throws: Never.self) {
            try ben.open(sealed, expecting: expect(.journal, [.attachmentMetadata], sender: ana.localID, attachment: attachment, replay: false)).get()
        }
    }

    @Test func aBodySignedByAnotherKeyUnderTheSameIdentityIsForged() throws {
        let ana = sealer()
        let mallory = SigningKeyPair()
        var body = SignedBody(kind: .message, path: .reliable, sessionID: session, sender: ana.localID,
                              senderKey: ana.identity.publicKey, counter: 1, recipients: nil, attachment: nil, payload: [7])
        // Mallory signs with her key but names Ana and Ana's key: the signature fails.
        #expect(SignedBody.verified(body.signed(with: mallory)).failure == .badSignature)
        // Mallory names Ana with her own key: the identity is not the key's.
        body.senderKey = mallory.publicKey
        #expect(SignedBody.verified(body.signed(with: mallory)).failure == .forgedIdentity)
    }

    @Test func wrongRecipientsKindPathSenderAttachmentAndSessionAreRejected() throws {
        let ana = sealer()
        let ben = sealer()
        let carl = sealer()
        let toCarl = ana.seal([1], kind: .message, path: .reliable, to: .only([carl.localID]))
        #expect(ben.open(toCarl, expecting: expect(.reliable, [.message], sender: ana.localID)).failure == .notRecipient)
        #expect(carl.open(toCarl, expecting: expect(.reliable, [.message], sender: ana.localID)).success != nil)

        let message = ana.seal([2], kind: .message, path: .reliable)
        #expect(ben.open(message, expecting: expect(.ordered, [.playbackProposal], sender: ana.localID)).failure == .wrongKind)
        #expect(ben.open(message, expecting: expect(.reliable, [.presence], sender: ana.localID)).failure == .wrongKind)
        #expect(ben.open(message, expecting: expect(.unreliable, [.message], sender: ana.localID)).failure == .wrongKind)
        #expect(ben.open(message, expecting: expect(.reliable, [.message], sender: carl.localID)).failure == .wrongSender)

        let data = ana.seal([3], kind: .attachmentData, path: .journal, attachment: UUID())
        #expect(ben.open(data, expecting: expect(.journal, [.attachmentData], sender: ana.localID, attachment: UUID(), replay: false))
            .failure == .wrongKind)
        #expect(ben.open(data, expecting: expect(.journal, [.attachmentData], sender: ana.localID, attachment: nil, replay: false))
            .failure == .wrongKind)

        // Signed for another session but sealed for this one (by someone holding the secret).
        let other = sealer(session: UUID())
        let body = SignedBody(kind: .message, path: .reliable, sessionID: other.sessionID, sender: other.localID,
                              senderKey: other.identity.publicKey, counter: 1, recipients: nil, attachment: nil, payload: [])
        let crossed = ben.sealer.seal(body.signed(with: other.identity))
        #expect(ben.open(crossed, expecting: expect(.reliable, [.message], sender: other.localID)).failure == .wrongSession)
        // Sealed for another session: it does not even open.
        #expect(ben.open(other.seal([], kind: .message, path: .reliable), expecting: expect(.reliable, [.message], sender: nil))
            .failure == .malformed)
        #expect(ben.open([1, 2, 3], expecting: expect(.reliable, [.message], sender: nil)).failure == .malformed)
    }

    @Test func aReplayIsRejectedOncePerPathAndTheJournalIsNotWindowed() throws {
        let ana = sealer()
        let ben = sealer()
        let proposal = ana.seal([9], kind: .playbackProposal, path: .ordered)
        let ordered = expect(.ordered, [.playbackProposal], sender: ana.localID)
        #expect(ben.open(proposal, expecting: ordered).success != nil)
        #expect(ben.open(proposal, expecting: ordered).failure == .replayed)
        // Another sender's window is its own.
        let carl = sealer()
        #expect(ben.open(carl.seal([9], kind: .playbackProposal, path: .ordered), expecting: expect(.ordered, [.playbackProposal], sender: carl.localID)).success != nil)
        // The journal is kept by id and read again on every load.
        let id = UUID()
        let data = ana.seal([1], kind: .attachmentData, path: .journal, attachment: id)
        let journal = expect(.journal, [.attachmentData], sender: ana.localID, attachment: id, replay: false)
        #expect(ben.open(data, expecting: journal).success != nil)
        #expect(ben.open(data, expecting: journal).success != nil)
    }

    @Test func aBatchOpensAsEachInTurnWouldAcrossChunksReplaysIncluded() throws {
        let ana = sealer()
        let ben = sealer()
        let carl = sealer()
        let ordered = expect(.ordered, [.playbackProposal], sender: ana.localID)
        // Three chunks' worth (the batch verifies 64 at a time), with a replay of a body from the
        // first chunk in the third, a body the relay attributes to another sender, a tampered
        // one, and one sealed for another session.
        var batch: [(sealed: [UInt8], expected: BodySealer.Expectation)] = (0..<150).map { index in
            (ana.seal([UInt8(index % 256)], kind: .playbackProposal, path: .ordered), ordered)
        }
        batch.append((batch[3].sealed, ordered))
        batch.append((ana.seal([1], kind: .playbackProposal, path: .ordered), expect(.ordered, [.playbackProposal], sender: carl.localID)))
        var tampered = ana.seal([2], kind: .playbackProposal, path: .ordered)
        tampered[tampered.count / 2] ^= 1
        batch.append((tampered, ordered))
        batch.append((sealer(session: UUID()).seal([3], kind: .playbackProposal, path: .ordered), ordered))
        let together = ben.open(batch)
        // Another receiver opening each in turn gets the same outcomes.
        let alone = sealer()
        let inTurn = batch.map { alone.open($0.sealed, expecting: $0.expected) }
        #expect(together.map(\.failure) == inTurn.map(\.failure))
        #expect(together.map { $0.success?.payload } == inTurn.map { $0.success?.payload })
        #expect(together.prefix(150).allSatisfy { $0.success != nil })
        #expect(together.suffix(4).map(\.failure) == [.replayed, .wrongSender, .malformed, .malformed])
        // The windows moved as for each in turn: the batch's bodies are replays now.
        #expect(ben.open(batch[0].sealed, expecting: ordered).failure == .replayed)
        #expect(ben.open([]).isEmpty)
    }

    @Test func theReplayWindowsEdges() {
        var window = ReplayWindow()
        // Each counter offered in turn, and whether it must pass.
        let steps: [(UInt64, Bool, String)] = [
            (0, false, "0 is never a counter"),
            (1, true, "the first"), (1, false, "a replay"),
            (3, true, "a gap is fine"), (2, true, "a little out of order passes once"), (2, false, "but once"),
            (100, true, "a jump"), (37, true, "the oldest the window remembers: 100 - 63"), (37, false, "once"),
            (36, false, "older than the window"), (3, false, "accepted before, and now older than the window"),
            (164, true, "a jump of exactly the width clears the map"), (100, false, "out of the window now"),
            (101, true, "inside the window, unseen"),
            (.max, true, "the largest counter"), (.max, false, "once"), (.max - 63, true, "the window's edge below it"),
            (.max - 64, false, "just outside"),
        ]
        for (counter, passes, why) in steps {
            #expect(window.accept(counter) == passes, "\(counter): \(why)")
        }
    }

    @Test func eachPathCountsOnItsOwnAcrossManyBodies() throws {
        let ana = sealer()
        let ben = sealer()
        var counters: [BodyPath: [UInt64]] = [:]
        for index in 0..<130 {
            let path: BodyPath = index % 2 == 0 ? .reliable : .ordered
            let kind: BodyKind = path == .ordered ? .playbackProposal : .message
            let body = try ben.open(ana.seal([UInt8(index)], kind: kind, path: path), expecting: expect(path, [kind], sender: ana.localID)).get()
            counters[path, default: []].append(body.counter)
        }
        // Consecutive on each path, so that each path's window of 64 sees no gaps from the other.
        #expect(counters[.reliable] == Array(1...65))
        #expect(counters[.ordered] == Array(1...65))
    }

    @Test func unreliableBodiesReorderedAroundManyReliableOnesAreNotReplays() throws {
        let ana = sealer()
        let ben = sealer()
        let late = ana.seal([0], kind: .message, path: .unreliable)
        for index in 0..<100 {
            _ = try ben.open(ana.seal([UInt8(index)], kind: .message, path: .reliable), expecting: expect(.reliable, [.message], sender: ana.localID)).get()
        }
        let early = ana.seal([1], kind: .message, path: .unreliable)
        #expect(throws: Never.self) { try ben.open(early, expecting: expect(.unreliable, [.message], sender: ana.localID)).get() }
        #expect(throws: Never.self) { try ben.open(late, expecting: expect(.unreliable, [.message], sender: ana.localID)).get() }
        // A real replay still is one.
        #expect(throws: (any Error).self) { try ben.open(late, expecting: expect(.unreliable, [.message], sender: ana.localID)).get() }
    }

    @Test func fuzzSignedBodiesNeverTrapAndNeverPassMutated() throws {
        let ana = sealer()
        var random = SeededRandom(seed: 0x51_6E_ED)
        let samples = [
            ana.seal([], kind: .message, path: .reliable),
            ana.seal(Array(repeating: 7, count: 300), kind: .attachmentData, path: .journal, attachment: UUID()),
            ana.seal([1], kind: .presence, path: .reliable, to: .only([UUID(), UUID(), UUID()])),
        ].map { try! #require(ana.sealer.open($0)) }
        var accepted = 0
        for iteration in 0..<3_000 {
            var bytes = samples[iteration % samples.count]
            for _ in 0..<Int(random.next() % 3) + 1 {
                switch random.next() % 3 {
                case 0: bytes[Int(random.next() % UInt64(bytes.count))] ^= UInt8(truncatingIfNeeded: random.next() | 1)
                case 1 where bytes.count > 1: bytes.removeLast(Int(random.next() % UInt64(bytes.count - 1)) + 1)
                default: bytes += (0..<Int(random.next() % 8) + 1).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                }
            }
            // Mutations may cancel out (the same byte flipped twice): only a changed body must fail.
            if bytes != samples[iteration % samples.count], case .success = SignedBody.verified(bytes) { accepted += 1 }
        }
        #expect(accepted == 0)
        for sample in samples { #expect(SignedBody.verified(sample).success != nil) }
    }
}

extension Result {
    var success: Success? { if case .success(let value) = self { value } else { nil } }
    var failure: Failure? { if case .failure(let error) = self { error } else { nil } }
}
