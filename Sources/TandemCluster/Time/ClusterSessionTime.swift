import Foundation
import Synchronization
import TandemClock
import TandemNATS
import TandemNet

/// The shell of `ClusterTimeCore`: one relay keeping the cluster's session time, on an event loop
/// of its own, over a real `NATSConnection` (announcements) and the real UDP time services
/// (`ClockProber` against the authority's).
///
/// The one call `tandem serve --cluster` makes, after binding its `RelayServer` on a
/// `ClusterSessionClock` and before starting it:
///
/// ```swift
/// let clock = ClusterSessionClock(base: epochClock)
/// let server = try RelayServer(address: address, configuration: limits, clock: clock)
/// let time = try await ClusterSessionTime.start(nats: connection, timeService: server.address, clock: clock)
/// try server.start(priority: priority)
/// …
/// await time.stop()
/// server.stop()
/// ```
///
/// `start` returns once the relay keeps the cluster's time (it is the authority, or its samples of
/// the authority span `synchronizationSpan`), so the relay serves no participant a time it will
/// later have to jump from. See `ClusterTimeCore` for the design, failures and error budget.
///
/// Confinement (why unchecked): the core, the prober, the wake-up and the waiter (every `var`)
/// belong to the shell's event loop; what reaches them from elsewhere hops there, and the
/// handlers assert it (`loop.preconditionInLoop()`). The published status and the lifecycle sit
/// in `Mutex`es.
public final class ClusterSessionTime: @unchecked Sendable {
    /// The clock this relay serves, which the shell keeps mapped to the cluster's time.
    public let clock: ClusterSessionClock
    /// This relay, as announced.
    public let member: ClusterTimeMember
    /// The settings in force.
    public let configuration: ClusterTimeConfiguration
    private let nats: NATSConnection
    private let loop: EventLoop
    private let log: (@Sendable (String) -> Void)?
    private let published = Mutex(ClusterTimeStatus())
    private let malformed = Atomic<Int>(0)
    private let lifecycle = Mutex(Lifecycle())

    private struct Lifecycle {
        /// The connection's event handler (`NATSConnection.handleEvents(_:)`).
        var watcher: UInt64?
        var subscription: UInt64?
        var stopped = false
    }

    // Confined to the loop.
    private var core: ClusterTimeCore
    private var wakeTask: ScheduledTask?
    private var prober: ClockProber?
    /// Counts the authorities followed, so that a sample from a prober since replaced is dropped.
    private var generation: UInt64 = 0
    private var readyWaiter: CheckedContinuation<Result<Void, ClusterTimeError>, Never>?
    private var isReady = false
    private var samples = 0
    private var authorityChanges = 0

    private init(nats: NATSConnection, member: ClusterTimeMember, clock: ClusterSessionClock, configuration: ClusterTimeConfiguration,
                 loop: EventLoop, log: (@Sendable (String) -> Void)?) {
        self.nats = nats
        self.member = member
        self.clock = clock
        self.configuration = configuration
        self.loop = loop
        self.log = log
        core = ClusterTimeCore(me: member, configuration: configuration, now: clock.base.instant().nanoseconds)
    }

