import Foundation
import TandemNet
import TandemWire
import Testing

/// A removal as the relay's pure core enforces it: an operator's signed epoch statement alone is
/// taken (the creator's here); the one removed is dropped and refused; joiners are admitted by the
/// new verifier alone, and those still present resume with the old.
@Suite("Relay epochs")
struct RelayEpochTests {
    private let old = CoreAdmission(key: [UInt8](repeating: 1, count: 32), session: UUID())
    private var new: CoreAdmission { CoreAdmission(key: [UInt8](repeating: 2, count: 32), session: old.session) }

    /// `change` signed by `id` under `counter`, in an `authority` frame numbered `sequence`.
    private func statement(_ change: RelayAuthority.Change, by id: UUID, counter: UInt64, sequence: UInt64) -> RelayFrame {
        .authority(sequence: sequence, RelayAuthority.signed(change, session: old.session, counter: counter, by: TestIdentities.key(of: id)))
    }

    private func welcomed(_ directives: [RelayDirective], on connection: RelayConnectionID) -> Bool {
        if case .welcome? = CoreAdmission.frames(directives, to: connection).first { true } else { false }
    }

    private func refusal(_ directives: [RelayDirective], on connection: RelayConnectionID) -> RelayFaultCode? {
        if case let .refusal(fault)? = CoreAdmission.frames(directives, to: connection).first { fault.code } else { nil }
    }

    @Test("the creator's epoch frame drops and refuses the one removed, and the old invite stops admitting")
    func creatorRemoves() {
        var core = RelayCore()
        let (ana, ben, cy) = (TestIdentities.make(), TestIdentities.make(), TestIdentities.make())
        _ = old.admit(&core, RelayConnectionID(1), ana, create: true, at: 0)
        _ = old.admit(&core, RelayConnectionID(2), ben, create: false, at: 0)
        _ = old.admit(&core, RelayConnectionID(3), cy, create: false, at: 0)
        let verifier = new.sessionKey.publicKey

        // Ben, no creator, cannot move the session: nothing changes.
        #expect(core.onFrame(statement(.epoch(1, verifier: verifier, removed: ana), by: ben, counter: 1, sequence: 1),
                             from: RelayConnectionID(2), at: 1).isEmpty)
        #expect(core.participants(of: old.session) == [ana, ben, cy])
        #expect(welcomed(old.admit(&core, RelayConnectionID(4), TestIdentities.make(), create: false, at: 1), on: RelayConnectionID(4)))

        // Ana, the creator, removes Ben.
        let directives = core.onFrame(statement(.epoch(1, verifier: verifier, removed: ben), by: ana, counter: 1, sequence: 1),
                                      from: RelayConnectionID(1), at: 2)
        let toBen = CoreAdmission.frames(directives, to: RelayConnectionID(2))
        #expect(toBen.contains { if case let .error(fault) = $0 { fault.code == .removed } else { false } })
        #expect(directives.contains { if case .close(RelayConnectionID(2)) = $0 { true } else { false } })
        #expect(CoreAdmission.frames(directives, to: RelayConnectionID(3)).contains { if case .participantLeft(_, ben) = $0 { true } else { false } })
        #expect(!core.participants(of: old.session).contains(ben))

        // Ben's identity is refused, even resuming; a joiner with the old secret is refused, one
        // with the new admitted.
        #expect(refusal(old.admit(&core, RelayConnectionID(5), ben, create: false, resume: true, at: 3), on: RelayConnectionID(5)) == .removed)
        #expect(refusal(new.admit(&core, RelayConnectionID(6), ben, create: false, at: 3), on: RelayConnectionID(6)) == .removed)
        #expect(refusal(old.admit(&core, RelayConnectionID(7), TestIdentities.make(), create: false, at: 3), on: RelayConnectionID(7)) == .wrongSecret)
        #expect(welcomed(new.admit(&core, RelayConnectionID(8), TestIdentities.make(), create: false, at: 3), on: RelayConnectionID(8)))

        // Cy, still here, resumes after a drop with the proof of the epoch it joined in.
        _ = core.onClose(RelayConnectionID(3), at: 4)
        #expect(welcomed(old.admit(&core, RelayConnectionID(9), cy, create: false, resume: true, at: 5), on: RelayConnectionID(9)))

        // A repeat of the change, or one that skips an epoch, changes nothing.
        let third = CoreAdmission(key: [UInt8](repeating: 3, count: 32), session: old.session)
        _ = core.onFrame(statement(.epoch(1, verifier: third.sessionKey.publicKey, removed: nil), by: ana, counter: 2, sequence: 2),
                         from: RelayConnectionID(1), at: 6)
        _ = core.onFrame(statement(.epoch(3, verifier: third.sessionKey.publicKey, removed: nil), by: ana, counter: 3, sequence: 3),
                         from: RelayConnectionID(1), at: 6)
        #expect(refusal(third.admit(&core, RelayConnectionID(10), TestIdentities.make(), create: false, at: 7), on: RelayConnectionID(10)) == .wrongSecret)
        #expect(welcomed(new.admit(&core, RelayConnectionID(11), TestIdentities.make(), create: false, at: 7), on: RelayConnectionID(11)))
    }

    @Test("an authority frame round-trips on the wire, each change, and its signature covers every field")
    func wire() throws {
        let key = SigningKeyPair()
        let changes: [RelayAuthority.Change] = [
            .grant(publicKey: SigningKeyPair().publicKey), .revoke(publicKey: SigningKeyPair().publicKey), .claim,
            .epoch(4, verifier: [UInt8](repeating: 9, count: 32), removed: UUID()), .epoch(5, verifier: [UInt8](repeating: 8, count: 32), removed: nil),
        ]
        for change in changes {
            let signed = RelayAuthority.signed(change, session: old.session, counter: 7, by: key)
            let frame = RelayFrame.authority(sequence: 3, signed)
            var reader = RelayFrameReader()
            reader.append(frame.encoded())
            #expect(try reader.next() == frame)
            #expect(SigningKeyPair.verify(signed.signature, of: signed.signedBytes, publicKey: key.publicKey))
            var moved = signed
            moved.counter = 8
            #expect(!SigningKeyPair.verify(moved.signature, of: moved.signedBytes, publicKey: key.publicKey))
        }
        // An unknown change is a wire error, not a trap.
        var bytes = RelayFrame.authority(sequence: 3, RelayAuthority.signed(.claim, session: old.session, counter: 1, by: key)).encoded()
        bytes[4 + 2 + 8] = 9
        var reader = RelayFrameReader()
        reader.append(bytes)
        #expect(throws: WireError.self) { try reader.next() }
    }
}
