import Foundation
import Synchronization
import TandemClock
import TandemNet
import TandemWire

/// An ordered proposal as the session hands it to the playback coordinator: opened and
/// verified, in the relay's order, with the relay's stamps; `sender` is its signer, never the
/// relay's word, `retention` the one its signer signed (a header that said otherwise was
/// rejected), and `body` its plaintext.
package typealias OrderedPlaintext = Ordered<[UInt8]>

// What the playback coordinator needs of a session: an ordered channel, the session clock, and
// who leaves. Package-wide, not public: programs use the coordinator.
extension GroupSession {
    /// Proposes `plaintext` for ordered broadcast (sealed): every participant, this one
    /// included, receives it in the same order.
    ///
    /// `retention` says how long the relay keeps it for late joiners: `.kept` under the
    /// history's caps, `.playback` until a snapshot covers it, `.snapshot(reflecting:)` for a
    /// snapshot of the state after that order (sealed as a `.playbackSnapshot`, the others as a
    /// `.playbackProposal`). It is signed with the body, so receivers reject a relabelled header.
    /// A snapshot carries this participant's chain head at the order it reflects in front of
    /// `plaintext`, inside the seal (`SnapshotChainHead`); receivers take it off.
    package func sendOrdered(_ plaintext: [UInt8], retention: OrderedRetention = .kept) throws(GroupSessionError) {
        guard let reflected = retention.reflectedOrder else {
            return try sendOrdered(plaintext, kind: .playbackProposal, retention: retention)
        }
        try sendOrdered(chainedSnapshot(plaintext, reflecting: reflected), kind: .playbackSnapshot, retention: retention)
    }

    /// Proposes `plaintext` for ordered broadcast, sealed as a body of `kind` (a chat line, or
    /// as the other `sendOrdered` chooses).
    func sendOrdered(_ plaintext: [UInt8], kind: BodyKind, retention: OrderedRetention) throws(GroupSessionError) {
        guard let link = sendingLink else {
            throw GroupSessionError(.notJoined, "the session is not joined: call join() and wait for .joined")
        }
        do {
            try link.sendOrdered(bodies.seal(plaintext, kind: kind, path: .ordered, retention: retention), retention: retention)
        } catch {
            throw GroupSessionError.from(error)
        }
    }

    /// The ordered deliveries that opened: the session's history first, then each new one
    /// (placeholders are passed over). One reader.
    package func orderedDeliveries() -> AsyncStream<OrderedPlaintext> { orderedDeliveries { $0 } }

