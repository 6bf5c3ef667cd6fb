import Foundation
import Synchronization
import Testing
import Tandem
import TandemNet
import TandemParty
import TandemClock
import TandemTestKit
import TandemWire

/// A relay that shows one participant a different history: a test double on that participant's
/// link, between a real relay on loopback and its session, hands it two ordered records with
/// their contents exchanged under the same two orders, as a dishonest relay could (it cannot
/// forge a record, but it can order the ones it has differently for different people). The
/// participants compare their chain heads over the order in their health reports, and say so at the first
/// report that covers the records that differ: within two seconds, as reports go once a second
/// (`HealthReportTests`).
@Suite(.serialized) struct RelayDivergenceIOTests {
    /// Joins through `inner` and, once `armed`, exchanges the contents (sender, retention and
    /// body) of the next two ordered records it delivers, keeping their orders and instants.
    final class ExchangingConnector: RelayConnector {
        let inner: any RelayConnector
        let armed = Mutex(false)
        /// Whether the exchanged pair was handed to the session.
        let exchanged = Mutex(false)
        /// The orders of the exchanged pair.
        let exchangedOrders = Mutex<[UInt64]>([])
        /// While set, unreliable messages (the health reports) are dropped both ways, as a relay
        /// that withholds them could.
        let muted = Mutex(false)
        /// While not zero, every ordered record is handed with both its instants this many
        /// nanoseconds later, as a relay whose session time jumped forward would stamp them.
        let jump = Mutex<Int64>(0)

        init(_ inner: any RelayConnector) { self.inner = inner }

        func join(_ request: RelayJoinRequest) async throws(RelayError) -> any RelayLink {
            ExchangingLink(try await inner.join(request), connector: self)
        }
    }

    final class ExchangingLink: RelayLink {
        let inner: any RelayLink
        let events: AsyncStream<RelayEvent>
        let connector: ExchangingConnector
        private let pump: Task<Void, Never>

        init(_ inner: any RelayLink, connector: ExchangingConnector) {
            self.inner = inner
            self.connector = connector
            let (stream, continuation) = AsyncStream.makeStream(of: RelayEvent.self)
            events = stream
            let source = inner.events
            pump = Task {
                var held: OrderedDelivery?
                var done = false
                for await event in source {
                    if case .message(_, _, false) = event, connector.muted.withLock({ $0 }) { continue }
                    if case .ordered(var delivery) = event, case let jump = connector.jump.withLock({ $0 }), jump != 0 {
                        delivery.orderedInstant = SessionInstant(nanoseconds: delivery.orderedInstant.nanoseconds + jump)
                        delivery.effectiveInstant = SessionInstant(nanoseconds: delivery.effectiveInstant.nanoseconds + jump)
                        continuation.yield(.ordered(delivery))
                        continue
                    }
                    guard !done, case .ordered(var delivery) = event, connector.armed.withLock({ $0 }) else {
                        continuation.yield(event)
                        continue
                    }
                    guard var first = held else {
                        held = delivery
                        continue
                    }
                    swap(&first.body, &delivery.body)
                    swap(&first.sender, &delivery.sender)
                    swap(&first.retention, &delivery.retention)
                    continuation.yield(.ordered(first))
                    continuation.yield(.ordered(delivery))
                    connector.exchangedOrders.withLock { $0 = [first.order, delivery.order] }
                    connector.exchanged.withLock { $0 = true }
                    held = nil
                    done = true
                }
                continuation.finish()
            }
        }

        deinit { pump.cancel() }

        var welcome: RelayWelcome { inner.welcome }
        func send(_ body: [UInt8], to recipients: Recipients, reliable: Bool) throws(RelayError) {
            if !reliable, connector.muted.withLock({ $0 }) { return }
            try inner.send(body, to: recipients, reliable: reliable)
        }
        func sendOrdered(_ body: [UInt8], retention: OrderedRetention) throws(RelayError) {
            try inner.sendOrdered(body, retention: retention)
        }
        func addAttachment(id: UUID, metadata: [UInt8], data: [UInt8]) async throws(RelayError) {
            try await inner.addAttachment(id: id, metadata: metadata, data: data)
        }
        func removeAttachment(id: UUID) async throws(RelayError) { try await inner.removeAttachment(id: id) }
        func loadAttachment(id: UUID) async throws(RelayError) -> [UInt8] { try await inner.loadAttachment(id: id) }
        func leave() async { await inner.leave() }
        func end(reason: String) async { await inner.end(reason: reason) }
    }

