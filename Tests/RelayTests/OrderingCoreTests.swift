import Foundation
import TandemNet
import TandemWire
import Testing

/// Ordering in the pure core on virtual time: numbers, stamps, and the lead following the round
/// trips the relay measures.
@Suite("Relay core ordering")
struct OrderingCoreTests {
    private let key = [UInt8](repeating: 1, count: 32)
    private let session = UUID()
    private static let millisecond: Int64 = 1_000_000

    /// Admits `participant` on `connection`, creating the session when asked; returns the
    /// directives of its admission.
    private func admit(_ core: inout RelayCore, _ connection: RelayConnectionID, _ participant: UUID, create: Bool,
                       at now: Int64) -> [RelayDirective] {
        CoreAdmission(key: key, session: session).admit(&core, connection, participant, create: create, at: now)
    }

    private func frames(_ directives: [RelayDirective], to connection: RelayConnectionID) -> [RelayFrame] {
        CoreAdmission.frames(directives, to: connection)
    }

    /// The value of the ping the relay sent `connection` among `directives`.
    private func ping(_ directives: [RelayDirective], to connection: RelayConnectionID) throws -> UInt64 {
        let values = frames(directives, to: connection).compactMap { if case let .ping(value) = $0 { value } else { nil } }
        return try #require(values.last, "the relay pinged \(connection)")
    }

    /// The ordered entries sent to `connection` among `directives`.
    private func ordered(_ directives: [RelayDirective], to connection: RelayConnectionID) -> [RelayOrderedEntry] {
        frames(directives, to: connection).compactMap { if case let .ordered(_, entry) = $0 { entry } else { nil } }
    }

    @Test("the lead follows the slowest connected round trip, within minimumLead and maximumLead")
    func leadFollowsRoundTrips() throws {
        let ms = OrderingCoreTests.millisecond
        // Every connection is measured every roundTripProbeInterval here, busy or not, as the
        // schedule below assumes.
        var busyMeasured = RelayCoreConfiguration()
        busyMeasured.busyRoundTripProbeInterval = busyMeasured.roundTripProbeInterval
        var core = RelayCore(configuration: busyMeasured)
        let configuration = core.configuration
        #expect(configuration.orderingMargin == 20 * ms)
        #expect(configuration.minimumLead == 30 * ms)
        #expect(configuration.maximumLead == 1_000 * ms)
        let alice = TestIdentities.make()
        let bob = TestIdentities.make()
        let one = RelayConnectionID(1)
        let two = RelayConnectionID(2)
        let alicePing = try ping(admit(&core, one, alice, create: true, at: 0), to: one)
        let bobPing = try ping(admit(&core, two, bob, create: false, at: 0), to: two)
        #expect(alicePing == 0 && bobPing == 0, "a ping carries the relay's clock")

        // Nothing measured yet: the minimum lead and the margin.
        #expect(core.orderingLead(in: session) == 50 * ms)
        var directives = core.onFrame(.proposal(sequence: 1, body: [1]), from: one, at: 1 * ms)
        let first = try #require(ordered(directives, to: one).first)
        #expect(ordered(directives, to: two) == [first], "everyone, the proposer included, gets it")
        #expect(first == RelayOrderedEntry(sender: alice, order: 1, orderedAt: 1 * ms, effectiveAt: 51 * ms, body: [1]))

        // Round trips of 5 ms and 70 ms: the slower one and the margin.
        _ = core.onFrame(.pong(alicePing), from: one, at: 5 * ms)
        _ = core.onFrame(.pong(bobPing), from: two, at: 70 * ms)
        #expect(core.roundTrip(of: alice, in: session) == 5 * ms)
        #expect(core.roundTrip(of: bob, in: session) == 70 * ms)
        #expect(core.orderingLead(in: session) == 90 * ms)
        directives = core.onFrame(.proposal(sequence: 1, body: [2]), from: two, at: 100 * ms)
        #expect(ordered(directives, to: one).map(\.effectiveInstant.nanoseconds) == [190 * ms])
        #expect(ordered(directives, to: one).map(\.order) == [2])

        // A pong that echoes no ping of the relay's (a forged one, or an answer to an old ping) is ignored.
        _ = core.onFrame(.pong(UInt64(bitPattern: 3 * ms)), from: one, at: 900 * ms)
        #expect(core.roundTrip(of: alice, in: session) == 5 * ms)

        // The relay probes again every roundTripProbeInterval; bob answers after 3 s: the maximum lead.
        let tick = core.onTick(at: 1_000 * ms)
        let alicePing2 = try ping(tick, to: one)
        let bobPing2 = try ping(tick, to: two)
        #expect(alicePing2 == UInt64(bitPattern: 1_000 * ms))
        _ = core.onFrame(.pong(alicePing2), from: one, at: 1_004 * ms)
        _ = core.onFrame(.pong(bobPing2), from: two, at: 4_000 * ms)
        #expect(core.roundTrip(of: bob, in: session) == 3_000 * ms)
        #expect(core.orderingLead(in: session) == 1_000 * ms)
        directives = core.onFrame(.proposal(sequence: 2, body: [3]), from: one, at: 4_000 * ms)
        let clamped = try #require(ordered(directives, to: two).first)
        #expect(clamped.effectiveInstant.nanoseconds == 5_000 * ms)

        // Bob gets fast (1 ms): 4 + 20 ms is under the minimum lead, so the minimum holds; and an
        // effective time never precedes the previous one.
        let bobPing3 = try ping(core.onTick(at: 5_000 * ms), to: two)
        _ = core.onFrame(.pong(bobPing3), from: two, at: 5_001 * ms)
        #expect(core.roundTrip(of: bob, in: session) == 1 * ms)
        #expect(core.orderingLead(in: session) == 30 * ms)
        directives = core.onFrame(.proposal(sequence: 3, body: [4]), from: one, at: 4_500 * ms)
        #expect(ordered(directives, to: one).map(\.effectiveInstant.nanoseconds) == [5_000 * ms], "not before the previous one")
        directives = core.onFrame(.proposal(sequence: 4, body: [5]), from: one, at: 6_000 * ms)
        #expect(ordered(directives, to: one).map(\.effectiveInstant.nanoseconds) == [6_030 * ms])

        // A disconnected participant's round trip no longer counts.
        let alicePing3 = try ping(core.onTick(at: 6_000 * ms), to: one)
        _ = core.onFrame(.pong(alicePing3), from: one, at: 6_200 * ms)
        #expect(core.orderingLead(in: session) == 220 * ms)
        _ = core.onClose(one, at: 6_300 * ms)
        #expect(core.orderingLead(in: session) == 30 * ms)
        #expect(core.orderedHistoryCount(of: session) == 5)
    }

