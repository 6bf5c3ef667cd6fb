import Foundation
import Synchronization
import TandemClock
import TandemNet

/// Where a participant learns the session clock (the relay's monotonic clock) from.
///
/// A conforming type implements the typed forms (`sessionTime(atLocal:)` taking a `LocalInstant`,
/// and so on). One written against the bare forms in nanoseconds implements those instead, and
/// the typed forms then come from them (with a deprecation warning that says to implement the
/// typed ones); a type that implements neither form of `sessionTime`, `localTime` or
/// `errorBound` recurses forever.
public protocol SessionClockSource: Sendable {
    /// The session instant at local instant `local`, once known.
    func sessionTime(atLocal local: LocalInstant) -> SessionInstant?
    /// The local instant at session instant `session`, once known.
    func localTime(atSession session: SessionInstant) -> LocalInstant?
    /// How far off the estimate may be at local instant `local`, once known.
    func errorBound(atLocal local: LocalInstant) -> TimeSpan?
    /// The median round trip of the recent samples the estimate was made from, at local instant
    /// `local`; nil for a source that takes no samples over the network.
    func roundTrip(atLocal local: LocalInstant) -> TimeSpan?
    /// How many session seconds pass per second of this participant's clock, as the estimate
    /// has it (its drift), once known; nil for a source that does not know it, whose rate is
    /// then measured between two of its readings.
    func sessionSecondsPerLocalSecond(atLocal local: LocalInstant) -> Double?
    /// Stops whatever keeps the estimate current.
    func stop()
    /// Calls `handler`, on whatever thread learns it, each time the estimate changes (its first
    /// sample among them), for as long as the source runs; returns whether this source tells of
    /// its changes at all. One that does not (false, the default) is read when needed, as one
    /// whose estimate never changes is.
    func observeChanges(_ handler: @escaping @Sendable () -> Void) -> Bool

    /// The session time (ns) at local instant `localTime` (ns), once known.
    @available(*, deprecated, message: "pass a LocalInstant; the result is a SessionInstant")
    func sessionTime(atLocal localTime: Int64) -> Int64?
    /// The local instant (ns) at session time `sessionTime` (ns), once known.
    @available(*, deprecated, message: "pass a SessionInstant; the result is a LocalInstant")
    func localTime(atSession sessionTime: Int64) -> Int64?
    /// How far off the estimate may be (ns) at local instant `localTime` (ns), once known.
    @available(*, deprecated, message: "pass a LocalInstant; the result is a TimeSpan")
    func errorBound(atLocal localTime: Int64) -> Int64?
    /// The median round trip (ns) at local instant `localTime` (ns), for a source written against
    /// the bare forms: the typed `roundTrip(atLocal:)` reads it unless the source implements that.
    func roundTrip(atLocal localTime: Int64) -> Int64?
    /// How many session seconds pass per local second at local instant `localTime` (ns), for a
    /// source written against the bare forms: the typed form reads it unless the source
    /// implements that.
    func sessionSecondsPerLocalSecond(atLocal localTime: Int64) -> Double?
}

extension SessionClockSource {
    /// Through the bare form, for a source that implements only that.
    @available(*, deprecated, message: "implement sessionTime(atLocal:) taking a LocalInstant")
    public func sessionTime(atLocal local: LocalInstant) -> SessionInstant? {
        sessionTime(atLocal: local.nanoseconds).map(SessionInstant.init(nanoseconds:))
    }

    /// Through the bare form, for a source that implements only that.
    @available(*, deprecated, message: "implement localTime(atSession:) taking a SessionInstant")
    public func localTime(atSession session: SessionInstant) -> LocalInstant? {
        localTime(atSession: session.nanoseconds).map(LocalInstant.init(nanoseconds:))
    }

    /// Through the bare form, for a source that implements only that.
    @available(*, deprecated, message: "implement errorBound(atLocal:) taking a LocalInstant")
    public func errorBound(atLocal local: LocalInstant) -> TimeSpan? {
        errorBound(atLocal: local.nanoseconds).map(TimeSpan.init(nanoseconds:))
    }