    @Test func aParticipantShownADifferentOrderIsFoundOutAtTheNextReport() async throws {
        let relay = try TestRelay(.network)
        defer { relay.shutdown() }
        let host = try await WatchPartyIOTests.participant("host", relay: relay, invitation: nil)
        let exchanging = ExchangingConnector(relay.connector)
        let ana = try await WatchPartyIOTests.participant("ana", relay: relay, invitation: host.party.session.invitation,
                                                          connector: exchanging)
        try await WatchPartyIOTests.once { try host.party.play() }
        #expect(await host.recorder.first { if case .health(let health) = $0, health.from == "ana" { true } else { nil } } == true,
                "no report from ana")

        // From now on the relay shows Ana the next two records the other way round.
        let reportsBefore = [host.recorder.events.count, ana.recorder.events.count]
        exchanging.armed.withLock { $0 = true }
        try host.party.pause()
        try host.party.play()
        // Whoever finds it first: both recorders are awaited at once, and the first to see it wins.
        let picked = { @Sendable (event: WatchPartyEvent) -> WatchPartyEvent.RelayDivergence? in
            if case .relayDivergence(let divergence) = event { divergence } else { nil }
        }
        let divergence = await withTaskGroup(of: WatchPartyEvent.RelayDivergence?.self) { group -> WatchPartyEvent.RelayDivergence? in
            for recorder in [host.recorder, ana.recorder] { group.addTask { await recorder.first(within: 10, picked) } }
            defer { group.cancelAll() }
            for await found in group { if let found { return found } }
            return nil
        }
        let found = try #require(divergence, "nobody found the relay out")
        #expect(exchanging.exchanged.withLock { $0 })
        #expect(["host", "ana"].contains(found.with))
        // Found at the first report from the other that covers the exchange: counting that one,
        // at most two (one may have been on its way when the records were exchanged).
        let (finder, before) = found.with == "ana" ? (host, reportsBefore[0]) : (ana, reportsBefore[1])
        let reportsUntilFound = { (events: [WatchPartyEvent]) -> Int in
            let sinceArmed = events[before...]
            let foundAt = sinceArmed.firstIndex { if case .relayDivergence = $0 { true } else { false } } ?? events.endIndex
            return sinceArmed[..<foundAt].count { if case .health(let health) = $0, health.from == found.with { true } else { false } }
        }(finder.recorder.events)
        #expect(reportsUntilFound <= 2, "\(reportsUntilFound) reports from \(found.with) came before the divergence was seen")

