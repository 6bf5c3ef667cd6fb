import Foundation
@testable import TandemNet
import TandemWire
import Testing

/// A relay with a creation key (the relay `tandem host` runs for itself) creates sessions only
/// for a hello proving that key; joins and resumptions need none. Pure core, virtual time.
@Suite("Relay creation key")
struct CreationKeyTests {
    private let admission = CoreAdmission(key: [UInt8](repeating: 7, count: 32), session: UUID())
    private let key = RelayCreationKey.generate()

    private var keyed: RelayCoreConfiguration {
        var configuration = RelayCoreConfiguration()
        configuration.creationKey = key
        return configuration
    }

    private func refusal(_ directives: [RelayDirective], to connection: RelayConnectionID) -> RelayFault? {
        for frame in CoreAdmission.frames(directives, to: connection) { if case let .refusal(fault) = frame { return fault } }
        return nil
    }

    private func welcomed(_ directives: [RelayDirective], _ connection: RelayConnectionID) -> Bool {
        CoreAdmission.frames(directives, to: connection).contains { if case .welcome = $0 { true } else { false } }
    }

    @Test("a creation without the proof is refused with a clear fault, and nothing is created")
    func withoutProof() {
        var core = RelayCore(configuration: keyed)
        let stranger = RelayConnectionID(1)
        let refused = admission.admit(&core, stranger, TestIdentities.make(), create: true, at: 0)
        let fault = refusal(refused, to: stranger)
        #expect(fault?.code == .creationRefused)
        #expect(fault?.text == "this relay creates sessions only for its own host (the hello proves no creation key)")
        #expect(core.participants(of: admission.session).isEmpty)
        #expect(RelayLinkCore.error(fault!).description.hasPrefix("the relay refused to create the session: "))
    }

    @Test("a proof with another key, or for another participant, is refused")
    func wrongProof() {
        var core = RelayCore(configuration: keyed)
        let other = admission.admit(&core, RelayConnectionID(1), TestIdentities.make(), create: true, at: 0,
                                    creationKey: RelayCreationKey.generate())
        #expect(refusal(other, to: RelayConnectionID(1))?.text == "this relay creates sessions only for its own host (the hello's creation proof does not match)")
        // A proof copied off the wire names its participant: another identity cannot use it.
        let ana = TestIdentities.make()
        let mallory = TestIdentities.make()
        let copied = RelayCreationKey.proof(key: key, sessionID: admission.session, participantID: ana,
                                            participantKey: TestIdentities.key(of: ana).publicKey)
        let hello = RelayHello(sessionID: admission.session, participant: TestIdentities.entry(mallory, "m"), create: true,
                               activity: [], resume: false, received: 0, creationProof: copied)
        _ = core.onOpen(RelayConnectionID(2), entropy: [UInt8](repeating: 2, count: RelayCore.entropyLength), at: 0)
        #expect(refusal(core.onFrame(.hello(hello), from: RelayConnectionID(2), at: 0), to: RelayConnectionID(2))?.code == .creationRefused)
        #expect(core.participants(of: admission.session).isEmpty)
    }

    @Test("with the proof the session is created; joins without it are admitted, and a relay without a key asks for none")
    func withProof() {
        var core = RelayCore(configuration: keyed)
        let host = TestIdentities.make()
        let guest = TestIdentities.make()
        #expect(welcomed(admission.admit(&core, RelayConnectionID(1), host, create: true, at: 0, creationKey: key), RelayConnectionID(1)))
        #expect(welcomed(admission.admit(&core, RelayConnectionID(2), guest, create: false, at: 0), RelayConnectionID(2)))
        // A joiner whose hello says create, for a session that exists, needs no key either.
        let late = TestIdentities.make()
        #expect(welcomed(admission.admit(&core, RelayConnectionID(3), late, create: true, at: 0), RelayConnectionID(3)))
        #expect(core.participants(of: admission.session) == [host, guest, late])

        var open = RelayCore()
        #expect(welcomed(admission.admit(&open, RelayConnectionID(1), TestIdentities.make(), create: true, at: 0), RelayConnectionID(1)))
    }

    @Test("the proof travels after the hello's other fields, only when given")
    func wire() throws {
        let ana = TestIdentities.make()
        var hello = RelayHello(sessionID: admission.session, participant: TestIdentities.entry(ana, "ana"), create: true,
                               activity: [1, 2], resume: false, received: 0)
        let plain = RelayFrame.hello(hello).encoded()
        hello.creationProof = RelayCreationKey.proof(key: key, sessionID: admission.session, participantID: ana,
                                                     participantKey: TestIdentities.key(of: ana).publicKey)
        let proven = RelayFrame.hello(hello).encoded()
        #expect(proven.count == plain.count + RelayWireLimits.creationProofLength)
        #expect(try RelayFrame.decode(plain.dropFirst(4)) == .hello(RelayHello(sessionID: admission.session, participant: TestIdentities.entry(ana, "ana"),
                                                                                create: true, activity: [1, 2], resume: false, received: 0)))
        #expect(try RelayFrame.decode(proven.dropFirst(4)) == .hello(hello))
        // A cut proof is a defect (bytes left over), not a missing one.
        #expect(throws: WireError.self) { try RelayFrame.decode(proven.dropFirst(4).dropLast(1)) }
    }
}