    /// Through the bare form, whose default is none: the source takes no samples over the
    /// network.
    public func roundTrip(atLocal local: LocalInstant) -> TimeSpan? {
        roundTrip(atLocal: local.nanoseconds).map(TimeSpan.init(nanoseconds:))
    }

    /// Through the bare form, whose default is unknown: the rate is measured between two
    /// readings.
    public func sessionSecondsPerLocalSecond(atLocal local: LocalInstant) -> Double? {
        sessionSecondsPerLocalSecond(atLocal: local.nanoseconds)
    }

    /// Tells of nothing: the estimate is read when needed.
    public func observeChanges(_ handler: @escaping @Sendable () -> Void) -> Bool { false }

    /// `sessionTime(atLocal:)` in bare nanoseconds.
    @available(*, deprecated, message: "pass a LocalInstant; the result is a SessionInstant")
    public func sessionTime(atLocal localTime: Int64) -> Int64? {
        sessionTime(atLocal: LocalInstant(nanoseconds: localTime))?.nanoseconds
    }

    /// `localTime(atSession:)` in bare nanoseconds.
    @available(*, deprecated, message: "pass a SessionInstant; the result is a LocalInstant")
    public func localTime(atSession sessionTime: Int64) -> Int64? {
        localTime(atSession: SessionInstant(nanoseconds: sessionTime))?.nanoseconds
    }

    /// `errorBound(atLocal:)` in bare nanoseconds.
    @available(*, deprecated, message: "pass a LocalInstant; the result is a TimeSpan")
    public func errorBound(atLocal localTime: Int64) -> Int64? {
        errorBound(atLocal: LocalInstant(nanoseconds: localTime))?.nanoseconds
    }

    /// None: a source that implements neither form of `roundTrip` takes no samples over the
    /// network.
    public func roundTrip(atLocal localTime: Int64) -> Int64? { nil }

    /// Unknown: for a source that implements neither form, the rate is measured between two
    /// readings.
    public func sessionSecondsPerLocalSecond(atLocal localTime: Int64) -> Double? { nil }
}

/// The handlers a clock source calls when its estimate changes.
final class ClockChangeObservers: Sendable {
    private let handlers = Mutex<[@Sendable () -> Void]>([])

    func add(_ handler: @escaping @Sendable () -> Void) { handlers.withLock { $0.append(handler) } }

    func changed() {
        for handler in handlers.withLock({ $0 }) { handler() }
    }
}

/// How a center's sessions learn the session clock.
public enum SessionClockSetting: Sendable {
    /// Probe the relay's time service (the relay's UDP port, as the invite names it): the way
    /// participants in other processes or on other hosts do.
    case probe
    /// The relay runs in this process on `clock`: read it directly, exactly.
    case derived(from: any MonotonicDerivedClock)
}

/// The session clock estimated by probing the relay's time service over UDP.
///
/// It follows the link: when the link resumes on another relay of the invite's list,
/// `follow(server:)` probes that relay's time service instead (each participant synchronises
/// with its own relay). The new relay gets a fresh estimator; until it has a sample, the last
/// relay's estimate (as it stood when the prober moved) keeps answering, so the session clock
/// never goes blank nor jumps to an unslewed first sample of the new relay.
final class ProbedSessionClock: SessionClockSource {
    private let localClock: any LocalClock
    private let state: Mutex<State>
    /// Told each time a prober takes a sample into its estimate.
    private let observers: ClockChangeObservers

    /// The participant's loop its probers run on, or nil for a thread of each prober's own.
    private let loop: EventLoop?

    private struct State {
        var prober: ClockProber
        /// The estimate of the relay probed before, until the current prober has its own.
        var previous: SessionClock?
        var stopped = false
    }

