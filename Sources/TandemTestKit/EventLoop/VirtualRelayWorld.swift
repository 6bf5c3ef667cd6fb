import Foundation
import Synchronization
import TandemClock
import TandemNet
import TandemHarness

/// An in-memory relay and its participants' links, all on one `EmbeddedEventLoop`: a whole
/// session that moves only in virtual time, deterministically, with no thread of its own and no
/// sleep. The loop's clock is the session clock (the relay's); each participant also has a local
/// clock of its own, off the session clock by an offset and a drift, for what runs above the
/// link (a clock estimator, a coordinator shell).
///
/// Drive it from one thread: `join` and `leave` advance the loop until they are done (within a
/// bound of virtual time), `advance(by:)` and `advance(to:)` run everything due. Each
/// participant's events are recorded synchronously, on the loop, with the virtual instant they
/// arrived at; the link's `events` stream carries them too, for code that consumes it.
public final class VirtualRelayWorld: Sendable {
    /// A participant of the world: its link, its local clock and what it received.
    public final class Participant: Sendable {
        /// The name it joined under.
        public let name: String
        /// Its joined link (on the world's loop).
        public let link: RelayClientLink
        /// Its local clock: session time (the loop's clock) off by the offset and drift it joined with.
        public let clock: SkewedClock<VirtualClock>
        /// The world's loop as this participant sees it: `now` and deadlines in its local time.
        /// Hand it to a shell under test (a coordinator's) as its `SerialEventLoop`.
        public let loop: SkewedEventLoop
        private let recorded = Mutex<[(time: Int64, event: RelayEvent)]>([])
        private let observers = Mutex<[@Sendable (RelayEvent) -> Void]>([])

        init(name: String, link: RelayClientLink, clock: SkewedClock<VirtualClock>, loop: SkewedEventLoop) {
            self.name = name
            self.link = link
            self.clock = clock
            self.loop = loop
        }

        /// Its identity.
        public var id: UUID { link.participant.id }
        /// What it learned on joining.
        public var welcome: RelayWelcome { link.welcome }

        /// Every event so far with the session instant it arrived at, oldest first.
        public var timedEvents: [(time: Int64, event: RelayEvent)] { recorded.withLock { $0 } }
        /// Every event so far, oldest first.
        public var events: [RelayEvent] { timedEvents.map(\.event) }
        /// The ordered broadcasts received so far (after those of the welcome), oldest first.
        public var ordered: [OrderedDelivery] {
            events.compactMap { if case let .ordered(delivery) = $0 { delivery } else { nil } }
        }
        /// The messages received so far: sender, body and whether it came reliably.
        public var messages: [(from: UUID, body: [UInt8], reliable: Bool)] {
            events.compactMap { if case let .message(sender, body, reliable) = $0 { (sender, body, reliable) } else { nil } }
        }

        /// Forgets the events recorded so far and returns them.
        public func takeEvents() -> [RelayEvent] {
            recorded.withLock { events in
                defer { events.removeAll() }
                return events.map(\.event)
            }
        }

        /// Calls `observer` on the loop with every event from now on, as it is recorded: how a
        /// shell under test (a coordinator's channel) is fed without a task in between.
        public func observe(_ observer: @escaping @Sendable (RelayEvent) -> Void) {
            observers.withLock { $0.append(observer) }
        }

        func record(_ event: RelayEvent, at time: Int64) {
            recorded.withLock { $0.append((time, event)) }
            for observer in observers.withLock({ $0 }) { observer(event) }
        }
    }

    /// The loop everything runs on; its clock is the session clock.
    public let loop: EmbeddedEventLoop
    /// The relay.
    public let relay: InMemoryRelay
    /// The session every participant joins.
    public let sessionID: UUID
    /// The participants joined so far, in the order they joined (those who left included).
    public var participants: [Participant] { state.withLock { $0.participants } }
    private let sessionKey: SigningKeyPair
    private let state: Mutex<State>

    /// What joins change: who joined, and the seeded randomness identities are drawn from.
    private struct State {
        var participants: [Participant] = []
        var random: SeededRandom
    }

    /// How long `join` and `leave` may take in virtual time before they give up (10 s).
    public static let defaultBound: Int64 = 10_000_000_000

