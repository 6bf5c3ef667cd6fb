import Foundation
import TandemClock
import TandemWire

/// A relay without sockets: the same `RelayCore` as `RelayServer`, run on a serial event loop,
/// with links that hand frames over in memory. Tests run the same bodies against it and the real
/// relay; the sessions layer can run on it with no network at all.
///
/// By default it runs on a real `EventLoop` of its own, in real time; given a loop
/// (`init(configuration:linkConfiguration:impairment:loop:)`), it and every link joined through
/// it run on that one, so that a test on an embedded loop moves the whole relay in virtual time.
/// Every wait (an impaired delay, a paused reader) is a task scheduled on that loop.
///
/// Unreliable messages can be impaired (lost or delayed) to exercise code that must cope.
/// Call `shutdown()` when done: it stops the loop's thread when the relay owns it.
public final class InMemoryRelay: RelayConnector, @unchecked Sendable {
    /// What happens to unreliable messages on their way through.
    public struct Impairment: Sendable, Hashable {
        /// The fraction lost, 0...1.
        public var lossRate: Double
        /// How long each one is held back.
        public var delay: Duration
        /// Seeds the choice of which are lost, so that runs repeat.
        public var seed: UInt64

        /// An impairment; none by default.
        public init(lossRate: Double = 0, delay: Duration = .zero, seed: UInt64 = 1) {
            self.lossRate = lossRate
            self.delay = delay
            self.seed = seed
        }
    }

    private let loop: any SerialEventLoop
    /// The loop the relay started itself, which it stops on shutdown; nil on a loop it was given.
    private let ownedLoop: EventLoop?
    private let linkConfiguration: RelayLinkConfiguration
    private let impairment: Impairment

    // Confined to the loop.
    private var core: RelayCore
    private var endpoints: [RelayConnectionID: InMemoryRelayTransport] = [:]
    private var datagramEndpoints: [RelayToken: InMemoryRelayTransport] = [:]
    private var nextConnection: UInt64 = 0
    private var randomState: UInt64
    private var ticker: UInt64?
    /// Frames of connections paused at their session's fan-out cap, waiting in order.
    private var held: [RelayConnectionID: [RelayFrame]] = [:]

    /// A relay with these limits and timings, whose links use `linkConfiguration`, on a real event
    /// loop of its own reading `clock`.
    public convenience init(configuration: RelayCoreConfiguration = RelayCoreConfiguration(),
                            linkConfiguration: RelayLinkConfiguration = RelayLinkConfiguration(),
                            impairment: Impairment = Impairment(), clock: any LocalClock = SystemClock()) throws(SystemCallError) {
        let loop = try EventLoop(name: "tandem-relay-mem", clock: clock)
        self.init(configuration: configuration, linkConfiguration: linkConfiguration, impairment: impairment, loop: loop, owned: loop)
        loop.start()
    }

    /// A relay on `loop` (a test's embedded loop, typically), whose links run on it too; the
    /// loop's clock is the session clock. Nothing runs until the loop does.
    package convenience init(configuration: RelayCoreConfiguration = RelayCoreConfiguration(),
                             linkConfiguration: RelayLinkConfiguration = RelayLinkConfiguration(),
                             impairment: Impairment = Impairment(), loop: any SerialEventLoop) {
        self.init(configuration: configuration, linkConfiguration: linkConfiguration, impairment: impairment, loop: loop, owned: nil)
    }

    private init(configuration: RelayCoreConfiguration, linkConfiguration: RelayLinkConfiguration, impairment: Impairment,
                 loop: any SerialEventLoop, owned: EventLoop?) {
        self.loop = loop
        ownedLoop = owned
        core = RelayCore(configuration: configuration)
        self.linkConfiguration = linkConfiguration
        self.impairment = impairment
        randomState = impairment.seed
        loop.execute { [self] in
            ticker = loop.addTicker { [self] now in perform(core.onTick(at: now)) }
        }
    }

    /// Stops the relay: its own thread, when it has one; on a loop it was given, its ticker and
    /// what it holds go on the loop's next run. Links still open stop hearing from it.
    public func shutdown() {
        guard let ownedLoop else {
            loop.execute { [self] in
                if let ticker { loop.removeTicker(ticker) }
                ticker = nil
                endpoints.removeAll()
                datagramEndpoints.removeAll()
                held.removeAll()
            }
            return
        }
        ownedLoop.stop()
        ownedLoop.reset()
        endpoints.removeAll()
        datagramEndpoints.removeAll()
    }

    /// Joins (or creates) the session that `request` names.
    public func join(_ request: RelayJoinRequest) async throws(RelayError) -> any RelayLink {
        let link = makeLink(request)
        try await link.join()
        return link
    }