    /// Probes `server` as a handler on `loop` (the participant's: no thread of its own), or on
    /// a thread of its own when there is no such loop.
    init(server: SocketAddress, localClock: any LocalClock, loop: EventLoop? = nil) throws(SystemCallError) {
        self.localClock = localClock
        self.loop = loop
        let observers = ClockChangeObservers()
        self.observers = observers
        let prober = try ClockProber(server: server, clock: localClock, observer: { _, _, _ in observers.changed() })
        state = Mutex(State(prober: prober))
        start(prober)
    }

    /// Starts `prober` where this clock's probers run.
    private func start(_ prober: ClockProber) {
        if let loop { prober.start(on: loop) } else { prober.start() }
    }

    /// The time service probed now.
    var server: SocketAddress { state.withLock { $0.prober.server } }

    /// Samples the current prober has taken from its relay's time service.
    var samples: Int { state.withLock { $0.prober.pollingStatistics.answered } }

    /// Probes `server` from now on, unless it is the one probed already or the clock is stopped.
    func follow(server: SocketAddress) throws(SystemCallError) {
        guard state.withLock({ !$0.stopped && $0.prober.server != server }) else { return }
        let observers = observers
        let next = try ClockProber(server: server, clock: localClock, observer: { _, _, _ in observers.changed() })
        let replaced = state.withLock { state -> ClockProber? in
            guard !state.stopped, state.prober.server != server else { return nil }
            let old = state.prober
            let estimate = old.sessionClock
            // Keep the newest estimate there is: the old relay's if it had one, else the one before.
            if estimate.isSynchronized || state.previous == nil { state.previous = estimate }
            state.prober = next
            return old
        }
        guard let replaced else { return }
        start(next)
        replaced.stop()
    }

    /// The estimate to read: the current relay's once it has one, the previous relay's until then.
    private var clock: SessionClock {
        state.withLock { state in
            let current = state.prober.sessionClock
            guard !current.isSynchronized, let previous = state.previous else { return current }
            return previous
        }
    }

    /// Tells `handler` of every sample a prober takes into its estimate (the one that follows
    /// the link to another relay too).
    func observeChanges(_ handler: @escaping @Sendable () -> Void) -> Bool {
        observers.add(handler)
        return true
    }

    func sessionTime(atLocal local: LocalInstant) -> SessionInstant? { clock.sessionTime(atLocal: local) }
    func localTime(atSession session: SessionInstant) -> LocalInstant? { clock.localTime(atSession: session) }
    func errorBound(atLocal local: LocalInstant) -> TimeSpan? { clock.errorBound(atLocal: local) }
    func roundTrip(atLocal local: LocalInstant) -> TimeSpan? {
        clock.statistics(atLocal: local).map { TimeSpan(nanoseconds: $0.medianRoundTrip) }
    }
    /// The estimator's drift, which it fitted from the samples.
    func sessionSecondsPerLocalSecond(atLocal local: LocalInstant) -> Double? { clock.sessionSecondsPerLocalSecond }

    func stop() {
        let prober = state.withLock { state -> ClockProber? in
            guard !state.stopped else { return nil }
            state.stopped = true
            return state.prober
        }
        prober?.stop()
    }
}

/// The session clock of a relay in this process, read exactly through the raw monotonic clock
/// that both clocks derive from.
struct DerivedSessionClock: SessionClockSource {
    let relayClock: any MonotonicDerivedClock
    let localClock: any MonotonicDerivedClock

    func sessionTime(atLocal local: LocalInstant) -> SessionInstant? {
        SessionInstant(nanoseconds: relayClock.localInstant(atHost: localClock.hostInstant(atLocal: local)).nanoseconds)
    }

    func localTime(atSession session: SessionInstant) -> LocalInstant? {
        localClock.localInstant(atHost: relayClock.hostInstant(atLocal: LocalInstant(nanoseconds: session.nanoseconds)))
    }

    func errorBound(atLocal local: LocalInstant) -> TimeSpan? { .zero }
    func stop() {}
}
