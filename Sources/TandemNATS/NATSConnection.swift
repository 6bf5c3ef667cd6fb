#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import TandemClock
import TandemNet

/// A connection to a NATS server (or cluster), written from scratch on Tandem's event loop:
/// publish, subscribe, request/reply, flush, with keepalive, reconnection across the cluster's
/// servers, resubscription and a bounded buffer while disconnected.
///
/// The protocol lives in the pure `NATSConnectionCore`; this class is its shell on an
/// `EventLoop` over a non-blocking `TCPSocket`, and the only writer of the core and the socket.
/// The async methods hop onto the loop and resume their caller when the core says the operation
/// is done. Errors are `NATSError`s naming the server and the reason.
///
/// Confinement (why unchecked): the core, the socket and the tables of subscribers and waiters
/// are read and written only on the loop's thread; what carries out the core's directives
/// (`perform`), the socket's handler and the methods named `…OnLoop` assert it
/// (`preconditionInLoop`).
public final class NATSConnection: @unchecked Sendable {
    /// The loop the connection runs on, and its deliveries; what belongs beside them (a JetStream
    /// consumer's watchdog) is scheduled there too. It runs until the connection is released,
    /// closed or not.
    let loop: EventLoop
    private let ownsLoop: Bool
    private let configuration: NATSConfiguration
    private let status = Mutex(Status())

    private struct Status {
        var server: NATSServerAddress?
        var info: NATSServerInfo?
        var closed = false
    }

    // Confined to the loop's thread.
    private var core: NATSConnectionCore
    private var socket: TCPSocket?
    private var socketOpen = false
    /// Counts connection attempts, so that a late answer (a name resolved, an error reported on
    /// the next pass) for an attempt since replaced is recognised and dropped.
    private var attempt: UInt64 = 0
    private var output: [UInt8] = []
    private var outputStart = 0
    private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    private var wakeTask: ScheduledTask?
    private var requestWaiters: [UInt64: @Sendable (Result<NATSMessage, NATSError>) -> Void] = [:]
    private var flushWaiters: [UInt64: CheckedContinuation<Result<Void, NATSError>, Never>] = [:]
    private var subscribers: [UInt64: Subscriber] = [:]
    private var startWaiter: CheckedContinuation<Result<Void, NATSError>, Never>?
    private var observers: [UInt64: AsyncStream<NATSConnectionEvent>.Continuation] = [:]
    private var eventHandlers: [UInt64: @Sendable (NATSConnectionEvent) -> Void] = [:]
    /// The last number given to an event handler (`handleEvents(_:)`).
    private let nextHandler = Atomic<UInt64>(0)
    private var nextObserver: UInt64 = 0

    private enum Subscriber {
        case stream(AsyncThrowingStream<NATSMessage, any Error>.Continuation, NATSSubscription.State)
        case handler(@Sendable (NATSMessage) -> Void)
    }

    /// The most bytes queued for a connected server that is not reading them before the
    /// connection counts as broken.
    private static let maximumOutput = 64 * 1024 * 1024