    /// A world whose relay has these limits and timings, on paths impaired as `impairment` says
    /// (frames delayed in order, datagrams delayed, lost, reordered, duplicated); `seed` fixes
    /// every key (and so every identity) and every impairment decision, so that runs repeat.
    /// The session clock starts at `start` and the loop ticks every `tickInterval`. With
    /// `sessionKey`, joiners prove that key (an invite's secret's, for sessions above the
    /// links) instead of one the seed makes.
    public init(configuration: RelayCoreConfiguration = RelayCoreConfiguration(),
                link: RelayLinkConfiguration = RelayLinkConfiguration(),
                impairment: Impairment = .none,
                seed: UInt64 = 1, start: Int64 = 1_000_000_000, tickInterval: Int64 = 20_000_000,
                sessionKey: SigningKeyPair? = nil) {
        loop = EmbeddedEventLoop(start: start, tickInterval: tickInterval)
        var random = SeededRandom(seed: seed)
        relay = InMemoryRelay(configuration: configuration, linkConfiguration: link, impairment: impairment,
                              seed: random.next(), loop: loop)
        sessionID = UUID(uuid: Self.bytes16(&random))
        let seeded = SigningKeyPair(seed: Self.bytes(32, &random))
        self.sessionKey = sessionKey ?? seeded
        state = Mutex(State(random: random))
    }

    /// The session time now (ns).
    public var now: Int64 { loop.currentTime }

    /// Joins a participant named `name` whose local clock reads session time plus `clockOffset`,
    /// running `driftPPM` fast from now; the first participant creates the session. Advances
    /// virtual time until the join is done, at most `within` nanoseconds; throws what the relay
    /// answered, or `.timedOut`. Its identity is `identity` (a session's own key for it), else
    /// one the seed makes.
    @discardableResult
    public func join(_ name: String, clockOffset: Int64 = 0, driftPPM: Double = 0, activity: [UInt8] = Array("watch".utf8),
                     presence: [UInt8] = [], identity given: SigningKeyPair? = nil,
                     within bound: Int64 = VirtualRelayWorld.defaultBound) throws(RelayError) -> Participant {
        let seeded = SigningKeyPair(seed: state.withLock { Self.bytes(32, &$0.random) })
        let identity = given ?? seeded
        let request = RelayJoinRequest(sessionID: sessionID, displayName: name, identity: identity, sessionKey: sessionKey,
                                       createIfAbsent: participants.isEmpty, activity: activity, presence: presence)
        let link = relay.makeLink(request)
        let clock = SkewedClock(base: loop.virtualClock, offset: clockOffset, driftPPM: driftPPM, origin: now)
        let view = SkewedEventLoop(base: loop, offset: clockOffset, driftPPM: driftPPM, origin: clock.origin)
        let participant = Participant(name: name, link: link, clock: clock, loop: view)
        let virtualClock = loop.virtualClock
        link.observeEvents { [participant] event in participant.record(event, at: virtualClock.instant().nanoseconds) }
        let outcome = Mutex<Result<RelayWelcome, RelayError>?>(nil)
        link.beginJoin { result in outcome.withLock { $0 = result } }
        loop.advance(until: { outcome.withLock { $0 != nil } }, within: bound)
        switch outcome.withLock({ $0 }) {
        case .success?:
            state.withLock { $0.participants.append(participant) }
            return participant
        case let .failure(error)?:
            throw error
        case nil:
            throw RelayError(.timedOut, "joining \(name) took more than \(bound) ns of virtual time")
        }
    }

    /// Makes `participant` leave, advancing virtual time until it has, at most `within`
    /// nanoseconds; true when it left in time.
    @discardableResult
    public func leave(_ participant: Participant, within bound: Int64 = VirtualRelayWorld.defaultBound) -> Bool {
        let left = Atomic<Bool>(false)
        participant.link.beginLeave { left.store(true, ordering: .releasing) }
        return loop.advance(until: { left.load(ordering: .acquiring) }, within: bound)
    }

    /// Runs what is due now.
    public func run() { loop.run() }

    /// Moves session time forwards by `nanoseconds`, running everything due on the way.
    public func advance(by nanoseconds: Int64) { loop.advance(by: nanoseconds) }

    /// Moves session time forwards to `instant`, running everything due on the way.
    public func advance(to instant: Int64) { loop.advance(to: instant) }

    /// Advances until `condition` holds, at most `within` nanoseconds; true when it held.
    @discardableResult
    public func advance(until condition: () -> Bool, within bound: Int64) -> Bool {
        loop.advance(until: condition, within: bound)
    }

    /// Stops the relay and lets the loop drop what it held.
    public func shutdown() {
        relay.shutdown()
        loop.run()
    }

    private static func bytes(_ count: Int, _ random: inout SeededRandom) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }

    private static func bytes16(_ random: inout SeededRandom) -> uuid_t {
        let b = bytes(16, &random)
        return (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
    }
}
