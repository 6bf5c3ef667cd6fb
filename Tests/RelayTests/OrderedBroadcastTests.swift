import Foundation
import TandemNet
import TandemWire
import TandemTestKit
import Testing

/// Ordered broadcasts, against both relays: one order for everyone, the history for late
/// joiners, limits, and resumption.
@Suite("Relay ordered broadcasts", .serialized)
struct OrderedBroadcastIOTests {
    @Test("concurrent proposals: everyone, the senders included, gets one order; a late joiner replays it",
          arguments: TransportKind.allCases)
    func oneOrder(kind: TransportKind) async throws {
        let harness = try RelayHarness(kind)
        defer { harness.shutdown() }
        let session = UUID()
        let alice = try await harness.join(session, "alice", create: true)
        let bob = try await harness.join(session, "bob")
        let carol = try await harness.join(session, "carol")
        let members = [alice, bob, carol]
        // Interleaved from three tasks at once, so that proposals race each other to the relay.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, member) in members.enumerated() {
                group.addTask {
                    for number in 0..<50 {
                        try member.link.sendOrdered(Array("\(index)-\(number)".utf8))
                        if number % 10 == 0 { await Task.yield() }
                    }
                }
            }
            try await group.waitForAll()
        }
        for member in members {
            #expect(await member.recorder.wait { $0.ordered.count >= 150 })
        }
        let reference = alice.recorder.events.ordered
        #expect(reference.map(\.order) == Array(1...150))
        for member in members {
            #expect(member.recorder.events.ordered == reference, "the same deliveries in the same order")
        }
        for (index, member) in members.enumerated() {
            let own = reference.filter { $0.sender == member.id }.map { String(decoding: $0.body, as: UTF8.self) }
            #expect(own == (0..<50).map { "\(index)-\($0)" }, "each sender's proposals keep its order")
        }
        for (previous, next) in zip(reference, reference.dropFirst()) {
            #expect(next.effectiveInstant.nanoseconds >= previous.effectiveInstant.nanoseconds)
            #expect(next.orderedInstant.nanoseconds >= previous.orderedInstant.nanoseconds)
        }
        #expect(reference.allSatisfy { $0.effectiveInstant.nanoseconds > $0.orderedInstant.nanoseconds })
        let configuration = RelayHarness.testConfiguration
        #expect(reference.allSatisfy { delivery in
            (configuration.minimumLead...configuration.maximumLead).contains(delivery.effectiveInstant.nanoseconds - delivery.orderedInstant.nanoseconds)
        })
        if let server = harness.server {
            // Stamped with the relay's clock, the session clock.
            let now = server.clock.instant().nanoseconds
            #expect(reference.allSatisfy { $0.orderedInstant.nanoseconds <= now && now - $0.orderedInstant.nanoseconds < 60_000_000_000 })
        }

        let dave = try await harness.join(session, "dave")
        #expect(dave.link.welcome.orderedHistory == reference)
        try dave.link.sendOrdered(Array("late".utf8))
        for member in members + [dave] {
            #expect(await member.recorder.wait { $0.ordered.last?.order == 151 })
        }
        let last = try #require(dave.recorder.events.ordered.last)
        #expect(dave.recorder.events.ordered.count == 1, "the history is not delivered again as events")
        #expect(last.sender == dave.id && last.body == Array("late".utf8))
        #expect(last.effectiveInstant.nanoseconds >= reference[149].effectiveInstant.nanoseconds)
        #expect(alice.recorder.events.ordered.last == last)
    }

    @Test("the history keeps the newest maximumOrderedHistory deliveries", arguments: TransportKind.allCases)
    func historyBound(kind: TransportKind) async throws {
        var configuration = RelayHarness.testConfiguration
        configuration.maximumOrderedHistory = 10
        let harness = try RelayHarness(kind, configuration: configuration)
        defer { harness.shutdown() }
        let session = UUID()
        let alice = try await harness.join(session, "alice", create: true)
        #expect(alice.link.welcome.orderedHistory.isEmpty)
        for number in 0..<25 { try alice.link.sendOrdered([UInt8(number)]) }
        #expect(await alice.recorder.wait { $0.ordered.count >= 25 })
        let bob = try await harness.join(session, "bob")
        #expect(bob.link.welcome.orderedHistory.map(\.order) == Array(16...25))
        #expect(bob.link.welcome.orderedHistory == Array(alice.recorder.events.ordered.suffix(10)))
    }

    @Test("retention travels with each delivery, and a joiner's history is kept by it", arguments: TransportKind.allCases)
    func retention(kind: TransportKind) async throws {
        let harness = try RelayHarness(kind)
        defer { harness.shutdown() }
        let session = UUID()
        let alice = try await harness.join(session, "alice", create: true)
        let bob = try await harness.join(session, "bob")
        try alice.link.sendOrdered(Array("chat".utf8))
        // Two senders' records may be ordered either way: bob waits for alice's to be order 1.
        #expect(await bob.recorder.wait { $0.ordered.count == 1 })
        for number in 2...6 { try bob.link.sendOrdered([UInt8(number)], retention: .playback) }
        #expect(await alice.recorder.wait { $0.ordered.count == 6 })
        // Alice snapshots the state after order 5; order 6 came after it and stays.
        try alice.link.sendOrdered(Array("state".utf8), retention: .snapshot(reflecting: 5))
        let expected: [OrderedRetention] = [.kept, .playback, .playback, .playback, .playback, .playback, .snapshot(reflecting: 5)]
        for member in [alice, bob] {
            #expect(await member.recorder.wait { $0.ordered.count == 7 })
            #expect(member.recorder.events.ordered.map(\.retention) == expected)
        }
        let carol = try await harness.join(session, "carol")
        #expect(carol.link.welcome.orderedHistory.map(\.order) == [1, 6, 7])
        #expect(carol.link.welcome.orderedHistory == [1, 6, 7].map { alice.recorder.events.ordered[$0 - 1] })
    }

    @Test("an oversized ordered body is refused before sending; the largest passes", arguments: TransportKind.allCases)
    func sizeLimit(kind: TransportKind) async throws {
        let harness = try RelayHarness(kind)
        defer { harness.shutdown() }
        let session = UUID()
        let alice = try await harness.join(session, "alice", create: true)
        let bob = try await harness.join(session, "bob")
        let largest = [UInt8](repeating: 0xCD, count: RelayLimits.maximumMessageBody)
        #expect { try alice.link.sendOrdered(largest + [0]) } throws: { ($0 as? RelayError)?.code == .tooLarge }
        try alice.link.sendOrdered(largest)
        for member in [alice, bob] {
            #expect(await member.recorder.wait { $0.ordered.map(\.body) == [largest] })
            #expect(member.recorder.events.ordered.first?.order == 1, "the refused one took no number")
        }
        // A late joiner's history carries the largest body too.
        let carol = try await harness.join(session, "carol")
        #expect(carol.link.welcome.orderedHistory.map(\.body) == [largest])
    }

    @Test("ordered deliveries survive resumptions without loss or duplicates", arguments: TransportKind.allCases)
    func resume(kind: TransportKind) async throws {
        let harness = try RelayHarness(kind)
        defer { harness.shutdown() }
        let session = UUID()
        let alice = try await harness.join(session, "alice", create: true)
        let bob = try await harness.join(session, "bob")
        try alice.link.sendOrdered(Array("first".utf8))
        #expect(await bob.recorder.wait { $0.ordered.count == 1 })

        try #require(alice.client).interruptConnection(for: .milliseconds(100))
        for number in 0..<30 {
            try bob.link.sendOrdered(Array("b\(number)".utf8))
            try alice.link.sendOrdered(Array("a\(number)".utf8))
        }
        #expect(await alice.recorder.wait { $0.resumptions == 1 })
        for member in [alice, bob] { #expect(await member.recorder.wait { $0.ordered.count >= 61 }) }
        // Once more while proposals flow both ways.
        try #require(alice.client).interruptConnection()
        for number in 30..<40 {
            try alice.link.sendOrdered(Array("a\(number)".utf8))
            try bob.link.sendOrdered(Array("b\(number)".utf8))
        }
        #expect(await alice.recorder.wait { $0.resumptions == 2 })
        for member in [alice, bob] { #expect(await member.recorder.wait { $0.ordered.count >= 81 }) }
        try await Task.sleep(for: .milliseconds(100))
        let reference = bob.recorder.events.ordered
        #expect(reference.map(\.order) == Array(1...81))
        #expect(alice.recorder.events.ordered == reference)
        let bodies = reference.map { String(decoding: $0.body, as: UTF8.self) }
        #expect(bodies.filter { $0.hasPrefix("a") } == (0..<40).map { "a\($0)" })
        #expect(bodies.filter { $0.hasPrefix("b") } == (0..<40).map { "b\($0)" })
        #expect(bob.recorder.events.leftIDs.isEmpty)
    }
}

extension [RelayEvent] {
    var ordered: [OrderedDelivery] {
        compactMap { if case let .ordered(delivery) = $0 { delivery } else { nil } }
    }
}