    @Test("the history is bounded by count and by bytes, dropping the oldest; a joiner gets it after its welcome")
    func historyBounds() throws {
        var configuration = RelayCoreConfiguration()
        configuration.maximumOrderedHistory = 3
        configuration.maximumOrderedHistoryBytes = 10
        var core = RelayCore(configuration: configuration)
        let one = RelayConnectionID(1)
        _ = admit(&core, one, TestIdentities.make(), create: true, at: 0)
        for sequence in 1...5 {
            _ = core.onFrame(.proposal(sequence: UInt64(sequence), body: [UInt8(sequence)]), from: one, at: Int64(sequence))
        }
        #expect(core.orderedHistoryCount(of: session) == 3)
        _ = core.onFrame(.proposal(sequence: 6, body: [UInt8](repeating: 6, count: 9)), from: one, at: 6)
        #expect(core.orderedHistoryCount(of: session) == 2, "9 + 1 bytes fit, 9 + 1 + 1 do not")

        let two = RelayConnectionID(2)
        let welcome = frames(admit(&core, two, TestIdentities.make(), create: false, at: 7), to: two)
        guard case let .welcome(frame)? = welcome.first else {
            Issue.record("no welcome: \(welcome)")
            return
        }
        #expect(frame.orderedHistoryCount == 2)
        let history = welcome.compactMap { if case let .historyEntry(entry) = $0 { entry } else { nil } }
        #expect(history.map(\.order) == [5, 6])
        #expect(welcome.count == 4, "the welcome, two history entries, a ping")
        #expect(welcome.last.map { if case .ping = $0 { true } else { false } } == true)
    }

    @Test("the lead's bounds: nothing measured, clamping, and a minimum above the maximum")
    func leadFormula() {
        var configuration = RelayCoreConfiguration()
        let ms = OrderingCoreTests.millisecond
        #expect(configuration.lead(forRoundTrip: nil) == 50 * ms)
        #expect(configuration.lead(forRoundTrip: 0) == 30 * ms)
        #expect(configuration.lead(forRoundTrip: 100 * ms) == 120 * ms)
        #expect(configuration.lead(forRoundTrip: 10_000 * ms) == 1_000 * ms)
        configuration.maximumLead = 10 * ms
        #expect(configuration.lead(forRoundTrip: nil) == 30 * ms, "the minimum wins over a smaller maximum")
    }
}