    /// Joins the cluster's time over `nats`: announces this relay, whose time service (its shared
    /// port) others reach at `timeService`, chooses or becomes the authority, and keeps `clock`
    /// on the cluster's time until `stop()`. Returns once `clock` keeps the cluster's time; throws
    /// `notSynchronized` after `configuration.readyTimeout`, `unavailable` when NATS refuses the
    /// subscription, `invalidConfiguration` for settings out of range. `id` (default: random) names
    /// the relay in the cluster; `log` receives one line per change of authority or step.
    public static func start(nats: NATSConnection, timeService: SocketAddress, clock: ClusterSessionClock, id: String? = nil,
                             configuration: ClusterTimeConfiguration = ClusterTimeConfiguration(),
                             log: (@Sendable (String) -> Void)? = nil) async throws(ClusterTimeError) -> ClusterSessionTime {
        if let problem = configuration.problem { throw ClusterTimeError(.invalidConfiguration, reason: problem) }
        let name = id ?? randomID()
        guard ClusterTimeAnnouncement.isValidID(name) else {
            throw ClusterTimeError(.invalidConfiguration, reason: "the relay's id '\(name)' is not 1…64 printable ASCII characters")
        }
        let started = Int64((Date().timeIntervalSince1970 * 1e9).rounded())
        let member = ClusterTimeMember(id: name, started: started, timeService: advertised(timeService))
        let loop: EventLoop
        do {
            // Nothing ticks here (the core asks for its wake-ups): a slow tick keeps the loop asleep.
            loop = try EventLoop(name: "tandem-cluster-time", clock: clock.base, tickInterval: .seconds(1))
        } catch {
            throw ClusterTimeError(.unavailable, reason: "cannot start an event loop: \(error)")
        }
        let shell = ClusterSessionTime(nats: nats, member: member, clock: clock, configuration: configuration, loop: loop, log: log)
        loop.start()
        do {
            try await shell.subscribe()
        } catch {
            await shell.abandon()
            throw error
        }
        let result: Result<Void, ClusterTimeError> = await withCheckedContinuation { continuation in
            loop.execute {
                shell.readyWaiter = continuation
                shell.handle(.started)
                loop.schedule(after: TimeSpan(nanoseconds: configuration.readyTimeout)) { shell.giveUpWaiting() }
            }
        }
        if case let .failure(error) = result {
            await shell.stop()
            throw error
        }
        return shell
    }

    /// Where the status stands now (any thread).
    public var status: ClusterTimeStatus {
        var status = published.withLock { $0 }
        status.malformedAnnouncements = malformed.load(ordering: .relaxed)
        return status
    }

    /// Leaves the cluster on purpose: a goodbye (the others choose again at once), then no more
    /// probing or announcing. `clock` keeps its last mapping. Calling it again does nothing.
    public func stop() async {
        await finish(sayingGoodbye: true)
    }

    /// Stops as a killed relay would: no goodbye, so the others notice by silence
    /// (`livenessTimeout`). For tests and benchmarks of the authority's death.
    package func abandon() async {
        await finish(sayingGoodbye: false)
    }

    // MARK: NATS

    private func subscribe() async throws(ClusterTimeError) {
        // A handler on the connection's loop, no task: each event hops onto this shell's loop.
        let watcher = nats.handleEvents { [self] event in
            switch event {
            case .disconnected, .closed: loop.execute { self.handle(.connectionLost) }
            case .reconnected: loop.execute { self.handle(.connectionRestored) }
            case .connected, .serverError: break
            }
        }
        lifecycle.withLock { $0.watcher = watcher }
        do {
            let sid = try await nats.subscribe(to: configuration.subject) { [self] message in
                switch ClusterTimeAnnouncement.decode(message.payload) {
                case let .success(announcement): loop.execute { self.handle(.announcement(announcement)) }
                case .failure: malformed.add(1, ordering: .relaxed)
                }
            }
            lifecycle.withLock { $0.subscription = sid }
            // The subscription is in place at the server before the hello asks for answers.
            try await nats.flush()
        } catch {
            throw ClusterTimeError(.unavailable, reason: "cannot subscribe to \(configuration.subject): \(error)")
        }
    }