    /// The ordered deliveries that opened, each turned into what the reader wants by
    /// `transform` (nil skips it) as it arrives, on the session's loop (placeholders are
    /// passed over). One reader.
    package func orderedDeliveries<Element: Sendable>(
        _ transform: @escaping @Sendable (OrderedPlaintext) -> Element?
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self)
        let adopted = orderedDeliveries(while: { record in
            if let plaintext = record.body.plaintext, let element = transform(record.map { _ in plaintext }) {
                continuation.yield(element)
            }
            return true
        }, finished: { continuation.finish() })
        if !adopted { continuation.finish() }
        return stream
    }

    /// Hands each ordered record to `handler` as it arrives, on the session's loop (the backlog
    /// first, before this returns): the coordinator is fed without a task of its own in between.
    /// A record that failed a check comes as a placeholder (`OrderedContent.placeholder`), so
    /// that every order is accounted for. When `handler` returns false the subscription ends:
    /// `finished` is called, and the session hands it nothing more and keeps nothing for it (the
    /// records are still opened, as the session opens every record, but go no further). One
    /// reader: a later subscription replaces this one. False when the session is over (nothing
    /// is delivered).
    @discardableResult
    package func orderedDeliveries(while handler: @escaping @Sendable (OrderedRecord) -> Bool,
                                   finished: @escaping @Sendable () -> Void = {}) -> Bool {
        let ended = Mutex(false)
        let end: @Sendable () -> Void = {
            // Once: the handler's false, or the session's end.
            guard ended.withLock({ ended in defer { ended = true }; return !ended }) else { return }
            finished()
        }
        let reader = OrderedReader(yield: { delivery in
            // An ended reader stays in place (until a later subscription replaces it) and drops
            // what comes, so that the session keeps no backlog for it.
            guard !ended.withLock({ $0 }) else { return }
            if !handler(delivery) { end() }
        }, finish: end)
        let (adopted, replaced) = onLoopAndWait { [self] () -> (Bool, OrderedReader?) in
            guard let backlog = machine.onOrderedReader() else { return (false, nil) }
            // The backlog goes first, on the loop, so that no newer delivery overtakes it.
            for delivery in backlog { reader.yield(delivery) }
            defer { readers.ordered = reader }
            return (true, readers.ordered)
        }
        replaced?.finish()
        return adopted
    }

    /// Hands `handler` each participant who leaves the session, on the session's loop, as the
    /// relay reports them: the coordinator learns of departures without a task of its own in
    /// between. When `handler` returns false the subscription ends; it ends with the session too.
    package func departures(while handler: @escaping @Sendable (UUID) -> Bool) {
        let id = readerID()
        addReader({ [self] in readers.departureHandlers[id] = handler }, else: {})
    }

    /// The participant's event loop, which the session runs on: where the playback coordinator
    /// runs too, so that a record goes from the link to the player on one thread.
    package var participantLoop: any SerialEventLoop { loop }

    /// How this participant knows the session clock (nil until joined, or if it cannot probe).
    package var sessionClock: (any SessionClockSource)? { view.withLock { $0.clockSource } }

    /// This participant's local clock.
    package var localClock: any MonotonicDerivedClock { center.localClock }

    /// Takes an ordered delivery as the link hands it (opened and passed on, or kept until the
    /// reader comes), returning once taken. Any thread.
    ///
    /// Only a proposal signed by a participant of this session, attributed by the relay to its
    /// signer, whose counter that signer has not used before in the ordered stream, and whose
    /// signed retention is the header's passes: an old proposal replayed with a fresh order
    /// number, or one the relay relabelled, is reported and passed on as a placeholder that
    /// carries nothing but its order (with the relay's sender and retention).
    func receiveOrdered(_ delivery: OrderedDelivery) {
        onLoopAndWait { [self] in handle(.ordered(delivery)) }
    }

    /// Receives a joiner's history as `SessionMachine.onOrderedHistory` takes it, returning once
    /// taken. Any thread.
    func receiveOrderedHistory(_ history: [OrderedDelivery]) {
        onLoopAndWait { [self] in
            perform(machine.onOrderedHistory(history, at: now))
            publishView()
        }
    }

    /// The session clock, probed at the invite's relay `relay` (where the link joined).
    func makeClockSource(relay: Int = 0) -> (any SessionClockSource)? {
        switch center.relay?.sessionClock ?? .probe {
        case .derived(let relayClock):
            return DerivedSessionClock(relayClock: relayClock, localClock: center.localClock)
        case .probe:
            guard let address = timeService(ofRelay: relay) else { return nil }
            // On the participant's loop when it is a real one: the prober is a handler there.
            return try? ProbedSessionClock(server: address, localClock: center.localClock, loop: loop as? EventLoop)
        }
    }

    /// The time service of the invite's relay `relay` (the first when there is no such relay).
    private func timeService(ofRelay relay: Int) -> SocketAddress? {
        let relays = invitation.relays
        let endpoint = relays[relays.indices.contains(relay) ? relay : 0]
        return try? SocketAddress(host: endpoint.host, port: endpoint.port)
    }

    /// The link resumed, perhaps on another relay of the invite's list: a probed session clock
    /// moves to that relay's time service (it keeps its last estimate until the new one has
    /// samples). An unresolvable address or a failed socket leaves it probing where it was.
    func followClock() {
        loop.preconditionInLoop()
        guard let relay = (link as? RelayClientLink)?.currentRelay,
              let probed = clockSource as? ProbedSessionClock,
              let address = timeService(ofRelay: relay) else { return }
        try? probed.follow(server: address)
    }
}
