import Foundation
import TandemNet
import TandemWire
import Testing

/// Issue 15, item 2: a connection its peer closed (a process that exited or was killed) is given
/// the short grace period; one that went silent keeps the long one. Pure core, virtual instants.
@Suite("Relay core: grace by how a connection closed")
struct PeerClosedGraceTests {
    private let key = [UInt8](repeating: 3, count: 32)
    private let session = UUID()
    private let second: Int64 = 1_000_000_000

    private func admit(_ core: inout RelayCore, _ connection: RelayConnectionID, _ participant: UUID, create: Bool,
                       at now: Int64 = 0) {
        _ = CoreAdmission(key: key, session: session).admit(&core, connection, participant, create: create, at: now)
    }

    private func left(_ directives: [RelayDirective], to connection: RelayConnectionID) -> [UUID] {
        CoreAdmission.frames(directives, to: connection).compactMap {
            if case let .participantLeft(_, id) = $0 { id } else { nil }
        }
    }

    @Test("closed by its peer: departed 3 s later, not a nanosecond before")
    func closedByPeer() {
        var core = RelayCore()
        let alice = TestIdentities.make()
        admit(&core, RelayConnectionID(1), alice, create: true)
        admit(&core, RelayConnectionID(2), TestIdentities.make(), create: false)
        _ = core.onClose(RelayConnectionID(1), at: 10 * second, byPeer: true)
        #expect(left(core.onTick(at: 13 * second - 1), to: RelayConnectionID(2)).isEmpty)
        #expect(core.participants(of: session).count == 2)
        #expect(left(core.onTick(at: 13 * second), to: RelayConnectionID(2)) == [alice])
        #expect(core.participants(of: session).count == 1)
    }

    @Test("a silent connection timed out keeps the long grace period")
    func silentKeepsLongGrace() {
        var configuration = RelayCoreConfiguration()
        configuration.idleTimeout = 2 * second
        configuration.roundTripProbeInterval = 1_000 * second
        configuration.acknowledgementInterval = 1_000 * second
        var core = RelayCore(configuration: configuration)
        let alice = TestIdentities.make()
        let bob = TestIdentities.make()
        admit(&core, RelayConnectionID(1), alice, create: true)
        admit(&core, RelayConnectionID(2), bob, create: false)
        // Bob keeps talking; Alice says nothing past the idle timeout: the relay closes her.
        _ = core.onFrame(.pong(1), from: RelayConnectionID(2), at: 2 * second)
        let closing = core.onTick(at: 2 * second + 1)
        #expect(closing.contains { if case .close(RelayConnectionID(1)) = $0 { true } else { false } })
        _ = core.onFrame(.pong(2), from: RelayConnectionID(2), at: 4 * second)
        // 3 s after the close she is still there (a closed-by-peer one would be gone) …
        #expect(left(core.onTick(at: 5 * second + 1), to: RelayConnectionID(2)).isEmpty)
        #expect(core.participants(of: session).contains(alice))
        _ = core.onFrame(.pong(3), from: RelayConnectionID(2), at: 2 * second + configuration.gracePeriod)
        // … and departs at the long grace period's end.
        #expect(left(core.onTick(at: 2 * second + 1 + configuration.gracePeriod), to: RelayConnectionID(2)) == [alice])
    }

    @Test("the short grace never exceeds a shorter configured grace period")
    func neverLonger() {
        var configuration = RelayCoreConfiguration()
        configuration.gracePeriod = second
        var core = RelayCore(configuration: configuration)
        let alice = TestIdentities.make()
        admit(&core, RelayConnectionID(1), alice, create: true)
        admit(&core, RelayConnectionID(2), TestIdentities.make(), create: false)
        _ = core.onClose(RelayConnectionID(1), at: 0, byPeer: true)
        #expect(left(core.onTick(at: second), to: RelayConnectionID(2)) == [alice])
    }
}
