import TandemNet

/// The NATS client connection as a pure state machine: the handshake, keepalive, subscriptions
/// by sid, request/reply over one muxed inbox, reconnection across the server list with
/// backoff, resubscription, and a bounded buffer of output kept while disconnected.
///
/// No I/O and no clock of its own: each method takes the instant (ns, the shell's loop clock)
/// and returns directives for the shell to carry out in order (open a transport, write bytes,
/// deliver a message, complete a request, wake the core at an instant). The shell reports what
/// the transport does (`onTransportOpened`, `onBytes`, `onTransportLost`) and calls `onTimer`
/// when the instant of the last `wake` directive comes. Tested on virtual time.
package struct NATSConnectionCore: Sendable {
    /// What the shell carries out, in order.
    package enum Directive: Sendable {
        /// Open a TCP connection to the server, replacing any transport there is.
        case open(NATSServerAddress)
        /// Write these bytes to the open transport.
        case write([UInt8])
        /// Close the transport (after writing what was already handed over, if it can).
        case closeTransport
        /// Deliver a message to subscription `message.sid`.
        case deliver(NATSMessage)
        /// A subscription ended (unsubscribed, or the connection closed).
        case subscriptionEnded(sid: UInt64, NATSError?)
        /// A request finished: its reply, or why there is none.
        case complete(request: UInt64, Result<NATSMessage, NATSError>)
        /// A flush finished: the server has seen everything written before it, or not.
        case flushed(UInt64, Result<Void, NATSError>)
        /// Something for the connection's watchers.
        case event(NATSConnectionEvent)
        /// Call `onTimer` at this instant (nil: no timer is needed); replaces the previous one.
        case wake(at: Int64?)
    }

    private enum State: Sendable, Equatable {
        case idle
        /// Opening TCP, awaiting INFO, or awaiting the handshake's PONG.
        case connecting(Handshake)
        case connected
        case waiting(until: Int64)
        case closed
    }

    private enum Handshake: Sendable, Equatable { case opening, awaitingInfo, awaitingPong }

    private enum PongWaiter: Sendable { case handshake, keepalive, flush(UInt64) }

    private struct Subscription: Sendable {
        var subject: String
        var queue: String?
    }

    private struct Request: Sendable {
        /// The connection generation its PUB was written on; nil while it waits in the buffer.
        var writtenOn: UInt64?
    }

    /// The configuration it runs with.
    package let configuration: NATSConfiguration
    private let credentials: NATSURL.Credentials
    private let inboxPrefix: String
    private var servers: [NATSServerAddress]
    private var index = 0
    private var attemptsInRound = 0
    private var rounds = 0
    private var everConnected = false
    private var state = State.idle
    private var generation: UInt64 = 0
    private var lastFailure: NATSError?
    private var connectDeadline: Int64 = .max
    private var nextPing: Int64 = .max
    private var pingsOutstanding = 0
    private var pongWaiters: [PongWaiter] = []
    private var parser = NATSParser()
    private var info: NATSServerInfo?

    private var subscriptions: [UInt64: Subscription] = [:]
    private var nextSid: UInt64 = 1
    private var muxSid: UInt64?
    private var requests: [UInt64: Request] = [:]
    private var requestDeadlines = Deadlines<UInt64>()
    private var nextRequest: UInt64 = 1
    private var flushes: Set<UInt64> = []
    private var deferredFlushes: [UInt64] = []
    private var flushDeadlines = Deadlines<UInt64>()
    private var nextFlush: UInt64 = 1
    private var pending: [UInt8] = []
    private var random: UInt64
    private var announcedWake: Int64?? = .none

    /// A core for `url`'s servers with `configuration`; `inboxPrefix` (such as `_INBOX.<random>`)
    /// names this connection's reply subjects, and `seed` drives the reconnection jitter.
    package init(url: NATSURL, configuration: NATSConfiguration, inboxPrefix: String, seed: UInt64) {
        self.configuration = configuration
        credentials = url.credentials
        servers = url.servers
        self.inboxPrefix = inboxPrefix
        random = seed
    }

    // MARK: Reading

    /// The server connected to now, nil while disconnected.
    package var connectedServer: NATSServerAddress? { state == .connected ? servers[index] : nil }
    /// The server's `INFO` on the current (or last) connection.
    package var serverInfo: NATSServerInfo? { info }
    /// The servers known, given and discovered.
    package var knownServers: [NATSServerAddress] { servers }
    /// Whether the core is closed for good.
    package var isClosed: Bool { state == .closed }
    /// How many bytes wait for the next connection.
    package var pendingByteCount: Int { pending.count }
    /// How many requests are outstanding.
    package var outstandingRequests: Int { requests.count }
    /// The largest message the server takes (its `max_payload`; NATS's default before INFO).
    package var maximumPayload: Int { info?.maxPayload ?? NATSServerInfo.defaultMaxPayload }
    /// The subjects subscribed to, by sid (the muxed inbox included).
    package var subscribedSubjects: [UInt64: String] { subscriptions.mapValues(\.subject) }

    // MARK: Lifecycle

    /// Starts connecting to the first server.
    package mutating func start(at now: Int64) -> [Directive] {
        guard state == .idle else { return [] }
        guard !servers.isEmpty else {
            return finish(closing(with: NATSError(.cannotConnect, reason: "no servers were given")))
        }
        var directives: [Directive] = []
        attempt(at: now, into: &directives)
        return finish(directives)
    }

    /// Closes for good: outstanding requests and flushes fail with `closed`, subscriptions end.
    package mutating func close(at now: Int64) -> [Directive] {
        finish(closing(with: nil))
    }

    // MARK: Transport events

    /// The TCP connection opened; the server's INFO comes next.
    package mutating func onTransportOpened(at now: Int64) -> [Directive] {
        guard state == .connecting(.opening) else { return [] }
        state = .connecting(.awaitingInfo)
        return finish([])
    }

    /// Bytes arrived from the server.
    package mutating func onBytes(_ bytes: ArraySlice<UInt8>, at now: Int64) -> [Directive] {
        switch state {
        case .connected, .connecting(.awaitingInfo), .connecting(.awaitingPong): break
        default: return []
        }
        parser.append(bytes)
        var directives: [Directive] = []
        while true {
            let operation: NATSParser.Operation?
            do {
                operation = try parser.next()
            } catch {
                directives.append(.closeTransport)
                lose(error, at: now, into: &directives)
                return finish(directives)
            }
            guard let operation else { break }
            handle(operation, at: now, into: &directives)
            guard state == .connected || state == .connecting(.awaitingInfo) || state == .connecting(.awaitingPong) else { break }
        }
        return finish(directives)
    }

    /// The transport failed to open, broke, or reached its end.
    package mutating func onTransportLost(_ reason: String, at now: Int64) -> [Directive] {
        switch state {
        case .connected, .connecting: break
        default: return []
        }
        var directives: [Directive] = []
        let kind: NATSError.Kind = state == .connecting(.opening) ? .cannotConnect : .connectionLost
        // An authorization failure just before the end says better why it ended.
        let error = lastFailure?.kind == .authorizationFailed ? lastFailure! : NATSError(kind, server: servers[index].description, reason: reason)
        lose(error, at: now, into: &directives)
        return finish(directives)
    }

    /// The instant of the last `wake` came (or passed): keepalive, timeouts, reconnection.
    package mutating func onTimer(at now: Int64) -> [Directive] {
        // The wake-up that brought the shell here is spent: always name the next one.
        announcedWake = .none
        var directives: [Directive] = []
        for id in requestDeadlines.popDue(at: now) where requests.removeValue(forKey: id) != nil {
            directives.append(.complete(request: id, .failure(NATSError(.timeout, server: connectedServer?.description, reason: "no reply within the request's timeout"))))
        }
        for id in flushDeadlines.popDue(at: now) where flushes.remove(id) != nil {
            deferredFlushes.removeAll { $0 == id }
            directives.append(.flushed(id, .failure(NATSError(.timeout, server: connectedServer?.description, reason: "the server did not answer the flush's PING in time"))))
        }
        switch state {
        case .connecting where now >= connectDeadline:
            directives.append(.closeTransport)
            lose(NATSError(.timeout, server: servers[index].description, reason: "the connection attempt took longer than \(configuration.connectTimeout / 1_000_000) ms"), at: now, into: &directives)
        case .connected where now >= nextPing:
            if pingsOutstanding >= configuration.maximumPingsOutstanding {
                directives.append(.closeTransport)
                lose(NATSError(.connectionLost, server: servers[index].description, reason: "stale connection: \(pingsOutstanding) PINGs unanswered"), at: now, into: &directives)
            } else {
                pingsOutstanding += 1
                pongWaiters.append(.keepalive)
                directives.append(.write(NATSEncoder.ping))
                nextPing = now.saturatingAdding(configuration.pingInterval)
            }
        case let .waiting(until) where now >= until:
            attempt(at: now, into: &directives)
        default:
            break
        }
        return finish(directives)
    }

    // MARK: Operations

    /// Publishes `payload` (with `headers`, as `HPUB`) to `subject`, asking for replies at
    /// `replyTo`. Written at once when connected, kept for the next connection otherwise.
    /// Throws `invalidSubject`, `invalidHeaders`, `payloadTooLarge` (beyond the server's
    /// `max_payload`), `pendingBufferFull` or `closed`.
    package mutating func publish(_ subject: String, replyTo: String? = nil, headers: NATSHeaders? = nil, payload: [UInt8], at now: Int64) throws(NATSError) -> [Directive] {
        finish(try publishing(subject, replyTo: replyTo, headers: headers, payload: payload))
    }

    private mutating func publishing(_ subject: String, replyTo: String?, headers: NATSHeaders?, payload: [UInt8]) throws(NATSError) -> [Directive] {
        guard state != .closed else { throw NATSError(.closed, reason: "the connection is closed") }
        let bytes = try NATSEncoder.publish(subject: subject, replyTo: replyTo, headers: headers, payload: payload)
        let size = payload.count + (try headers?.encoded().count ?? 0)
        guard size <= maximumPayload else {
            throw NATSError(.payloadTooLarge, server: (connectedServer ?? servers.first)?.description,
                            reason: "a message of \(size) bytes exceeds the server's max_payload of \(maximumPayload)")
        }
        return try send(bytes)
    }

    /// Subscribes to `subject` (wildcards allowed) in `queue` group if given; returns the sid
    /// the messages will carry.
    package mutating func subscribe(_ subject: String, queue: String? = nil, at now: Int64) throws(NATSError) -> (sid: UInt64, directives: [Directive]) {
        let (sid, directives) = try subscribing(subject, queue: queue)
        return (sid, finish(directives))
    }

    private mutating func subscribing(_ subject: String, queue: String?) throws(NATSError) -> (sid: UInt64, directives: [Directive]) {
        guard state != .closed else { throw NATSError(.closed, reason: "the connection is closed") }
        let sid = nextSid
        let bytes = try NATSEncoder.subscribe(subject: subject, queue: queue, sid: sid)
        nextSid += 1
        subscriptions[sid] = Subscription(subject: subject, queue: queue)
        return (sid, state == .connected ? [.write(bytes)] : [])
    }

    /// Ends subscription `sid`.
    package mutating func unsubscribe(_ sid: UInt64, at now: Int64) -> [Directive] {
        guard subscriptions.removeValue(forKey: sid) != nil else { return [] }
        var directives: [Directive] = state == .connected ? [.write(NATSEncoder.unsubscribe(sid: sid))] : []
        directives.append(.subscriptionEnded(sid: sid, nil))
        return finish(directives)
    }

    /// Sends a request to `subject` with a reply subject on the connection's muxed inbox; the
    /// reply (or a timeout after `timeout` ns, or no responders) comes as a `complete` directive
    /// with the returned identifier.
    package mutating func request(_ subject: String, headers: NATSHeaders? = nil, payload: [UInt8], timeout: Int64? = nil, at now: Int64) throws(NATSError) -> (id: UInt64, directives: [Directive]) {
        guard state != .closed else { throw NATSError(.closed, reason: "the connection is closed") }
        let id = nextRequest
        // The PUB first, so that a refused one leaves nothing behind; the inbox's SUB still goes
        // out before it (while disconnected, subscriptions are renewed before the buffer is sent).
        var directives = try publishing(subject, replyTo: "\(inboxPrefix).\(id)", headers: headers, payload: payload)
        if muxSid == nil {
            // The inbox subject was checked with the PUB's reply subject, so subscribing succeeds.
            let (sid, subscribed) = try subscribing("\(inboxPrefix).*", queue: nil)
            muxSid = sid
            directives = subscribed + directives
        }
        nextRequest += 1
        requests[id] = Request(writtenOn: state == .connected ? generation : nil)
        requestDeadlines.set(id, at: now.saturatingAdding(timeout ?? configuration.requestTimeout))
        return (id, finish(directives))
    }

    /// Gives up waiting for request `id` (its caller went away); a late reply is dropped.
    package mutating func cancelRequest(_ id: UInt64) {
        requests[id] = nil
        requestDeadlines.remove(id)
    }

    /// Asks the server to confirm it has processed everything written so far (a `PING` its
    /// `PONG` answers); the answer comes as a `flushed` directive. While disconnected, the
    /// `PING` goes out after the next handshake.
    package mutating func flush(timeout: Int64, at now: Int64) throws(NATSError) -> (id: UInt64, directives: [Directive]) {
        guard state != .closed else { throw NATSError(.closed, reason: "the connection is closed") }
        let id = nextFlush
        nextFlush += 1
        flushes.insert(id)
        flushDeadlines.set(id, at: now.saturatingAdding(timeout))
        var directives: [Directive] = []
        if state == .connected {
            pongWaiters.append(.flush(id))
            directives.append(.write(NATSEncoder.ping))
        } else {
            deferredFlushes.append(id)
        }
        return (id, finish(directives))
    }

    // MARK: Inside

    private mutating func send(_ bytes: [UInt8]) throws(NATSError) -> [Directive] {
        if state == .connected { return [.write(bytes)] }
        guard pending.count + bytes.count <= configuration.maximumPendingBytes else {
            throw NATSError(.pendingBufferFull, reason: "disconnected, and \(pending.count) bytes already wait for the next connection (at most \(configuration.maximumPendingBytes))")
        }
        pending += bytes
        return []
    }

    private mutating func handle(_ operation: NATSParser.Operation, at now: Int64, into directives: inout [Directive]) {
        switch operation {
        case let .info(info):
            self.info = info
            parser.maximumPayload = max(info.maxPayload, NATSServerInfo.defaultMaxPayload) + 64 * 1024
            if configuration.discoverServers { discover(info.connectURLs) }
            guard state == .connecting(.awaitingInfo) else { return }
            state = .connecting(.awaitingPong)
            pongWaiters = [.handshake]
            directives.append(.write(NATSEncoder.connect(name: configuration.name, credentials: credentials) + NATSEncoder.ping))
        case .ping:
            directives.append(.write(NATSEncoder.pong))
        case .pong:
            pingsOutstanding = 0
            guard !pongWaiters.isEmpty else { return }
            switch pongWaiters.removeFirst() {
            case .handshake: established(at: now, into: &directives)
            case .keepalive: break
            case let .flush(id):
                if flushes.remove(id) != nil {
                    flushDeadlines.remove(id)
                    directives.append(.flushed(id, .success(())))
                }
            }
        case .ok:
            break
        case let .error(text):
            let lowered = text.lowercased()
            let server = servers[index].description
            if lowered.contains("authorization") || lowered.contains("authentication") {
                lastFailure = NATSError(.authorizationFailed, server: server, reason: "the server refused the credentials: \(text)")
                directives.append(.closeTransport)
                lose(lastFailure!, at: now, into: &directives)
            } else if lowered.contains("permissions violation") || lowered.hasPrefix("invalid") {
                directives.append(.event(.serverError(text)))
            } else {
                // The server closes the connection after any other error.
                directives.append(.closeTransport)
                lose(NATSError(.serverError, server: server, reason: text), at: now, into: &directives)
            }
        case let .message(message):
            if message.sid == muxSid {
                guard let token = message.subject.split(separator: ".").last, let id = UInt64(token),
                      requests.removeValue(forKey: id) != nil else { return }
                requestDeadlines.remove(id)
                if message.status == 503 {
                    directives.append(.complete(request: id, .failure(NATSError(.noResponders, server: servers[index].description, reason: "no subscriber answers requests on this subject"))))
                } else {
                    directives.append(.complete(request: id, .success(message)))
                }
            } else if subscriptions[message.sid] != nil {
                directives.append(.deliver(message))
            }
        }
    }

    private mutating func established(at now: Int64, into directives: inout [Directive]) {
        let wasConnected = everConnected
        state = .connected
        everConnected = true
        attemptsInRound = 0
        rounds = 0
        lastFailure = nil
        generation += 1
        pingsOutstanding = 0
        nextPing = now.saturatingAdding(configuration.pingInterval)
        connectDeadline = .max
        var bytes: [UInt8] = []
        for sid in subscriptions.keys.sorted() {
            let subscription = subscriptions[sid]!
            // Checked when first subscribed, so it encodes again.
            bytes += (try? NATSEncoder.subscribe(subject: subscription.subject, queue: subscription.queue, sid: sid)) ?? []
        }
        bytes += pending
        pending = []
        for id in requests.keys where requests[id]?.writtenOn == nil { requests[id]?.writtenOn = generation }
        for id in deferredFlushes {
            pongWaiters.append(.flush(id))
            bytes += NATSEncoder.ping
        }
        deferredFlushes = []
        if !bytes.isEmpty { directives.append(.write(bytes)) }
        let server = servers[index]
        directives.append(.event(wasConnected ? .reconnected(server, info!) : .connected(server, info!)))
    }

    /// The connection (or the attempt) is gone with `error`: fail what was in flight on it and
    /// move on to the next server, now or after a backoff.
    private mutating func lose(_ error: NATSError, at now: Int64, into directives: inout [Directive]) {
        let wasConnected = state == .connected
        parser = NATSParser()
        pingsOutstanding = 0
        nextPing = .max
        connectDeadline = .max
        for waiter in pongWaiters { if case let .flush(id) = waiter { deferredFlushes.append(id) } }
        pongWaiters = []
        if wasConnected {
            directives.append(.event(.disconnected(servers[index], error.reason)))
            let lost = NATSError(.connectionLost, server: servers[index].description, reason: "the connection broke before the reply came: \(error.reason)")
            for (id, request) in requests where request.writtenOn == generation {
                requests[id] = nil
                requestDeadlines.remove(id)
                directives.append(.complete(request: id, .failure(lost)))
            }
        } else {
            lastFailure = error
        }
        state = .waiting(until: now)
        attemptsInRound += 1
        if attemptsInRound >= servers.count {
            attemptsInRound = 0
            rounds += 1
            let limit = everConnected ? configuration.maximumReconnectRounds : configuration.initialConnectRounds
            if let limit, rounds >= limit {
                let reason = lastFailure.map { "\($0)" } ?? error.reason
                let final = lastFailure?.kind == .authorizationFailed ? lastFailure!
                    : NATSError(.cannotConnect, server: servers[index].description, reason: "no server of \(servers.map(\.description).joined(separator: ",")) could be reached: \(reason)")
                directives += closing(with: final)
                return
            }
            index = (index + 1) % servers.count
            state = .waiting(until: now.saturatingAdding(backoff()))
        } else {
            index = (index + 1) % servers.count
            attempt(at: now, into: &directives)
        }
    }

    private mutating func attempt(at now: Int64, into directives: inout [Directive]) {
        state = .connecting(.opening)
        connectDeadline = now.saturatingAdding(configuration.connectTimeout)
        directives.append(.open(servers[index]))
    }

    private mutating func backoff() -> Int64 {
        let doubling = min(rounds - 1, 30)
        let base = min(configuration.reconnectWait.multipliedReportingOverflow(by: 1 << doubling).partialValue, configuration.maximumReconnectWait)
        let jitter = Double(nextRandom() % 1_000_000) / 1_000_000 * configuration.reconnectJitter
        return base + Int64(Double(base) * jitter)
    }

    /// splitmix64: deterministic jitter from the seed.
    private mutating func nextRandom() -> UInt64 {
        random &+= 0x9E37_79B9_7F4A_7C15
        var z = random
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    private mutating func discover(_ urls: [String]) {
        for text in urls {
            guard let address = try? NATSServerAddress(parsing: text), !servers.contains(address) else { continue }
            servers.append(address)
        }
    }

    private mutating func closing(with error: NATSError?) -> [Directive] {
        guard state != .closed else { return [] }
        var directives: [Directive] = []
        if state == .connected || state == .connecting(.awaitingInfo) || state == .connecting(.awaitingPong) || state == .connecting(.opening) {
            directives.append(.closeTransport)
        }
        state = .closed
        let closed = error ?? NATSError(.closed, reason: "the connection was closed")
        for id in requests.keys.sorted() { directives.append(.complete(request: id, .failure(closed))) }
        requests.removeAll()
        requestDeadlines.removeAll()
        for id in flushes.sorted() { directives.append(.flushed(id, .failure(closed))) }
        flushes.removeAll()
        flushDeadlines.removeAll()
        deferredFlushes.removeAll()
        for sid in subscriptions.keys.sorted() where sid != muxSid { directives.append(.subscriptionEnded(sid: sid, error)) }
        subscriptions.removeAll()
        pending.removeAll()
        directives.append(.event(.closed(error)))
        return directives
    }

    /// The next instant `onTimer` has something to do.
    private mutating func nextDeadline() -> Int64? {
        var deadline: Int64 = .max
        switch state {
        case .connecting: deadline = connectDeadline
        case .connected: deadline = nextPing
        case let .waiting(until): deadline = until
        case .idle, .closed: return nil
        }
        if let request = requestDeadlines.earliest() { deadline = min(deadline, request) }
        if let flush = flushDeadlines.earliest() { deadline = min(deadline, flush) }
        return deadline == .max ? nil : deadline
    }

    /// Appends a `wake` when the next deadline changed since the last one announced.
    private mutating func finish(_ directives: [Directive]) -> [Directive] {
        let next = nextDeadline()
        if case let .some(announced) = announcedWake, announced == next { return directives }
        announcedWake = .some(next)
        return directives + [.wake(at: next)]
    }
}