    private init(url: NATSURL, configuration: NATSConfiguration, loop: EventLoop, ownsLoop: Bool) {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        let token = String((0..<22).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
        core = NATSConnectionCore(url: url, configuration: configuration, inboxPrefix: "_INBOX.\(token)", seed: generator.next())
        self.configuration = configuration
        self.loop = loop
        self.ownsLoop = ownsLoop
    }

    deinit {
        guard ownsLoop else { return }
        let loop = loop
        if loop.inLoop {
            // The last reference went on the loop's own thread, which cannot wait for itself.
            Thread.detachNewThread { loop.stop(); loop.reset() }
        } else {
            loop.stop()
            loop.reset()
        }
    }

    // MARK: Connecting

    /// Connects to the servers of `url` (`nats://[USER:PASS@]HOST:PORT[,HOST:PORT…]` or
    /// `nats://TOKEN@HOST:PORT`), on an event loop of its own; returns once the handshake with
    /// one of them is done. Throws `invalidURL`, `authorizationFailed`, `cannotConnect` or
    /// `timeout`, naming the server.
    public static func connect(to url: String, configuration: NATSConfiguration = NATSConfiguration()) async throws(NATSError) -> NATSConnection {
        try await connect(to: try NATSURL(parsing: url), configuration: configuration)
    }

    /// Connects to `url`'s servers on an event loop of its own.
    public static func connect(to url: NATSURL, configuration: NATSConfiguration = NATSConfiguration()) async throws(NATSError) -> NATSConnection {
        let loop: EventLoop
        do {
            loop = try EventLoop(name: "tandem-nats")
        } catch {
            throw NATSError(.cannotConnect, reason: "cannot start an event loop: \(error)")
        }
        loop.start()
        return try await connect(to: url, configuration: configuration, loop: loop, ownsLoop: true)
    }

    /// Connects to `url`'s servers on `loop`, which another shell (a relay's) already runs; the
    /// connection never stops that loop.
    static func connect(to url: NATSURL, configuration: NATSConfiguration = NATSConfiguration(), on loop: EventLoop) async throws(NATSError) -> NATSConnection {
        try await connect(to: url, configuration: configuration, loop: loop, ownsLoop: false)
    }

    private static func connect(to url: NATSURL, configuration: NATSConfiguration, loop: EventLoop, ownsLoop: Bool) async throws(NATSError) -> NATSConnection {
        let connection = NATSConnection(url: url, configuration: configuration, loop: loop, ownsLoop: ownsLoop)
        let result: Result<Void, NATSError> = await withCheckedContinuation { continuation in
            loop.execute {
                connection.startWaiter = continuation
                connection.perform(connection.core.start(at: loop.clock.instant().nanoseconds))
            }
        }
        try result.get()
        return connection
    }

    // MARK: State

    /// The server connected to now; nil while reconnecting or once closed.
    public var connectedServer: NATSServerAddress? { status.withLock { $0.server } }
    /// The `INFO` of the server connected to now (or last).
    public var serverInfo: NATSServerInfo? { status.withLock { $0.info } }
    /// Whether the connection is closed for good.
    public var isClosed: Bool { status.withLock { $0.closed } }

    /// What happens to the connection from now on (disconnections, reconnections, the close),
    /// newest kept when the reader lags by more than 64 events.
    public func events() -> AsyncStream<NATSConnectionEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: NATSConnectionEvent.self, bufferingPolicy: .bufferingNewest(64))
        loop.execute { [self] in
            guard !core.isClosed else { return continuation.finish() }
            nextObserver += 1
            let id = nextObserver
            observers[id] = continuation
            continuation.onTermination = { [weak self] _ in
                guard let connection = self else { return }
                connection.loop.execute { connection.observers[id] = nil }
            }
        }
        return stream
    }

    /// Calls `handler` on the connection's loop with what happens to the connection from now
    /// on, as `events()` yields it, until `stopHandlingEvents(_:)` or the close (the last event
    /// handled): for a shell that has nothing to wait for, with no task. Any thread; returns the
    /// handler's number.
    @discardableResult
    package func handleEvents(_ handler: @escaping @Sendable (NATSConnectionEvent) -> Void) -> UInt64 {
        let id = nextHandler.wrappingAdd(1, ordering: .relaxed).newValue
        loop.execute { [self] in
            guard !core.isClosed else { return }
            eventHandlers[id] = handler
        }
        return id
    }

    /// Stops calling handler `id`. Any thread.
    package func stopHandlingEvents(_ id: UInt64) {
        loop.execute { [self] in eventHandlers[id] = nil }
    }

    // MARK: Operations

    /// Publishes `payload` to `subject`, with `headers` (as `HPUB`) and a reply subject if given.
    /// Returns once it is written (or buffered while reconnecting); `flush()` confirms the
    /// server has it. Throws `invalidSubject`, `invalidHeaders`, `payloadTooLarge`,
    /// `pendingBufferFull` or `closed`.
    public func publish(_ subject: String, payload: [UInt8], headers: NATSHeaders? = nil, replyTo: String? = nil) async throws(NATSError) {
        let result: Result<Void, NATSError> = await withCheckedContinuation { continuation in
            loop.execute { [self] in
                continuation.resume(returning: publishOnLoop(subject, payload: payload, headers: headers, replyTo: replyTo))
            }
        }
        try result.get()
    }

    /// Publishes each of `messages` in order, from any thread, without waiting: one hop onto the
    /// connection's loop for them all, no task. What cannot be written (the output bound reached
    /// while reconnecting, a bad subject) is dropped. For traffic that may be lost, such as
    /// datagrams.
    package func publishAndForget(_ messages: [(subject: String, payload: [UInt8])]) {
        guard !messages.isEmpty else { return }
        loop.execute { [self] in
            for message in messages { _ = publishOnLoop(message.subject, payload: message.payload) }
        }
    }

    /// `publish` for a shell on the connection's own loop: no hop, no suspension. Loop only.
    package func publishOnLoop(_ subject: String, payload: [UInt8], headers: NATSHeaders? = nil, replyTo: String? = nil) -> Result<Void, NATSError> {
        loop.preconditionInLoop()
        do throws(NATSError) {
            perform(try core.publish(subject, replyTo: replyTo, headers: headers, payload: payload, at: loop.clock.instant().nanoseconds))
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    /// Subscribes to `subject` (wildcards allowed), in queue group `queue` if given; iterate the
    /// result for its messages. The subscription is renewed on every reconnection.
    public func subscribe(to subject: String, queue: String? = nil) async throws(NATSError) -> NATSSubscription {
        let limit = configuration.subscriptionBufferLimit
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: NATSMessage.self, throwing: (any Error).self, bufferingPolicy: .bufferingOldest(limit))
        let state = NATSSubscription.State()
        let sid = try await onLoop { (connection: NATSConnection) throws(NATSError) -> UInt64 in
            try connection.subscribeOnLoop(subject, queue: queue, subscriber: .stream(continuation, state))
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            loop.execute { [self] in
                guard subscribers[sid] != nil else { return }
                perform(core.unsubscribe(sid, at: loop.clock.instant().nanoseconds))
            }
        }
        return NATSSubscription(sid: sid, subject: subject, stream: stream, state: state, connection: self)
    }

    /// Subscribes to `subject` with `handler` called on the connection's loop thread for each
    /// message, in order: for shells on the loop, which must not block it. Returns the sid, to
    /// `unsubscribe` with.
    public func subscribe(to subject: String, queue: String? = nil, handler: @escaping @Sendable (NATSMessage) -> Void) async throws(NATSError) -> UInt64 {
        try await onLoop { (connection: NATSConnection) throws(NATSError) -> UInt64 in
            try connection.subscribeOnLoop(subject, queue: queue, subscriber: .handler(handler))
        }
    }

    /// Ends subscription `sid`.
    public func unsubscribe(_ sid: UInt64) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            loop.execute { [self] in
                perform(core.unsubscribe(sid, at: loop.clock.instant().nanoseconds))
                continuation.resume()
            }
        }
    }

    /// Ends subscription `sid` from any thread without waiting: one hop onto the connection's
    /// loop, no task. For a caller that has nothing to wait for (a shell tearing down).
    package func unsubscribeAndForget(_ sid: UInt64) {
        loop.execute { [self] in
            perform(core.unsubscribe(sid, at: loop.clock.instant().nanoseconds))
        }
    }

    /// Sends a request and waits for its reply, at most `timeout` (the configuration's
    /// `requestTimeout` by default). Throws `noResponders` when nobody subscribes to `subject`,
    /// `timeout`, `connectionLost` when the connection broke after the request went out, or
    /// what `publish` throws.
    public func request(_ subject: String, payload: [UInt8], headers: NATSHeaders? = nil, timeout: Duration? = nil) async throws(NATSError) -> NATSMessage {
        let nanoseconds = timeout.map(NATSConnection.nanoseconds)
        let result: Result<NATSMessage, NATSError> = await withCheckedContinuation { continuation in
            loop.execute { [self] in
                requestOnLoop(subject, payload: payload, headers: headers, timeout: nanoseconds) { continuation.resume(returning: $0) }
            }
        }
        return try result.get()
    }

    /// `request` for a shell on the connection's own loop: `completion` runs on the loop with
    /// the reply or the error, never before this returns. `timeout` in nanoseconds (the
    /// configuration's by default). Loop only.
    package func requestOnLoop(_ subject: String, payload: [UInt8], headers: NATSHeaders? = nil, timeout: Int64? = nil,
                               completion: @escaping @Sendable (Result<NATSMessage, NATSError>) -> Void) {
        loop.preconditionInLoop()
        do throws(NATSError) {
            let (id, directives) = try core.request(subject, headers: headers, payload: payload, timeout: timeout, at: loop.clock.instant().nanoseconds)
            requestWaiters[id] = completion
            perform(directives)
        } catch {
            loop.execute { completion(.failure(error)) }
        }
    }

    /// Runs `body` on the connection's loop thread, soon, without waiting: for shells that work
    /// on the loop by callbacks (`publishOnLoop`, `requestOnLoop`, handler subscriptions) and
    /// need to get there from another thread with one hop and no task.
    package func execute(_ body: @escaping @Sendable () -> Void) {
        loop.execute(body)
    }

    /// `subscribe(to:queue:handler:)` for a shell on the connection's own loop: no hop. Loop only.
    package func subscribeOnLoop(_ subject: String, queue: String? = nil, handler: @escaping @Sendable (NATSMessage) -> Void) throws(NATSError) -> UInt64 {
        loop.preconditionInLoop()
        return try subscribeOnLoop(subject, queue: queue, subscriber: .handler(handler))
    }

    /// Waits until the server has processed everything sent before (a `PING` and its `PONG`),
    /// at most `timeout`; while reconnecting, until the next connection answers.
    public func flush(timeout: Duration = .seconds(5)) async throws(NATSError) {
        let nanoseconds = NATSConnection.nanoseconds(timeout)
        let result: Result<Void, NATSError> = await withCheckedContinuation { continuation in
            loop.execute { [self] in
                do throws(NATSError) {
                    let (id, directives) = try core.flush(timeout: nanoseconds, at: loop.clock.instant().nanoseconds)
                    flushWaiters[id] = continuation
                    perform(directives)
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        try result.get()
    }

    /// Closes the connection for good: outstanding requests fail with `closed`, subscriptions
    /// finish, and later operations throw `closed`. What was written is sent if the socket takes
    /// it at once; `flush()` first to be sure the server has it. The connection's own loop
    /// thread ends when the connection is released (so that a call racing the close still
    /// gets its answer rather than waiting on a stopped loop).
    public func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            loop.execute { [self] in
                perform(core.close(at: loop.clock.instant().nanoseconds))
                continuation.resume()
            }
        }
    }

    /// Runs `body` on the connection's loop once `delay` has passed on its clock, unless the
    /// handle is cancelled first: a timer for a shell, with no task. Any thread.
    @discardableResult
    package func schedule(after delay: TimeSpan, _ body: @escaping @Sendable () -> Void) -> ScheduledTask {
        loop.schedule(after: delay, body)
    }

    /// Closes the connection from any thread without waiting: one hop onto the loop, no task.
    /// What `close()` does, for a caller with nothing to wait for (a `defer`).
    package func closeAndForget() {
        loop.execute { [self] in
            perform(core.close(at: loop.clock.instant().nanoseconds))
        }
    }

    // MARK: On the loop

    private func onLoop<Value: Sendable>(_ body: @escaping @Sendable (NATSConnection) throws(NATSError) -> Value) async throws(NATSError) -> Value {
        let result: Result<Value, NATSError> = await withCheckedContinuation { continuation in
            loop.execute { [self] in
                do throws(NATSError) {
                    continuation.resume(returning: .success(try body(self)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    private func subscribeOnLoop(_ subject: String, queue: String?, subscriber: Subscriber) throws(NATSError) -> UInt64 {
        let (sid, directives) = try core.subscribe(subject, queue: queue, at: loop.clock.instant().nanoseconds)
        subscribers[sid] = subscriber
        perform(directives)
        return sid
    }

    private func perform(_ directives: [NATSConnectionCore.Directive]) {
        loop.preconditionInLoop()
        for directive in directives {
            switch directive {
            case let .open(address): open(address)
            case let .write(bytes): write(bytes)
            case .closeTransport: closeSocket()
            case let .deliver(message): deliver(message)
            case let .subscriptionEnded(sid, error):
                switch subscribers.removeValue(forKey: sid) {
                case let .stream(continuation, _)?: continuation.finish(throwing: error)
                case .handler?, nil: break
                }
            case let .complete(id, result): requestWaiters.removeValue(forKey: id)?(result)
            case let .flushed(id, result): flushWaiters.removeValue(forKey: id)?.resume(returning: result)
            case let .event(event): report(event)
            case let .wake(deadline):
                wakeTask?.cancel()
                wakeTask = deadline.map { deadline in
                    loop.schedule(at: .init(nanoseconds: deadline)) { [weak self] in
                        guard let self else { return }
                        perform(core.onTimer(at: loop.clock.instant().nanoseconds))
                    }
                }
            }
        }
    }

    private func deliver(_ message: NATSMessage) {
        switch subscribers[message.sid] {
        case let .stream(continuation, state)?:
            if case .dropped = continuation.yield(message) { state.dropped.add(1, ordering: .relaxed) }
        case let .handler(handler)?:
            handler(message)
        case nil:
            break
        }
    }

    private func report(_ event: NATSConnectionEvent) {
        switch event {
        case let .connected(server, info), let .reconnected(server, info):
            status.withLock {
                $0.server = server
                $0.info = info
            }
            startWaiter?.resume(returning: .success(()))
            startWaiter = nil
        case .disconnected:
            status.withLock { $0.server = nil }
        case let .closed(error):
            status.withLock {
                $0.server = nil
                $0.closed = true
            }
            startWaiter?.resume(returning: .failure(error ?? NATSError(.closed, reason: "closed before it connected")))
            startWaiter = nil
            for continuation in observers.values {
                continuation.yield(event)
                continuation.finish()
            }
            observers.removeAll()
            let handlers = eventHandlers.values
            eventHandlers.removeAll()
            for handler in handlers { handler(event) }
            return
        case .serverError:
            break
        }
        for continuation in observers.values { continuation.yield(event) }
        for handler in eventHandlers.values { handler(event) }
    }

    // MARK: The socket

    private func open(_ address: NATSServerAddress) {
        closeSocket()
        attempt += 1
        let current = attempt
        if let numeric = try? SocketAddress(host: address.host, port: address.port) {
            return connect(address, to: numeric, attempt: current)
        }
        // A name: getaddrinfo blocks, so it runs off the loop; the answer counts only if this
        // attempt is still the current one (the connect timeout may have moved on meanwhile).
        let loop = loop
        DispatchQueue.global().async { [weak self] in
            let result = NATSConnection.resolve(address)
            loop.execute { [weak self] in
                guard let self, attempt == current else { return }
                switch result {
                case let .success(resolved): connect(address, to: resolved, attempt: current)
                case let .failure(error): perform(core.onTransportLost(error.reason, at: loop.clock.instant().nanoseconds))
                }
            }
        }
    }

    private func connect(_ address: NATSServerAddress, to resolved: SocketAddress, attempt current: UInt64) {
        do throws(NATSError) {
            let socket: TCPSocket
            let immediate: Bool
            do {
                socket = try TCPSocket(family: resolved.family)
                try socket.setNoDelay()
                immediate = try socket.connect(to: resolved)
            } catch {
                throw NATSError(.cannotConnect, server: address.description, reason: "\(error)")
            }
            self.socket = socket
            socketOpen = immediate
            loop.register(socket.descriptor, interest: immediate ? .readable : .writable) { [weak self, weak loop = self.loop, socket] readable, writable, failed in
                guard let self else {
                    // Gone without closing its socket: the registration would hold it open, and
                    // once the peer closes, its end of stream would wake the loop at every pass.
                    loop?.deregister(socket.descriptor)
                    return
                }
                self.service(socket, readable: readable || failed, writable: writable)
            }
            if immediate { perform(core.onTransportOpened(at: loop.clock.instant().nanoseconds)) }
        } catch {
            // Reported on the next pass, not from inside the directive that asked to open.
            loop.execute { [weak self] in
                guard let self, attempt == current else { return }
                perform(core.onTransportLost(error.reason, at: loop.clock.instant().nanoseconds))
            }
        }
    }

    /// The first IPv4 or IPv6 address `address.host` resolves to (getaddrinfo; blocking).
    private static func resolve(_ address: NATSServerAddress) -> Result<SocketAddress, NATSError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(address.host, String(address.port), &hints, &list)
        defer { if let list { freeaddrinfo(list) } }
        guard status == 0 else {
            return .failure(NATSError(.cannotConnect, server: address.description,
                                      reason: "cannot resolve '\(address.host)': \(String(cString: gai_strerror(status)))"))
        }
        var cursor = list
        while let entry = cursor {
            if let socketAddress = entry.pointee.ai_addr, entry.pointee.ai_addrlen <= socklen_t(MemoryLayout<sockaddr_storage>.size) {
                var storage = sockaddr_storage()
                withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: UnsafeRawBufferPointer(start: socketAddress, count: Int(entry.pointee.ai_addrlen))) }
                if let resolved = SocketAddress(storage: storage, length: entry.pointee.ai_addrlen) { return .success(resolved) }
            }
            cursor = entry.pointee.ai_next
        }
        return .failure(NATSError(.cannotConnect, server: address.description, reason: "'\(address.host)' has no IPv4 or IPv6 address"))
    }

    private func service(_ socket: TCPSocket, readable: Bool, writable: Bool) {
        loop.preconditionInLoop()
        guard socket === self.socket else { return }
        if !socketOpen {
            let error = socket.pendingError()
            guard error == 0 else { return lost("cannot connect: \(SystemCallError(call: "connect", errno: error))") }
            socketOpen = true
            loop.setInterest(socket.descriptor, output.count > outputStart ? [.readable, .writable] : .readable)
            perform(core.onTransportOpened(at: loop.clock.instant().nanoseconds))
            return
        }
        if writable { flushOutput() }
        if readable { read(socket) }
    }

    private func read(_ socket: TCPSocket) {
        let end: TCPSocket.ReadEnd
        do {
            end = try socket.readAvailable(into: &readBuffer) { bytes in
                perform(core.onBytes(bytes, at: loop.clock.instant().nanoseconds))
                return socket === self.socket
            }
        } catch {
            return lost("\(error)")
        }
        if end == .closed, socket === self.socket { lost("the server closed the connection") }
    }

    private func write(_ bytes: [UInt8]) {
        guard socket != nil else { return }
        if outputStart == output.count {
            output.removeAll(keepingCapacity: true)
            outputStart = 0
        }
        output += bytes
        guard output.count - outputStart <= NATSConnection.maximumOutput else {
            return lost("the server does not read: \(output.count - outputStart) bytes wait to be sent")
        }
        if socketOpen { flushOutput() }
    }

    private func flushOutput() {
        guard let socket, socketOpen else { return }
        while outputStart < output.count {
            let written: Int?
            do {
                written = try socket.write(output[outputStart...])
            } catch {
                return lost("\(error)")
            }
            guard let written, written > 0 else { break }
            outputStart += written
        }
        if outputStart == output.count {
            output.removeAll(keepingCapacity: output.capacity <= 1 << 20)
            outputStart = 0
            loop.setInterest(socket.descriptor, .readable)
        } else {
            if outputStart > 1 << 20 {
                output.removeFirst(outputStart)
                outputStart = 0
            }
            loop.setInterest(socket.descriptor, [.readable, .writable])
        }
    }

    private func lost(_ reason: String) {
        closeSocket()
        perform(core.onTransportLost(reason, at: loop.clock.instant().nanoseconds))
    }

    private func closeSocket() {
        guard let socket else { return }
        // A last attempt at what is queued (a close's final words), never waiting.
        if socketOpen, outputStart < output.count { _ = try? socket.write(output[outputStart...]) }
        loop.deregister(socket.descriptor)
        socket.shutdown()
        self.socket = nil
        socketOpen = false
        output.removeAll()
        outputStart = 0
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds.multipliedReportingOverflow(by: 1_000_000_000).partialValue.saturatingAdding(attoseconds / 1_000_000_000)
    }
}