    /// A link for `request` on the relay's loop, not yet joined: `beginJoin` joins it without a
    /// task, for a test that drives an embedded loop itself.
    package func makeLink(_ request: RelayJoinRequest) -> RelayClientLink {
        RelayClientLink(request: request, configuration: linkConfiguration, loop: loop,
                        transport: InMemoryRelayTransport(relay: self, loop: loop))
    }

    // MARK: From the transports, on the loop

    func open(_ endpoint: InMemoryRelayTransport) -> RelayConnectionID {
        nextConnection += 1
        let id = RelayConnectionID(nextConnection)
        endpoints[id] = endpoint
        perform(core.onOpen(id, entropy: RelayAuthenticator.randomBytes(RelayCore.entropyLength), at: loop.clock.now()))
        return id
    }

    func receive(_ frame: RelayFrame, from connection: RelayConnectionID) {
        if var waiting = held[connection] {
            // Paused at its session's fan-out cap: frames wait, in order, until the pause ends.
            waiting.append(frame)
            held[connection] = waiting
            return
        }
        perform(core.onFrame(frame, from: connection, at: loop.clock.now()))
    }

    /// Holds `connection`'s frames until `until`, then hands them to the core in order.
    private func pause(_ connection: RelayConnectionID, until: Int64) {
        guard held[connection] == nil else { return }
        held[connection] = []
        loop.schedule(at: until) { [self] in resume(connection) }
    }

    private func resume(_ connection: RelayConnectionID) {
        guard var waiting = held.removeValue(forKey: connection) else { return }
        while !waiting.isEmpty {
            let frame = waiting.removeFirst()
            perform(core.onFrame(frame, from: connection, at: loop.clock.now()))
            // Paused again: the rest wait behind the new pause.
            if held[connection] != nil {
                held[connection]?.insert(contentsOf: waiting, at: 0)
                return
            }
        }
    }

    func close(_ connection: RelayConnectionID) {
        endpoints[connection] = nil
        held[connection] = nil
        perform(core.onClose(connection, at: loop.clock.now()))
    }

    func register(_ token: RelayToken, _ endpoint: InMemoryRelayTransport) {
        guard core.knows(token) else { return }
        datagramEndpoints[token] = endpoint
        core.onDatagramsBound(token, at: loop.clock.now())
    }

    func unregister(_ token: RelayToken) { datagramEndpoints[token] = nil }

    /// An unreliable message on its way in, through the impairment.
    func route(_ datagram: RelayDatagram) {
        guard !isLost() else { return }
        let deliver: @Sendable () -> Void = { [self] in perform(core.onDatagram(datagram, at: loop.clock.now())) }
        if impairment.delay > .zero {
            let (seconds, attoseconds) = impairment.delay.components
            loop.schedule(after: seconds * 1_000_000_000 + attoseconds / 1_000_000_000, deliver)
        } else {
            loop.execute(deliver)
        }
    }

    // MARK: Inside

    private func perform(_ directives: [RelayDirective]) {
        for directive in directives {
            switch directive {
            case let .send(connection, frame):
                endpoints[connection]?.deliver(frame, on: connection)
            case let .close(connection):
                // In memory nothing waits to be written: the frames before the close are delivered.
                if let endpoint = endpoints.removeValue(forKey: connection) {
                    endpoint.closed(connection)
                }
                held[connection] = nil
                perform(core.onClose(connection, at: loop.clock.now()))
            case let .sendDatagram(token, datagram):
                datagramEndpoints[token]?.deliver(datagram)
            case let .forgetToken(token):
                datagramEndpoints[token] = nil
            case .bindDatagrams, .answerDatagram:
                // In memory there are no addresses: registrations bind directly (`register`).
                break
            case let .notifyWhenDrained(connection):
                // Nothing waits to be written in memory: the connection is drained as soon as
                // the frames before this are handed over. A task, so that a long load goes a
                // window at a time between other work instead of all at once.
                loop.execute { [self] in perform(core.onDrained(connection, at: loop.clock.now())) }
            case let .pauseReading(connection, until):
                pause(connection, until: until)
            }
        }
    }

    /// Whether the next unreliable message is lost (SplitMix64, seeded, so that runs repeat).
    private func isLost() -> Bool {
        guard impairment.lossRate > 0 else { return false }
        randomState &+= 0x9E37_79B9_7F4A_7C15
        var mixed = randomState
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        mixed ^= mixed >> 31
        return Double(mixed >> 11) * 0x1p-53 < impairment.lossRate
    }
}
