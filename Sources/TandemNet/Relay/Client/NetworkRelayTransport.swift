#if canImport(Glibc)
import Glibc
#endif
import TandemWire

/// A link's TCP connection and UDP socket to a `RelayServer`, driven by the link's event loop.
///
/// Confined to that loop: what it changes is held `Confined` to the loop, which asserts every
/// access; it crosses into loop tasks only to come back to the same thread.
final class NetworkRelayTransport: RelayTransport, Sendable {
    var delegate: (any RelayTransportDelegate)? {
        get { weakDelegate.value.delegate }
        set { weakDelegate.value.delegate = newValue }
    }
    private let weakDelegate: Confined<WeakTransportDelegate>
    let maximumDatagramBody = RelayDatagram.maximumBody
    /// The link's relays, in its list's order.
    private let addresses: [SocketAddress]
    /// The relay of the current (or last) connection, where datagrams go too.
    private var address: SocketAddress {
        get { boundAddress.value }
        _modify { yield &boundAddress.value }
    }
    private let boundAddress: Confined<SocketAddress>
    private let loop: EventLoop
    private var socket: TCPSocket? {
        get { boundSocket.value }
        _modify { yield &boundSocket.value }
    }
    private let boundSocket: Confined<TCPSocket?>
    private var connected: Bool {
        get { boundConnected.value }
        _modify { yield &boundConnected.value }
    }
    private let boundConnected: Confined<Bool>
    private var reader: RelayFrameReader {
        get { boundReader.value }
        _modify { yield &boundReader.value }
    }
    private let boundReader: Confined<RelayFrameReader>
    private var output: RelayFrameOutput {
        get { boundOutput.value }
        _modify { yield &boundOutput.value }
    }
    private let boundOutput: Confined<RelayFrameOutput>
    private var datagrams: UDPSocket? {
        get { boundDatagrams.value }
        _modify { yield &boundDatagrams.value }
    }
    private let boundDatagrams: Confined<UDPSocket?>
    private var token: [UInt8]? {
        get { boundToken.value }
        _modify { yield &boundToken.value }
    }
    private let boundToken: Confined<[UInt8]?>
    private var registered: Bool {
        get { boundRegistered.value }
        _modify { yield &boundRegistered.value }
    }
    private let boundRegistered: Confined<Bool>
    private var lastRegistration: Int64 {
        get { boundLastRegistration.value }
        _modify { yield &boundLastRegistration.value }
    }
    private let boundLastRegistration: Confined<Int64>
    private var suspendedUntil: Int64 {
        get { boundSuspendedUntil.value }
        _modify { yield &boundSuspendedUntil.value }
    }
    private let boundSuspendedUntil: Confined<Int64>
    private var readBuffer: [UInt8] {
        get { boundReadBuffer.value }
        _modify { yield &boundReadBuffer.value }
    }
    private let boundReadBuffer: Confined<[UInt8]>
    private var datagramBuffer: [UInt8] {
        get { boundDatagramBuffer.value }
        _modify { yield &boundDatagramBuffer.value }
    }
    private let boundDatagramBuffer: Confined<[UInt8]>

    /// Registration (register, the relay's cookie, its echo, the relay's confirmation) is sent
    /// again this often until confirmed, then this often to keep it fresh: the relay forgets a
    /// registration that is not refreshed within its lifetime (30 s by default).
    private static let registrationRetry: Int64 = 100_000_000
    private static let registrationRefresh: Int64 = 5_000_000_000

    /// A transport to the relays at `addresses` (at least one), the first until told otherwise.
    init(addresses: [SocketAddress], loop: EventLoop) {
        precondition(!addresses.isEmpty, "a transport needs a relay")
        self.addresses = addresses
        self.loop = loop
        weakDelegate = Confined(WeakTransportDelegate(), to: loop)
        boundAddress = Confined(addresses[0], to: loop)
        boundSocket = Confined(nil, to: loop)
        boundConnected = Confined(false, to: loop)
        boundReader = Confined(RelayFrameReader(), to: loop)
        boundOutput = Confined(RelayFrameOutput(), to: loop)
        boundDatagrams = Confined(nil, to: loop)
        boundToken = Confined(nil, to: loop)
        boundRegistered = Confined(false, to: loop)
        boundLastRegistration = Confined(0, to: loop)
        boundSuspendedUntil = Confined(0, to: loop)
        boundReadBuffer = Confined([UInt8](repeating: 0, count: 64 * 1024), to: loop)
        boundDatagramBuffer = Confined([UInt8](repeating: 0, count: 65_536), to: loop)
    }

    func connect(to relay: Int) {
        loop.preconditionInLoop()
        guard loop.clock.instant().nanoseconds >= suspendedUntil else {
            return later { $0.transportDisconnected("interrupted by the test hook") }
        }
        teardown()
        address = addresses[relay]
        do {
            let socket = try TCPSocket(family: address.family)
            try socket.setNoDelay()
            self.socket = socket
            let immediate = try socket.connect(to: address)
            loop.register(socket.descriptor, interest: immediate ? .readable : .writable) { [weak self, weak loop = self.loop, socket] readable, writable, failed in
                guard let self else {
                    // Gone without closing its socket: the registration would hold it open, and
                    // once the peer closes, its end of stream would wake the loop at every pass.
                    loop?.deregister(socket.descriptor)
                    return
                }
                self.service(socket, readable: readable || failed, writable: writable)
            }
            if immediate { established() }
        } catch {
            teardown()
            later { [address] in $0.transportDisconnected("cannot connect to \(address): \(error)") }
        }
    }

