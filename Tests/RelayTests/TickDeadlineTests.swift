import Foundation
import Testing
@testable import TandemNet
import TandemWire

/// The relay's tick visits the participants whose deadlines came (an acknowledgement due, a
/// grace period over, a datagram registration lapsed), and every participant only once a
/// second: an idle relay with thousands of participants no longer walks them all 50 times a
/// second. Pure core and heap, virtual instants.
@Suite("Relay core: the tick's deadlines")
struct TickDeadlineTests {
    private let key = [UInt8](repeating: 5, count: 32)
    private let session = UUID()
    private let millisecond: Int64 = 1_000_000
    private let tick: Int64 = 20_000_000

    @Test("the deadlines give every key due, once each, soonest first; a key's deadline is its latest; later ones stay")
    func heapOrder() {
        var deadlines = Deadlines<Int>()
        // 500 settings over 100 keys, instants scattered over 0..<1000: each key's last one holds.
        let entries = (0..<500).map { (key: $0 % 100, due: Int64(($0 * 7_919) % 1_000)) }
        var latest: [Int: Int64] = [:]
        for entry in entries {
            deadlines.set(entry.key, at: entry.due)
            latest[entry.key] = entry.due
        }
        #expect(deadlines.count == 100)
        let due = deadlines.popDue(at: 499)
        let expected = latest.filter { $0.value <= 499 }
        #expect(Set(due) == Set(expected.keys) && due.count == expected.count)
        #expect(zip(due, due.dropFirst()).allSatisfy { latest[$0.0]! <= latest[$0.1]! })
        #expect(deadlines.count == 100 - expected.count)
        #expect(deadlines.earliest().map { $0 > 499 } ?? false)
        #expect(deadlines.popDue(at: 499).isEmpty)
        #expect(Set(deadlines.popDue(at: 1_000)) == Set(latest.filter { $0.value > 499 }.keys))
        #expect(deadlines.count == 0 && deadlines.earliest() == nil)
    }

    @Test("an idle relay's ticks visit nobody between sweeps; a frame's acknowledgement comes on its phase, visiting its sender alone")
    func idleTicksVisitNobody() throws {
        var core = RelayCore()
        let admission = CoreAdmission(key: key, session: session)
        let people = (0..<40).map { _ in TestIdentities.make() }
        for (index, person) in people.enumerated() {
            _ = admission.admit(&core, RelayConnectionID(UInt64(index + 1)), person, create: index == 0, at: 0)
        }
        #expect(core.participants(of: session).count == 40)
        // Two seconds of ticks: every participant visited once a second, nobody otherwise.
        var visitsByTick: [Int64: Int] = [:]
        var now: Int64 = 0
        while now < 2_000 * millisecond {
            now += tick
            let before = core.tickVisits
            _ = core.onTick(at: now)
            visitsByTick[now] = core.tickVisits - before
        }
        let sweeps = visitsByTick.filter { $0.value > 0 }
        #expect(sweeps.count == 2 && sweeps.values.allSatisfy { $0 == 40 }, "\(sweeps.sorted { $0.key < $1.key })")

        // One participant sends reliable messages: each acknowledgement comes at the first tick
        // at or after the instant its phase makes it due, and no tick before it visits anyone.
        let sender = RelayConnectionID(7)
        for sequence in UInt64(1)...3 {
            now += millisecond
            _ = core.onFrame(.message(sequence: sequence, recipients: .everyone, reliable: true, body: [1]), from: sender, at: now)
            let participant = try #require(core.sessions[session]?.participants[people[6]])
            let due = max(now, participant.lastAcknowledgement + core.configuration.acknowledgementInterval)
            var acknowledgedAt: Int64?
            // The last tick that did not acknowledge (none yet: just before the frame).
            var previous = now - 1
            var visitsBefore = 0
            while acknowledgedAt == nil, now < due + 2 * tick {
                now += tick
                let before = core.tickVisits
                let directives = core.onTick(at: now)
                let visits = core.tickVisits - before
                if directives.contains(where: { if case .send(sender, .ack(sequence)) = $0 { true } else { false } }) {
                    acknowledgedAt = now
                    #expect(visits == 1 || visits == 40, "the tick that acknowledged visited \(visits)")
                } else {
                    previous = now
                    if visits != 40 { visitsBefore += visits }
                }
            }
            let acknowledged = try #require(acknowledgedAt, "no acknowledgement of \(sequence)")
            #expect(acknowledged >= due && previous < due, "due \(due), acknowledged \(acknowledged), the tick before \(previous)")
            #expect(visitsBefore == 0)
        }
    }

    @Test("a departure within a tick of its grace period's end, between sweeps")
    func graceEndsOnItsTick() {
        var core = RelayCore()
        let admission = CoreAdmission(key: key, session: session)
        let alice = TestIdentities.make(), bob = TestIdentities.make()
        _ = admission.admit(&core, RelayConnectionID(1), alice, create: true, at: 0)
        _ = admission.admit(&core, RelayConnectionID(2), bob, create: false, at: 0)
        // A sweep now, so that the next one is a second away.
        _ = core.onTick(at: 10 * 1_000 * millisecond)
        _ = core.onClose(RelayConnectionID(1), at: 10 * 1_000 * millisecond + millisecond, byPeer: true)
        // The grace period (3 s) would end between sweeps of a second: the deadline takes it.
        let end = 10 * 1_000 * millisecond + millisecond + core.configuration.closedGracePeriod
        _ = core.onTick(at: end - 1_000 * millisecond + 5 * millisecond)
        #expect(core.participants(of: session).count == 2)
        _ = core.onTick(at: end - 1)
        #expect(core.participants(of: session).count == 2)
        let before = core.tickVisits
        _ = core.onTick(at: end)
        #expect(core.participants(of: session) == [bob])
        #expect(core.tickVisits - before == 1)
    }
}
