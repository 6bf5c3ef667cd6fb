import Foundation
import TandemNet
import TandemWire
import Testing

/// The pure core on virtual time: no sockets, no threads, no waiting.
@Suite("Relay core")
struct RelayCoreTests {
    private let key = [UInt8](repeating: 1, count: 32)
    private let session = UUID()

    private func entropy(_ seed: UInt8) -> [UInt8] { [UInt8](repeating: seed, count: RelayCore.entropyLength) }

    /// Admits `participant` on `connection`, creating the session when asked; returns the
    /// directives of its admission.
    private func admit(_ core: inout RelayCore, _ connection: RelayConnectionID, _ participant: UUID, create: Bool,
                       at now: Int64 = 0) -> [RelayDirective] {
        CoreAdmission(key: key, session: session).admit(&core, connection, participant, create: create, at: now)
    }

    private func frames(_ directives: [RelayDirective], to connection: RelayConnectionID) -> [RelayFrame] {
        CoreAdmission.frames(directives, to: connection)
    }

    @Test("a wrong proof is refused with wrongSecret and nothing else")
    func wrongProof() {
        var core = RelayCore()
        _ = admit(&core, RelayConnectionID(1), TestIdentities.make(), create: true)
        let intruder = RelayConnectionID(2)
        _ = core.onOpen(intruder, entropy: entropy(2), at: 0)
        let mallory = TestIdentities.make()
        _ = core.onFrame(.hello(RelayHello(sessionID: session, participant: TestIdentities.entry(mallory, "m"),
                                           create: false, activity: [], resume: false, received: 0)), from: intruder, at: 0)
        let directives = core.onFrame(.proof(sessionSignature: [UInt8](repeating: 0, count: 64),
                                             participantSignature: [UInt8](repeating: 0, count: 64)), from: intruder, at: 0)
        #expect(frames(directives, to: intruder) == [.refusal(RelayFault(.wrongSecret, session.uuidString))])
        #expect(directives.contains { if case .close(intruder) = $0 { true } else { false } })
        #expect(core.participants(of: session).count == 1)
    }

    @Test("a duplicate sent again after a resumption is dropped; a gap is a violation")
    func sequencing() {
        var core = RelayCore()
        let alice = TestIdentities.make()
        let bob = TestIdentities.make()
        _ = admit(&core, RelayConnectionID(1), alice, create: true)
        _ = admit(&core, RelayConnectionID(2), bob, create: false)
        let message = RelayFrame.message(sequence: 1, recipients: .everyone, reliable: true, body: [1])
        #expect(frames(core.onFrame(message, from: RelayConnectionID(1), at: 1), to: RelayConnectionID(2)).count == 1)
        #expect(core.onFrame(message, from: RelayConnectionID(1), at: 2).isEmpty)
        let gap = core.onFrame(.message(sequence: 5, recipients: .everyone, reliable: true, body: [1]), from: RelayConnectionID(1), at: 3)
        #expect(frames(gap, to: RelayConnectionID(1)).contains { if case .error = $0 { true } else { false } })
        #expect(core.participants(of: session) == [bob])
    }

    @Test("the grace period runs on injected time")
    func gracePeriod() {
        var configuration = RelayCoreConfiguration()
        configuration.gracePeriod = 5_000
        var core = RelayCore(configuration: configuration)
        let alice = TestIdentities.make()
        _ = admit(&core, RelayConnectionID(1), alice, create: true)
        _ = admit(&core, RelayConnectionID(2), TestIdentities.make(), create: false)
        _ = core.onClose(RelayConnectionID(1), at: 1_000)
        #expect(core.onTick(at: 5_999).isEmpty)
        #expect(core.participants(of: session).count == 2)
        let directives = core.onTick(at: 6_000)
        #expect(frames(directives, to: RelayConnectionID(2)) == [.participantLeft(sequence: 1, id: alice)])
        #expect(core.participants(of: session).count == 1)
    }

    @Test("the token bucket passes bursts up to its capacity, then its rate")
    func tokenBucket() {
        var bucket = TokenBucket(rate: 10, capacity: 5, now: 0)
        var passed = 0
        for _ in 0..<5 where bucket.take(1, at: 0) { passed += 1 }
        #expect(passed == 5)
        let sixth = bucket.take(1, at: 0)
        let afterRefill = bucket.take(1, at: 100_000_000)
        let again = bucket.take(1, at: 100_000_000)
        #expect(!sixth)
        #expect(afterRefill, "a tenth of a second at 10 a second earns one token")
        #expect(!again)
    }
}