        host.party.end()
        _ = try await WatchPartyIOTests.ending(of: host)
        _ = try await WatchPartyIOTests.ending(of: ana)
    }

    /// The relay's session time jumps 5 s ahead for Ana alone: her watch party says so at the
    /// first record stamped with it, once, naming how far.
    @Test func aJumpOfTheRelaysTimeIsSaidAtTheNextRecord() async throws {
        let relay = try TestRelay(.network)
        defer { relay.shutdown() }
        let host = try await WatchPartyIOTests.participant("host", relay: relay, invitation: nil)
        let jumping = ExchangingConnector(relay.connector)
        let ana = try await WatchPartyIOTests.participant("ana", relay: relay, invitation: host.party.session.invitation,
                                                          connector: jumping)
        try await WatchPartyIOTests.once { try host.party.play() }
        #expect(await ana.recorder.first { if case .timeline(let timeline, _) = $0, timeline.rate > 0 { true } else { nil } } == true,
                "ana never played")
        #expect(!ana.recorder.events.contains { if case .relayTimeJump = $0 { true } else { false } }, "an honest relay's time jumped")

        jumping.jump.withLock { $0 = 5_000_000_000 }
        try host.party.pause()
        let picked = { @Sendable (event: WatchPartyEvent) -> WatchPartyEvent.RelayTimeJump? in
            if case .relayTimeJump(let jump) = event { jump } else { nil }
        }
        let jump = try #require(await ana.recorder.first(within: 10, picked), "ana did not see the relay's time jump")
        #expect(jump.count == 1)
        #expect(jump.aheadMilliseconds > 4_000 && jump.aheadMilliseconds <= 5_000, "\(jump.aheadMilliseconds) ms")
        #expect(!host.recorder.events.contains { if case .relayTimeJump = $0 { true } else { false } }, "the host's relay did not jump")

        host.party.end()
        _ = try await WatchPartyIOTests.ending(of: host)
        _ = try await WatchPartyIOTests.ending(of: ana)
    }

    /// The relay exchanges two records for Ana and withholds the health reports (they travel
    /// through it) while 40 more records go to everyone alike: when the reports come again, the
    /// newest heads they carry are more than 32 orders past the exchange, and they still differ.
    @Test func anExchangeMoreThan32OrdersBackIsFoundOutWhenTheReportsComeAgain() async throws {
        let relay = try TestRelay(.network)
        defer { relay.shutdown() }
        let host = try await WatchPartyIOTests.participant("host", relay: relay, invitation: nil)
        let exchanging = ExchangingConnector(relay.connector)
        let ana = try await WatchPartyIOTests.participant("ana", relay: relay, invitation: host.party.session.invitation,
                                                          connector: exchanging)
        try await WatchPartyIOTests.once { try host.party.play() }
        #expect(await host.recorder.first { if case .health(let health) = $0, health.from == "ana" { true } else { nil } } == true,
                "no report from ana")

        exchanging.muted.withLock { $0 = true }
        exchanging.armed.withLock { $0 = true }
        try host.party.pause()
        try host.party.play()
        let exchanged = await WatchPartyIOTests.eventually(within: 10) { exchanging.exchangedOrders.withLock { $0.max() } }
        let last = try #require(exchanged, "the relay double exchanged nothing")
        for index in 1...40 { try host.party.session.sendChat("line \(index)") }
        let reached = await WatchPartyIOTests.eventually(within: 10) { () -> Bool? in
            let orders = [host, ana].compactMap { $0.party.session.orderedChain?.order }
            return orders.count == 2 && orders.allSatisfy { $0 >= last + 40 } ? true : nil
        }
        #expect(reached == true, "the chat lines did not reach both")
        let divergedWhileMuted = [host, ana].contains { participant in
            participant.recorder.events.contains { if case .relayDivergence = $0 { true } else { false } }
        }
        #expect(!divergedWhileMuted, "found before the reports came again: the test shows nothing about the distance")

        exchanging.muted.withLock { $0 = false }
        let picked = { @Sendable (event: WatchPartyEvent) -> WatchPartyEvent.RelayDivergence? in
            if case .relayDivergence(let divergence) = event { divergence } else { nil }
        }
        let divergence = await withTaskGroup(of: WatchPartyEvent.RelayDivergence?.self) { group -> WatchPartyEvent.RelayDivergence? in
            for recorder in [host.recorder, ana.recorder] { group.addTask { await recorder.first(within: 10, picked) } }
            defer { group.cancelAll() }
            for await found in group { if let found { return found } }
            return nil
        }
        let found = try #require(divergence, "nobody found the relay out")
        #expect(found.order >= last + 32, "found at order \(found.order), the exchange at \(last)")

        host.party.end()
        _ = try await WatchPartyIOTests.ending(of: host)
        _ = try await WatchPartyIOTests.ending(of: ana)
    }

    /// An honest relay: a participant that joins after a run of changes chains the history the
    /// relay kept for it to the same heads as those who were there, and nobody says otherwise.
    @Test func aLateJoinerOfAnHonestRelayHoldsTheSameHeads() async throws {
        let relay = try TestRelay(.network)
        defer { relay.shutdown() }
        let host = try await WatchPartyIOTests.participant("host", relay: relay, invitation: nil)
        try await WatchPartyIOTests.once { try host.party.play() }
        for index in 1...20 { try host.party.session.sendChat("line \(index)") }
        let late = try await WatchPartyIOTests.participant("late", relay: relay, invitation: host.party.session.invitation)
        #expect(await late.recorder.first { if case .health(let health) = $0, health.from == "host" { true } else { nil } } == true,
                "no report from the host")
        #expect(await host.recorder.first { if case .health(let health) = $0, health.from == "late" { true } else { nil } } == true,
                "no report from the late joiner")
        let status = try #require(late.party.session.orderedChain)
        #expect(status.startOrder == 0 && status.isVouched, "a history from order 1 is chained from its start: \(status)")
        #expect(status.order > 20)
        #expect(host.party.session.orderedChainHead(atOrder: status.order) == status.head)
        #expect(![host, late].contains { participant in
            participant.recorder.events.contains { if case .relayDivergence = $0 { true } else { false } }
        })

        host.party.end()
        _ = try await WatchPartyIOTests.ending(of: host)
        _ = try await WatchPartyIOTests.ending(of: late)
    }
}
