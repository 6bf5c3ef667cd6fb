import Foundation
import Synchronization
import TandemWire

/// A participant's joined connection to a session, over either transport.
///
/// The protocol lives in `RelayLinkCore`; this shell runs it on an event loop, carries out its
/// directives on a `RelayTransport`, and turns them into events and finished requests. Public
/// methods may be called from any thread or task: they hop onto the loop, so that the core is
/// only ever touched there (which is why the class is `@unchecked Sendable`).
public final class RelayClientLink: RelayLink, @unchecked Sendable {
    /// The session's events, for one consumer.
    public let events: AsyncStream<RelayEvent>
    private let continuation: AsyncStream<RelayEvent>.Continuation
    private let loop: EventLoop
    private let closed = Atomic<Bool>(false)
    private let joined = Mutex<RelayWelcome?>(nil)

    // Confined to the loop.
    private let transport: any RelayTransport
    private var core: RelayLinkCore
    private var ticker: UInt64?
    private var joinWaiter: CheckedContinuation<Result<RelayWelcome, RelayError>, Never>?
    private var pendingWelcome: RelayWelcome?
    private var joinedAt: Int64 = 0
    private var requestWaiters: [UInt64: CheckedContinuation<Result<[UInt8], RelayError>, Never>] = [:]
    private var leaveWaiters: [CheckedContinuation<Void, Never>] = []
    private var hasLeft = false

    init(request: RelayJoinRequest, configuration: RelayLinkConfiguration, loop: EventLoop, transport: any RelayTransport) {
        self.loop = loop
        self.transport = transport
        participant = request.participant
        requestCopy = request
        core = RelayLinkCore(request: request, configuration: configuration, at: loop.clock.now())
        (events, continuation) = AsyncStream.makeStream(of: RelayEvent.self, bufferingPolicy: .unbounded)
    }

    /// What the participant learned on joining.
    public var welcome: RelayWelcome {
        guard let welcome = joined.withLock({ $0 }) else { preconditionFailure("a link is handed out only once joined") }
        return welcome
    }

    /// The participant this link speaks for.
    public let participant: ParticipantRecord
    private let requestCopy: RelayJoinRequest

    /// Joins: connects, authenticates, waits for the welcome and the datagram path.
    func join() async throws(RelayError) {
        let request = requestCopy
        guard request.activity.count <= RelayLimits.maximumMetadata else {
            throw RelayError.tooLarge("activity description", size: request.activity.count, limit: RelayLimits.maximumMetadata)
        }
        let result = await withCheckedContinuation { (waiter: CheckedContinuation<Result<RelayWelcome, RelayError>, Never>) in
            loop.execute { [self] in
                joinWaiter = waiter
                transport.delegate = self
                ticker = loop.addTicker { [weak self] now in self?.tick(now) }
                apply(core.onTick(at: loop.clock.now()))
                transport.connect()
            }
        }
        let welcome = try result.get()
        joined.withLock { $0 = welcome }
    }

    // MARK: RelayLink

    /// Queues a message; returns at once.
    public func send(_ body: [UInt8], to recipients: Recipients, reliable: Bool) throws(RelayError) {
        guard body.count <= RelayLimits.maximumMessageBody else {
            throw RelayError.tooLarge("message", size: body.count, limit: RelayLimits.maximumMessageBody)
        }
        if case let .only(ids) = recipients, ids.count > RelayWireLimits.maximumRecipients {
            throw RelayError(.tooLarge, "\(ids.count) recipients; at most \(RelayWireLimits.maximumRecipients)")
        }
        guard !closed.load(ordering: .acquiring) else { throw RelayError(.closed, "") }
        let list: RelayRecipientList = switch recipients {
        case .everyone: .everyone
        case let .only(ids): .only(Array(ids))
        }
        loop.execute { [self] in
            guard !core.isClosed else { return }
            if !reliable, body.count <= transport.maximumDatagramBody, let token = datagramToken {
                transport.sendDatagram(.unreliable(token: token, recipients: list, body: body))
                return
            }
            apply(core.submit { .message(sequence: $0, recipients: list, reliable: reliable, body: body) }.directives)
        }
    }

    /// Queues a body for the relay to order and broadcast to everyone, this participant
    /// included, kept for late joiners by `retention`; returns at once.
    public func sendOrdered(_ body: [UInt8], retention: OrderedRetention) throws(RelayError) {
        guard body.count <= RelayLimits.maximumMessageBody else {
            throw RelayError.tooLarge("ordered message", size: body.count, limit: RelayLimits.maximumMessageBody)
        }
        guard !closed.load(ordering: .acquiring) else { throw RelayError(.closed, "") }
        loop.execute { [self] in
            guard !core.isClosed else { return }
            apply(core.submit { .proposal(sequence: $0, retention: retention, body: body) }.directives)
        }
    }

    /// Adds an attachment to the journal, in chunks; returns once the relay holds it.
    public func addAttachment(id: UUID, metadata: [UInt8], data: [UInt8]) async throws(RelayError) {
        guard data.count <= RelayLimits.maximumAttachment else {
            throw RelayError.tooLarge("attachment", size: data.count, limit: RelayLimits.maximumAttachment)
        }
        guard metadata.count <= RelayLimits.maximumMetadata else {
            throw RelayError.tooLarge("attachment metadata", size: metadata.count, limit: RelayLimits.maximumMetadata)
        }
        let owner = participant.id
        _ = try await request { core in
            let (sequence, directives) = core.submit {
                .attachmentAdd(sequence: $0, entry: RelayAttachmentEntry(id: id, owner: owner, size: data.count, metadata: metadata))
            }
            core.track(add: sequence)
            var all = directives
            var offset = 0
            while offset < data.count {
                let end = min(offset + RelayWireLimits.attachmentChunkSize, data.count)
                let chunk = data[offset..<end]
                all += core.submit { .attachmentChunk(sequence: $0, id: id, data: chunk) }.directives
                offset = end
            }
            return (sequence, all)
        }
    }

