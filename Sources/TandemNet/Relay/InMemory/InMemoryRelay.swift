import Foundation
import TandemClock
import TandemWire

/// A relay without sockets: the same `RelayCore` as `RelayServer`, run on a serial event loop,
/// with links that hand frames over in memory. Tests run the same bodies against it and the real
/// relay; the sessions layer can run on it with no network at all.
///
/// By default it runs on a real `EventLoop` of its own, in real time; given a loop
/// (`init(configuration:linkConfiguration:impairment:seed:loop:)`), it and every link joined through
/// it run on that one, so that a test on an embedded loop moves the whole relay in virtual time.
/// Every wait (an impaired delay, a paused reader) is a task scheduled on that loop.
///
/// The path between each link and the relay can be impaired with the one `Impairment` model
/// the impairment proxy and the simulated network use, decided by an `ImpairmentSchedule`
/// seeded with `seed`: frames are delayed both ways and stay in order, as a TCP stream's bytes
/// do; datagrams are delayed, lost, reordered and duplicated independently, each way.
/// Call `shutdown()` when done: it stops the loop's thread when the relay owns it.
public final class InMemoryRelay: RelayConnector, Sendable {
    let loop: any SerialEventLoop
    /// The loop the relay started itself, which it stops on shutdown; nil on a loop it was given.
    private let ownedLoop: EventLoop?
    private let linkConfiguration: RelayLinkConfiguration
    /// Whether anything is impaired; when not, frames and datagrams are handed over at once.
    private let impaired: Bool

    // Confined to the loop: each held `Confined` to it, which asserts every access.
    private var core: RelayCore {
        get { boundCore.value }
        _modify { yield &boundCore.value }
    }
    private let boundCore: Confined<RelayCore>
    private var endpoints: [RelayConnectionID: InMemoryRelayTransport] {
        get { boundEndpoints.value }
        _modify { yield &boundEndpoints.value }
    }
    private let boundEndpoints: Confined<[RelayConnectionID: InMemoryRelayTransport]>
    private var datagramEndpoints: [RelayToken: InMemoryRelayTransport] {
        get { boundDatagramEndpoints.value }
        _modify { yield &boundDatagramEndpoints.value }
    }
    private let boundDatagramEndpoints: Confined<[RelayToken: InMemoryRelayTransport]>
    private var nextConnection: UInt64 {
        get { boundNextConnection.value }
        _modify { yield &boundNextConnection.value }
    }
    private let boundNextConnection: Confined<UInt64>
    private var schedule: ImpairmentSchedule {
        get { boundSchedule.value }
        _modify { yield &boundSchedule.value }
    }
    private let boundSchedule: Confined<ImpairmentSchedule>
    private var ticker: UInt64? {
        get { boundTicker.value }
        _modify { yield &boundTicker.value }
    }
    private let boundTicker: Confined<UInt64?>
    /// Frames of connections paused at their session's fan-out cap, waiting in order.
    private var held: [RelayConnectionID: [RelayFrame]] {
        get { boundHeld.value }
        _modify { yield &boundHeld.value }
    }
    private let boundHeld: Confined<[RelayConnectionID: [RelayFrame]]>

    /// A relay with these limits and timings, whose links use `linkConfiguration`, on a real event
    /// loop of its own reading `clock`; the paths to it impaired as `impairment` says (not at all
    /// by default), with decisions drawn from `seed`. An impairment with a `problem` is a
    /// programming error: it traps.
    public convenience init(configuration: RelayCoreConfiguration = RelayCoreConfiguration(),
                            linkConfiguration: RelayLinkConfiguration = RelayLinkConfiguration(),
                            impairment: Impairment = .none, seed: UInt64 = 1,
                            clock: any LocalClock = SystemClock()) throws(SystemCallError) {
        let loop = try EventLoop(name: "tandem-relay-mem", clock: clock)
        self.init(configuration: configuration, linkConfiguration: linkConfiguration, impairment: impairment, seed: seed,
                  loop: loop, owned: loop)
        loop.start()
    }