    func transmit(_ frames: [RelayFrame]) {
        loop.preconditionInLoop()
        guard connected else { return }
        for frame in frames { output.append(frame) }
        flush()
    }

    func disconnect() { teardown() }

    func registerDatagrams(token: [UInt8]) {
        loop.preconditionInLoop()
        self.token = token
        registered = false
        // A datagram path registered with another relay (before a move) is dropped.
        if let datagrams { loop.deregister(datagrams.descriptor) }
        datagrams = nil
        do {
            let datagrams = try UDPSocket(family: address.family)
            try datagrams.connect(to: address)
            self.datagrams = datagrams
            loop.register(datagrams.descriptor, interest: .readable) { [weak self] _, _, _ in self?.receiveDatagrams() }
            register(at: loop.clock.instant().nanoseconds)
        } catch {
            // Without UDP, unreliable messages still go over TCP; the join goes on.
            datagrams = nil
            self.token = nil
        }
    }

    func sendDatagram(_ datagram: RelayDatagram) {
        // At most once: a full send buffer or an error loses the datagram, as the network may.
        _ = try? datagrams?.send(datagram.encoded())
    }

    func tick(at now: Int64) {
        loop.preconditionInLoop()
        guard token != nil else { return }
        let interval = registered ? NetworkRelayTransport.registrationRefresh : NetworkRelayTransport.registrationRetry
        if now - lastRegistration >= interval { register(at: now) }
    }

    func close() {
        teardown()
        if let datagrams { loop.deregister(datagrams.descriptor) }
        datagrams = nil
        token = nil
    }

    func interrupt(until: Int64) {
        suspendedUntil = until
        // Shut the socket under the link, as a failing network would: the read handler then
        // finds the end of the stream and reports the loss the ordinary way.
        socket?.shutdown()
    }

    // MARK: Inside

    private func later(_ report: @escaping @Sendable (any RelayTransportDelegate) -> Void) {
        loop.execute { [weak self] in
            guard let delegate = self?.delegate else { return }
            report(delegate)
        }
    }

    private func established() {
        guard let socket else { return }
        connected = true
        loop.setInterest(socket.descriptor, .readable)
        delegate?.transportConnected()
    }

    private func service(_ socket: TCPSocket, readable: Bool, writable: Bool) {
        loop.preconditionInLoop()
        guard socket === self.socket else { return }
        if !connected {
            let error = socket.pendingError()
            guard error == 0 else {
                teardown()
                return (delegate?.transportDisconnected("cannot connect to \(address): \(SystemCallError(call: "connect", errno: error))")) ?? ()
            }
            established()
            return
        }
        if writable { flush() }
        if readable { read(socket) }
    }

    private func read(_ socket: TCPSocket) {
        let end: TCPSocket.ReadEnd
        do {
            end = try socket.readAvailable(into: &readBuffer) { bytes in
                reader.append(bytes)
                while socket === self.socket {
                    let frame: RelayFrame?
                    do throws(WireError) {
                        frame = try reader.next()
                    } catch {
                        teardown()
                        delegate?.transportMalformed(error)
                        return false
                    }
                    guard let frame else { break }
                    delegate?.transportReceived(frame)
                }
                return socket === self.socket
            }
        } catch {
            return lost("\(error)")
        }
        if end == .closed, socket === self.socket { lost("the relay closed the connection") }
    }

    private func flush() {
        guard let socket, connected else { return }
        do {
            let done = try output.flush(to: socket)
            loop.setInterest(socket.descriptor, done ? .readable : [.readable, .writable])
        } catch {
            lost("\(error)")
        }
    }

    private func lost(_ reason: String) {
        teardown()
        delegate?.transportDisconnected(reason)
    }

    private func teardown() {
        if let socket {
            loop.deregister(socket.descriptor)
            socket.shutdown()
        }
        socket = nil
        connected = false
        reader = RelayFrameReader()
        output.removeAll()
    }

    private func register(at now: Int64) {
        guard let token else { return }
        lastRegistration = now
        sendDatagram(.register(token: token))
    }

    private func receiveDatagrams() {
        loop.preconditionInLoop()
        for _ in 0..<256 {
            guard let datagrams, let received = try? datagrams.receive(into: &datagramBuffer) else { return }
            guard received.length <= datagramBuffer.count,
                  let datagram = try? RelayDatagram.decode(datagramBuffer[..<received.length]) else { continue }
            switch datagram {
            case let .cookie(answered, cookie) where answered == token:
                // The relay answers a registration with a cookie; echoing it from this socket
                // proves the relay that datagrams sent here arrive, and only then binds.
                sendDatagram(.confirm(token: answered, cookie: cookie))
            case let .registered(confirmed) where confirmed == token:
                if !registered {
                    registered = true
                    delegate?.transportDatagramsReady()
                }
            case .delivery:
                delegate?.transportReceived(datagram)
            default:
                continue
            }
        }
    }
}