    private func finish(sayingGoodbye: Bool) async {
        let first = lifecycle.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            loop.execute { [self] in
                let directives = core.handle(.stopping, at: clock.base.instant().nanoseconds)
                perform(sayingGoodbye ? directives : directives.filter { if case .announce = $0 { false } else { true } })
                wakeTask?.cancel()
                wakeTask = nil
                if let readyWaiter {
                    self.readyWaiter = nil
                    readyWaiter.resume(returning: .failure(ClusterTimeError(.notSynchronized, reason: "stopped before synchronising")))
                }
                continuation.resume()
            }
        }
        // The announcements went to the connection's loop before what follows, and leave first.
        let (watcher, subscription) = lifecycle.withLock { ($0.watcher, $0.subscription) }
        if let watcher { nats.stopHandlingEvents(watcher) }
        if let subscription { await nats.unsubscribe(subscription) }
        if sayingGoodbye { try? await nats.flush(timeout: .seconds(1)) }
        loop.stop()
        loop.reset()
    }

    // MARK: The core

    /// Loop only.
    private func handle(_ event: ClusterTimeCore.Event) {
        loop.preconditionInLoop()
        guard !lifecycle.withLock({ $0.stopped }) else { return }
        perform(core.handle(event, at: clock.base.instant().nanoseconds))
    }

    private func perform(_ directives: [ClusterTimeCore.Directive]) {
        loop.preconditionInLoop()
        for directive in directives {
            switch directive {
            case let .announce(announcement):
                // One hop onto the connection's loop each, from this one thread: they leave in
                // the order the core chose them; one that cannot be written is dropped.
                nats.publishAndForget([(configuration.subject, announcement.encoded())])
            case let .follow(authority):
                follow(authority)
            case .stopFollowing:
                generation += 1
                prober?.stop()
                prober = nil
            case let .publish(mapping):
                clock.publish(mapping)
            case .ready:
                isReady = true
                // Whoever `start` returns to reads the status at once.
                publishStatus()
                if let readyWaiter {
                    self.readyWaiter = nil
                    readyWaiter.resume(returning: .success(()))
                }
            case let .stepped(by: jump):
                log?("cluster time: stepped by \(Double(jump) / 1e6) ms to follow \(core.authority ?? "?") (more than the step threshold off)")
            case let .authorityChanged(id):
                authorityChanges += 1
                log?("cluster time: " + (id.map { $0 == member.id ? "this relay (\($0)) is the time authority" : "following the time authority \($0)" }
                    ?? "no time authority yet"))
            case let .wake(at: deadline):
                let due = LocalInstant(nanoseconds: deadline)
                guard wakeTask?.due != due || wakeTask?.isPending != true else { continue }
                wakeTask?.cancel()
                wakeTask = loop.schedule(at: due) { [self] in handle(.tick) }
            }
        }
        publishStatus()
    }

    private func follow(_ authority: ClusterTimeMember) {
        generation += 1
        prober?.stop()
        prober = nil
        let current = generation
        let id = authority.id
        do {
            let prober = try ClockProber(server: authority.timeService, clock: clock.base, policy: configuration.polling) { [weak self] sample, _, _ in
                guard let self else { return }
                loop.execute { [self] in
                    guard generation == current else { return }
                    samples += 1
                    handle(.sample(sample, from: id))
                }
            }
            self.prober = prober
            prober.start()
        } catch {
            // A UDP socket that cannot be had: the next change of authority tries again, and
            // `start` reports not being synchronised if it never can.
            log?("cluster time: cannot probe \(authority.timeService): \(error)")
        }
    }

    private func giveUpWaiting() {
        guard let readyWaiter else { return }
        self.readyWaiter = nil
        let reason: String
        switch core.role {
        case let .following(id):
            reason = "the time authority \(id) at \(core.followed.map { "\($0.timeService)" } ?? "?") gave \(samples) samples "
                + "in \(Double(configuration.readyTimeout) / 1e9) s (is its UDP port reachable?)"
        case .waiting, .discovering:
            reason = "no relay became the time authority in \(Double(configuration.readyTimeout) / 1e9) s (\(core.peers.count) others heard)"
        case .authority:
            reason = "unexpected"
        }
        readyWaiter.resume(returning: .failure(ClusterTimeError(.notSynchronized, reason: reason)))
    }

    private func publishStatus() {
        let status = ClusterTimeStatus(
            role: core.role, ready: isReady, members: core.peers.count + 1, steps: core.steps, authorityChanges: authorityChanges,
            samples: samples, bestRoundTrip: core.estimator?.bestRoundTrip, malformedAnnouncements: 0, connected: core.connected
        )
        published.withLock { $0 = status }
    }

    // MARK: Addresses

    /// `address` with a wildcard host (0.0.0.0, ::) replaced by loopback: what relays on one host
    /// reach. Relays on several hosts announce the address they are reached at instead.
    public static func advertised(_ address: SocketAddress) -> SocketAddress {
        let wildcard = address.host == "0.0.0.0" ? "127.0.0.1" : address.host == "::" ? "::1" : nil
        guard let wildcard, let loopback = try? SocketAddress(host: wildcard, port: address.port) else { return address }
        return loopback
    }

    private static func randomID() -> String {
        var generator = SystemRandomNumberGenerator()
        return "relay-" + String(generator.next(), radix: 16)
    }
}