    /// A relay on `loop` (a test's embedded loop, typically), whose links run on it too; the
    /// loop's clock is the session clock. Nothing runs until the loop does.
    package convenience init(configuration: RelayCoreConfiguration = RelayCoreConfiguration(),
                             linkConfiguration: RelayLinkConfiguration = RelayLinkConfiguration(),
                             impairment: Impairment = .none, seed: UInt64 = 1, loop: any SerialEventLoop) {
        self.init(configuration: configuration, linkConfiguration: linkConfiguration, impairment: impairment, seed: seed,
                  loop: loop, owned: nil)
    }

    private init(configuration: RelayCoreConfiguration, linkConfiguration: RelayLinkConfiguration, impairment: Impairment,
                 seed: UInt64, loop: any SerialEventLoop, owned: EventLoop?) {
        precondition(impairment.problem == nil, "an impossible impairment: \(impairment.problem ?? "")")
        self.loop = loop
        ownedLoop = owned
        var relayCore = RelayCore(configuration: configuration)
        // Invite tickets are checked on the Unix clock, as the network relay checks them: the
        // loop's clock from the Unix time it started at.
        relayCore.unixOffset = Int64(Date().timeIntervalSince1970 * 1_000_000_000) - loop.clock.instant().nanoseconds
        boundCore = Confined(relayCore, to: loop)
        self.linkConfiguration = linkConfiguration
        impaired = !impairment.isNone
        boundSchedule = Confined(ImpairmentSchedule(impairment: impairment, seed: seed), to: loop)
        boundEndpoints = Confined([:], to: loop)
        boundDatagramEndpoints = Confined([:], to: loop)
        boundNextConnection = Confined(0, to: loop)
        boundTicker = Confined(nil, to: loop)
        boundHeld = Confined([:], to: loop)
        loop.execute { [self] in
            ticker = loop.addTicker { [self] now in perform(core.onTick(at: now.nanoseconds)) }
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
        loop.preconditionInLoop()
        nextConnection += 1
        let id = RelayConnectionID(nextConnection)
        endpoints[id] = endpoint
        perform(core.onOpen(id, entropy: RelayAuthenticator.randomBytes(RelayCore.entropyLength), at: loop.clock.instant().nanoseconds))
        return id
    }

    /// Carries `body` (a frame, or the close after the frames) up `connection`'s stream: at once,
    /// or when the impaired path delivers it, after what went up before it. Loop only.
    func carryUp(_ connection: RelayConnectionID, _ body: @escaping @Sendable () -> Void) {
        loop.preconditionInLoop()
        guard impaired else {
            loop.execute(body)
            return
        }
        loop.schedule(at: LocalInstant(nanoseconds: schedule.onChunk(stream: connection.value, .up, at: loop.now.nanoseconds)), body)
    }

    /// Carries `body` down `connection`'s stream to its link: at once, or when the impaired path
    /// delivers it, after what went down before it.
    private func carryDown(_ connection: RelayConnectionID, _ body: @escaping @Sendable () -> Void) {
        guard impaired else {
            body()
            return
        }
        loop.schedule(at: LocalInstant(nanoseconds: schedule.onChunk(stream: connection.value, .down, at: loop.now.nanoseconds)), body)
    }

    /// Carries a datagram `direction`: at once, or at each instant the impaired path delivers it
    /// (none when lost, two when duplicated).
    private func carry(datagram direction: PathDirection, _ body: @escaping @Sendable () -> Void) {
        guard impaired else {
            if direction == .up { loop.execute(body) } else { body() }
            return
        }
        for due in schedule.onDatagram(direction, at: loop.now.nanoseconds).deliveries {
            loop.schedule(at: LocalInstant(nanoseconds: due), body)
        }
    }

    func receive(_ frame: RelayFrame, from connection: RelayConnectionID) {
        loop.preconditionInLoop()
        if var waiting = held[connection] {
            // Paused at its session's fan-out cap: frames wait, in order, until the pause ends.
            waiting.append(frame)
            held[connection] = waiting
            return
        }
        perform(core.onFrame(frame, from: connection, at: loop.clock.instant().nanoseconds))
    }

    /// Holds `connection`'s frames until `until`, then hands them to the core in order.
    private func pause(_ connection: RelayConnectionID, until: Int64) {
        guard held[connection] == nil else { return }
        held[connection] = []
        loop.schedule(at: LocalInstant(nanoseconds: until)) { [self] in resume(connection) }
    }

    private func resume(_ connection: RelayConnectionID) {
        guard var waiting = held.removeValue(forKey: connection) else { return }
        while !waiting.isEmpty {
            let frame = waiting.removeFirst()
            perform(core.onFrame(frame, from: connection, at: loop.clock.instant().nanoseconds))
            // Paused again: the rest wait behind the new pause.
            if held[connection] != nil {
                held[connection]?.insert(contentsOf: waiting, at: 0)
                return
            }
        }
    }

    func close(_ connection: RelayConnectionID) {
        loop.preconditionInLoop()
        endpoints[connection] = nil
        held[connection] = nil
        schedule.onStreamClosed(connection.value)
        perform(core.onClose(connection, at: loop.clock.instant().nanoseconds))
    }

    func register(_ token: RelayToken, _ endpoint: InMemoryRelayTransport) {
        loop.preconditionInLoop()
        guard core.knows(token) else { return }
        datagramEndpoints[token] = endpoint
        core.onDatagramsBound(token, at: loop.clock.instant().nanoseconds)
    }

    func unregister(_ token: RelayToken) { datagramEndpoints[token] = nil }

    /// An unreliable message on its way in, through the impairment. Loop only.
    func route(_ datagram: RelayDatagram) {
        loop.preconditionInLoop()
        carry(datagram: .up) { [self] in perform(core.onDatagram(datagram, at: loop.clock.instant().nanoseconds)) }
    }

    // MARK: Inside

    private func perform(_ directives: [RelayDirective]) {
        for directive in directives {
            switch directive {
            case let .send(connection, frame):
                guard let endpoint = endpoints[connection] else { break }
                carryDown(connection) { endpoint.deliver(frame, on: connection) }
            case let .close(connection):
                // In memory nothing waits to be written: the frames before the close are
                // delivered, and the close follows them down the same path.
                if let endpoint = endpoints.removeValue(forKey: connection) {
                    carryDown(connection) { endpoint.closed(connection) }
                }
                held[connection] = nil
                schedule.onStreamClosed(connection.value)
                perform(core.onClose(connection, at: loop.clock.instant().nanoseconds))
            case let .sendDatagram(token, datagram):
                guard let endpoint = datagramEndpoints[token] else { break }
                carry(datagram: .down) { endpoint.deliver(datagram) }
            case let .forgetToken(token):
                datagramEndpoints[token] = nil
            case .bindDatagrams, .answerDatagram:
                // In memory there are no addresses: registrations bind directly (`register`).
                break
            case let .notifyWhenDrained(connection):
                // Nothing waits to be written in memory: the connection is drained as soon as
                // the frames before this are handed over. A task, so that a long load goes a
                // window at a time between other work instead of all at once.
                loop.execute { [self] in perform(core.onDrained(connection, at: loop.clock.instant().nanoseconds)) }
            case let .pauseReading(connection, until):
                pause(connection, until: until)
            }
        }
    }
}

extension InMemoryRelay: ParticipantLoopConnector {
    /// The relay's loop: its links run on it.
    package func participantLoop() -> any SerialEventLoop { loop }

    /// Joins on the relay's loop, the only one its links run on.
    package func join(_ request: RelayJoinRequest, on loop: any SerialEventLoop) async throws(RelayError) -> any RelayLink {
        try await join(request)
    }
}