    /// Removes an attachment from the journal.
    public func removeAttachment(id: UUID) async throws(RelayError) {
        _ = try await request { core in
            let (sequence, directives) = core.submit { .attachmentRemove(sequence: $0, id: id) }
            core.track(remove: sequence)
            return (sequence, directives)
        }
    }

    /// Loads an attachment's data from the relay.
    public func loadAttachment(id: UUID) async throws(RelayError) -> [UInt8] {
        try await request { core in
            let (sequence, directives) = core.submit { .loadRequest(sequence: $0, id: id) }
            core.track(load: sequence)
            return (sequence, directives)
        }
    }

    /// Leaves the session; the others go on.
    public func leave() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            loop.execute { [self] in
                if hasLeft {
                    waiter.resume()
                    return
                }
                leaveWaiters.append(waiter)
                apply(core.leave(at: loop.clock.now()))
            }
        }
    }

    /// Ends the session for everyone; returns once the relay has announced it (or the link closed).
    public func end(reason: String) async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            loop.execute { [self] in
                if core.isClosed {
                    waiter.resume()
                    return
                }
                leaveWaiters.append(waiter)
                apply(core.submit { .end(sequence: $0, reason: reason) }.directives)
            }
        }
    }

    /// Test hook: drops the connection under the link as a network failure would. The link
    /// reconnects once `duration` has passed and resumes without loss, unless the relay's grace
    /// period ran out meanwhile.
    public func interruptConnection(for duration: Duration = .zero) {
        let nanoseconds = duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
        loop.execute { [self] in
            transport.interrupt(until: loop.clock.now() + nanoseconds)
        }
    }

    // MARK: Inside, on the loop

    private var datagramToken: [UInt8]?

    private func request(_ submit: @escaping @Sendable (inout RelayLinkCore) -> (UInt64, [RelayLinkDirective])) async throws(RelayError) -> [UInt8] {
        guard !closed.load(ordering: .acquiring) else { throw RelayError(.closed, "") }
        let result = await withCheckedContinuation { (waiter: CheckedContinuation<Result<[UInt8], RelayError>, Never>) in
            loop.execute { [self] in
                guard !core.isClosed else {
                    waiter.resume(returning: .failure(RelayError(.closed, "")))
                    return
                }
                let (sequence, directives) = submit(&core)
                requestWaiters[sequence] = waiter
                apply(directives)
            }
        }
        return try result.get()
    }

    private func tick(_ now: Int64) {
        transport.tick(at: now)
        apply(core.onTick(at: now))
        if let welcome = pendingWelcome, now - joinedAt > core.configuration.datagramRegistrationTimeout {
            pendingWelcome = nil
            joinWaiter?.resume(returning: .success(welcome))
            joinWaiter = nil
        }
    }

    private func apply(_ directives: [RelayLinkDirective]) {
        for directive in directives {
            switch directive {
            case .connect:
                transport.connect()
            case .disconnect:
                transport.disconnect()
            case let .transmit(frame):
                transport.transmit(frame)
            case let .joined(welcome, token):
                datagramToken = token
                pendingWelcome = welcome
                joinedAt = loop.clock.now()
                transport.registerDatagrams(token: token)
            case let .joinFailed(error):
                joinWaiter?.resume(returning: .failure(error))
                joinWaiter = nil
            case let .emit(event):
                continuation.yield(event)
            case let .complete(request, result):
                requestWaiters.removeValue(forKey: request)?.resume(returning: result)
            case .left:
                hasLeft = true
                for waiter in leaveWaiters { waiter.resume() }
                leaveWaiters.removeAll()
            case .finish:
                finish()
            }
        }
    }

    private func finish() {
        closed.store(true, ordering: .releasing)
        continuation.finish()
        transport.close()
        if let ticker { loop.removeTicker(ticker) }
        ticker = nil
        for waiter in requestWaiters.values { waiter.resume(returning: .failure(RelayError(.closed, ""))) }
        requestWaiters.removeAll()
        hasLeft = true
        for waiter in leaveWaiters { waiter.resume() }
        leaveWaiters.removeAll()
        if let welcome = pendingWelcome {
            pendingWelcome = nil
            joinWaiter?.resume(returning: .success(welcome))
        }
        joinWaiter?.resume(returning: .failure(RelayError(.closed, "")))
        joinWaiter = nil
    }
}

extension RelayClientLink: RelayTransportDelegate {
    func transportConnected() { apply(core.onConnected(at: loop.clock.now())) }

    func transportReceived(_ frame: RelayFrame) { apply(core.onFrame(frame, at: loop.clock.now())) }

    func transportMalformed(_ error: WireError) { apply(core.onMalformed(error, at: loop.clock.now())) }

    func transportDisconnected(_ reason: String) { apply(core.onDisconnected(reason, at: loop.clock.now())) }

    func transportReceived(_ datagram: RelayDatagram) {
        guard case let .delivery(sender, body) = datagram, !core.isClosed else { return }
        continuation.yield(.message(from: sender, body: body, reliable: false))
    }

    func transportDatagramsReady() {
        guard let welcome = pendingWelcome else { return }
        pendingWelcome = nil
        joinWaiter?.resume(returning: .success(welcome))
        joinWaiter = nil
    }
}
