import TandemWire

/// A link's pipe into an `InMemoryRelay`: the same frames as on a socket, handed over on the
/// relay's event loop. Calls into the relay are queued as loop tasks, never made re-entrantly,
/// so that each side sees the other's frames in order, as a TCP stream would give them.
///
/// Confined to the relay's loop: what it changes is held `Confined` to that loop, which asserts
/// every access; it crosses into loop tasks only to come back to that same thread.
final class InMemoryRelayTransport: RelayTransport, Sendable {
    var delegate: (any RelayTransportDelegate)? {
        get { weakDelegate.value.delegate }
        set { weakDelegate.value.delegate = newValue }
    }
    let maximumDatagramBody = RelayDatagram.maximumBody
    private let relay: InMemoryRelay
    private let loop: any SerialEventLoop
    private let weakDelegate: Confined<WeakTransportDelegate>
    private var connection: RelayConnectionID? {
        get { boundConnection.value }
        set { boundConnection.value = newValue }
    }
    private let boundConnection: Confined<RelayConnectionID?>
    private var token: RelayToken? {
        get { boundToken.value }
        set { boundToken.value = newValue }
    }
    private let boundToken: Confined<RelayToken?>
    private var suspendedUntil: Int64 {
        get { boundSuspendedUntil.value }
        set { boundSuspendedUntil.value = newValue }
    }
    private let boundSuspendedUntil: Confined<Int64>
    private var lastRegistration: Int64 {
        get { boundLastRegistration.value }
        set { boundLastRegistration.value = newValue }
    }
    private let boundLastRegistration: Confined<Int64>

    /// How often the registration is refreshed (the relay forgets it after 30 s by default).
    private static let registrationRefresh: Int64 = 5_000_000_000

    init(relay: InMemoryRelay, loop: any SerialEventLoop) {
        self.relay = relay
        self.loop = loop
        weakDelegate = Confined(WeakTransportDelegate(), to: loop)
        boundConnection = Confined(nil, to: loop)
        boundToken = Confined(nil, to: loop)
        boundSuspendedUntil = Confined(0, to: loop)
        boundLastRegistration = Confined(0, to: loop)
    }

    /// Connects to the one in-memory relay, whatever the index.
    func connect(to _: Int) {
        guard loop.clock.instant().nanoseconds >= suspendedUntil else {
            loop.execute { [self] in delegate?.transportDisconnected("interrupted by the test hook") }
            return
        }
        loop.execute { [self] in
            connection = relay.open(self)
            delegate?.transportConnected()
        }
    }

    func transmit(_ frames: [RelayFrame]) {
        loop.preconditionInLoop()
        guard let connection else { return }
        for frame in frames { relay.carryUp(connection) { [relay] in relay.receive(frame, from: connection) } }
    }

    func disconnect() {
        guard let connection else { return }
        self.connection = nil
        // After the frames already on their way up, as a TCP FIN follows the bytes before it.
        relay.carryUp(connection) { [relay] in relay.close(connection) }
    }

    func registerDatagrams(token: [UInt8]) {
        let token = RelayToken(token)
        self.token = token
        lastRegistration = loop.clock.instant().nanoseconds
        loop.execute { [self] in
            relay.register(token, self)
            delegate?.transportDatagramsReady()
        }
    }

    func sendDatagram(_ datagram: RelayDatagram) {
        relay.route(datagram)
    }

    func tick(at now: Int64) {
        // Registrations expire unless refreshed, in memory as on the network.
        guard let token, now - lastRegistration >= InMemoryRelayTransport.registrationRefresh else { return }
        lastRegistration = now
        loop.execute { [relay, self] in relay.register(token, self) }
    }

    func close() {
        disconnect()
        if let token { loop.execute { [relay] in relay.unregister(token) } }
        token = nil
    }

    func interrupt(until: Int64) {
        suspendedUntil = until
        guard connection != nil else { return }
        disconnect()
        delegate?.transportDisconnected("interrupted by the test hook")
    }

    // MARK: From the relay

    /// A frame from the relay on `connection`.
    func deliver(_ frame: RelayFrame, on connection: RelayConnectionID) {
        loop.preconditionInLoop()
        guard connection == self.connection else { return }
        delegate?.transportReceived(frame)
    }

    /// The relay closed `connection`.
    func closed(_ connection: RelayConnectionID) {
        guard connection == self.connection else { return }
        self.connection = nil
        delegate?.transportDisconnected("closed by the relay")
    }

    /// A datagram from the relay.
    func deliver(_ datagram: RelayDatagram) {
        delegate?.transportReceived(datagram)
    }
}
