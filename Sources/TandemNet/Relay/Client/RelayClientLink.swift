import Foundation
import Synchronization
import TandemWire

/// A participant's joined connection to a session, over either transport.
///
/// The protocol lives in `RelayLinkCore`; this shell runs it on an event loop, carries out its
/// directives on a `RelayTransport`, and turns them into events and finished requests. Public
/// methods may be called from any thread or task: they hop onto the loop, so that the core is
/// only ever touched there (each field the loop changes is held `Confined` to it, which asserts
/// every access). The loop is any `SerialEventLoop`: a real one for sockets, or a test's embedded
/// one on virtual time.
public final class RelayClientLink: RelayLink, Sendable {
    /// The session's events, for one consumer. Those emitted before it is first read wait for
    /// it; none come once `takeEvents(_:)` took them.
    public var events: AsyncStream<RelayEvent> {
        eventRoute.withLock { route in
            if !route.streamed {
                route.streamed = true
                for event in route.held { continuation.yield(event) }
                route.held.removeAll()
                if route.finished || route.taken { continuation.finish() }
            }
        }
        return stream
    }
    private let stream: AsyncStream<RelayEvent>
    private let continuation: AsyncStream<RelayEvent>.Continuation
    /// Where emitted events go: held until `events` is read or `takeEvents(_:)` takes them.
    private let eventRoute = Mutex(EventRoute())
    private let loop: any SerialEventLoop
    private let closed = Atomic<Bool>(false)
    private let relayIndex = Atomic<Int>(0)
    private let joined = Mutex<RelayWelcome?>(nil)
    private let sendQueue: RelayLinkSendQueue

    // Confined to the loop: each held `Confined` to it.
    private let transport: any RelayTransport
    private var core: RelayLinkCore {
        get { boundCore.value }
        _modify { yield &boundCore.value }
    }
    private let boundCore: Confined<RelayLinkCore>
    private var ticker: UInt64? {
        get { boundTicker.value }
        _modify { yield &boundTicker.value }
    }
    private let boundTicker: Confined<UInt64?>
    private var joinWaiter: (@Sendable (Result<RelayWelcome, RelayError>) -> Void)? {
        get { boundJoinWaiter.value }
        _modify { yield &boundJoinWaiter.value }
    }
    private let boundJoinWaiter: Confined<(@Sendable (Result<RelayWelcome, RelayError>) -> Void)?>
    private var pendingWelcome: RelayWelcome? {
        get { boundPendingWelcome.value }
        _modify { yield &boundPendingWelcome.value }
    }
    private let boundPendingWelcome: Confined<RelayWelcome?>
    private var joinedAt: Int64 {
        get { boundJoinedAt.value }
        _modify { yield &boundJoinedAt.value }
    }
    private let boundJoinedAt: Confined<Int64>
    private var requestWaiters: [UInt64: OnceWaiter<Result<[UInt8], RelayError>>] {
        get { boundRequestWaiters.value }
        _modify { yield &boundRequestWaiters.value }
    }
    private let boundRequestWaiters: Confined<[UInt64: OnceWaiter<Result<[UInt8], RelayError>>]>
    private var leaveWaiters: [@Sendable () -> Void] {
        get { boundLeaveWaiters.value }
        _modify { yield &boundLeaveWaiters.value }
    }
    private let boundLeaveWaiters: Confined<[@Sendable () -> Void]>
    private var hasLeft: Bool {
        get { boundHasLeft.value }
        _modify { yield &boundHasLeft.value }
    }
    private let boundHasLeft: Confined<Bool>
    private var eventObserver: ((RelayEvent) -> Void)? {
        get { boundEventObserver.value }
        _modify { yield &boundEventObserver.value }
    }
    private let boundEventObserver: Confined<((RelayEvent) -> Void)?>
    private var eventHandler: ((RelayEvent) -> Void)? {
        get { boundEventHandler.value }
        _modify { yield &boundEventHandler.value }
    }
    private let boundEventHandler: Confined<((RelayEvent) -> Void)?>

    /// Where the link's events go, and those emitted before anybody asked.
    private struct EventRoute {
        var held: [RelayEvent] = []
        /// `events` was read: events are yielded to its stream.
        var streamed = false
        /// `takeEvents(_:)` took them: a handler on the loop gets each.
        var taken = false
        /// The link finished.
        var finished = false
    }

    /// A link for `request` over `transport`, whose relays (one by default) `relays` names in
    /// order; `randomness` (a random draw) picks the relay a joiner starts at.
    init(request: RelayJoinRequest, configuration: RelayLinkConfiguration, loop: any SerialEventLoop, transport: any RelayTransport,
         relays: [String] = ["the relay"], randomness: UInt64 = 0) {
        self.loop = loop
        self.transport = transport
        participant = request.participant
        requestCopy = request
        boundCore = Confined(RelayLinkCore(request: request, configuration: configuration, relays: relays, randomness: randomness,
                                            at: loop.clock.instant().nanoseconds), to: loop)
        boundTicker = Confined(nil, to: loop)
        boundJoinWaiter = Confined(nil, to: loop)
        boundPendingWelcome = Confined(nil, to: loop)
        boundJoinedAt = Confined(0, to: loop)
        boundRequestWaiters = Confined([:], to: loop)
        boundLeaveWaiters = Confined([], to: loop)
        boundHasLeft = Confined(false, to: loop)
        boundEventObserver = Confined(nil, to: loop)
        boundEventHandler = Confined(nil, to: loop)
        boundDatagramToken = Confined(nil, to: loop)
        sendQueue = RelayLinkSendQueue(maximumBytes: configuration.maximumQueuedBytes, maximumFrames: configuration.maximumQueuedFrames)
        (stream, continuation) = AsyncStream.makeStream(of: RelayEvent.self, bufferingPolicy: .unbounded)
    }

    /// What the participant learned on joining.
    public var welcome: RelayWelcome {
        guard let welcome = joined.withLock({ $0 }) else { preconditionFailure("a link is handed out only once joined") }
        return welcome
    }

    /// The participant this link speaks for.
    public let participant: ParticipantRecord

    /// Which relay of the link's list (the connector's, an invite's `relays`) it is connected
    /// to, or connecting to: 0 with a single relay.
    public var currentRelay: Int { relayIndex.load(ordering: .relaxed) }
    private let requestCopy: RelayJoinRequest

    /// Joins: connects, authenticates, waits for the welcome and the datagram path.
    func join() async throws(RelayError) {
        let result = await withCheckedContinuation { (waiter: CheckedContinuation<Result<RelayWelcome, RelayError>, Never>) in
            let join = OnceWaiter(waiter, ifDropped: .failure(RelayError(.closed, "the link stopped before the join settled")))
            beginJoin { join.resume(returning: $0) }
        }
        _ = try result.get()
    }

    /// Starts joining and calls `completion` once, on the loop, when joined or refused: the join
    /// without a task, for a test that drives an embedded loop itself. Any thread.
    package func beginJoin(_ completion: @escaping @Sendable (Result<RelayWelcome, RelayError>) -> Void) {
        let request = requestCopy
        guard request.activity.count <= RelayLimits.maximumMetadata else {
            completion(.failure(RelayError.tooLarge("activity description", size: request.activity.count, limit: RelayLimits.maximumMetadata)))
            return
        }
        loop.execute { [self] in
            // Holds the link until the join settles; `joinWaiter` is cleared once called.
            joinWaiter = { [self] result in
                if case let .success(welcome) = result { joined.withLock { $0 = welcome } }
                completion(result)
            }
            transport.delegate = self
            ticker = loop.addTicker { [weak self] now in self?.tick(now.nanoseconds) }
            apply(core.onTick(at: loop.clock.instant().nanoseconds))
            relayIndex.store(core.relay, ordering: .relaxed)
            transport.connect(to: core.relay)
        }
    }

    /// Whether the link has joined (its welcome is there).
    package var hasJoined: Bool { joined.withLock { $0 != nil } }

    /// The loop the link runs on: its events are emitted there, and a consumer confined to it
    /// reads them with `takeEvents(_:)` without a hop.
    package var eventLoop: any SerialEventLoop { loop }

    /// Hands every event to `handler` on the loop, as it is emitted, those emitted so far first;
    /// `events` then yields nothing. The way a consumer on the link's loop (a session) reads the
    /// link without a task in between. Loop only; once.
    package func takeEvents(_ handler: @escaping (RelayEvent) -> Void) {
        loop.preconditionInLoop()
        let held = eventRoute.withLock { route -> [RelayEvent] in
            precondition(!route.taken, "a link's events are taken once")
            route.taken = true
            defer { route.held.removeAll() }
            return route.held
        }
        eventHandler = handler
        for event in held { handler(event) }
    }

    /// Calls `observer` on the loop with every event as it is emitted, before the event reaches
    /// `events`: how a test on an embedded loop sees them without a task. Any thread.
    package func observeEvents(_ observer: @escaping @Sendable (RelayEvent) -> Void) {
        loop.execute { [self] in eventObserver = observer }
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
        try sendQueue.reserve(body.count)
        loop.execute { [self] in
            // Once the core holds it (and has published so), not before: never under-counted.
            defer { sendQueue.taken(body.count) }
            guard !core.isClosed else { return }
            if !reliable, body.count <= transport.maximumDatagramBody, let token = datagramToken {
                transport.sendDatagram(.unreliable(token: token, recipients: list, body: body))
                return
            }
            apply(core.submit(at: loop.clock.instant().nanoseconds) { .message(sequence: $0, recipients: list, reliable: reliable, body: body) }.directives)
        }
    }

    /// Queues a body for the relay to order and broadcast to everyone, this participant
    /// included, kept for late joiners by `retention`; returns at once.
    public func sendOrdered(_ body: [UInt8], retention: OrderedRetention) throws(RelayError) {
        try submitOrdered(body) { .proposal(sequence: $0, retention: retention, body: body) }
    }

    /// Queues a role record for the relay to order, kept for late joiners, with its maker's
    /// signed `statement` of the change: the relay takes the statement at the record's order,
    /// whoever else is present, and keeps a record whose statement it took apart from the
    /// history's caps (`RelayFrame.authoredProposal`). Returns at once; throws as
    /// `sendOrdered(_:retention:)` does.
    package func sendOrdered(_ body: [UInt8], statement: RelayAuthority) throws(RelayError) {
        try submitOrdered(body) { .authoredProposal(sequence: $0, statement: statement, body: body) }
    }

    /// Checks `body`'s size, reserves its room in the send queue and hands the core the frame
    /// `frame` makes of the next sequence number, on the loop.
    private func submitOrdered(_ body: [UInt8], _ frame: @escaping @Sendable (UInt64) -> RelayFrame) throws(RelayError) {
        guard body.count <= RelayLimits.maximumMessageBody else {
            throw RelayError.tooLarge("ordered message", size: body.count, limit: RelayLimits.maximumMessageBody)
        }
        guard !closed.load(ordering: .acquiring) else { throw RelayError(.closed, "") }
        try sendQueue.reserve(body.count)
        loop.execute { [self] in
            // Once the core holds it (and has published so), not before: never under-counted.
            defer { sendQueue.taken(body.count) }
            guard !core.isClosed else { return }
            apply(core.submit(at: loop.clock.instant().nanoseconds, frame).directives)
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
            let (sequence, directives) = core.submit(at: self.loop.clock.instant().nanoseconds) {
                .attachmentAdd(sequence: $0, entry: RelayAttachmentEntry(id: id, owner: owner, size: data.count, metadata: metadata))
            }
            core.track(add: sequence)
            var all = directives
            var offset = 0
            while offset < data.count {
                let end = min(offset + RelayWireLimits.attachmentChunkSize, data.count)
                let chunk = data[offset..<end]
                all += core.submit(at: self.loop.clock.instant().nanoseconds) { .attachmentChunk(sequence: $0, id: id, data: chunk) }.directives
                offset = end
            }
            return (sequence, all)
        }
    }

    /// Removes an attachment from the journal.
    public func removeAttachment(id: UUID) async throws(RelayError) {
        _ = try await request { core in
            let (sequence, directives) = core.submit(at: self.loop.clock.instant().nanoseconds) { .attachmentRemove(sequence: $0, id: id) }
            core.track(remove: sequence)
            return (sequence, directives)
        }
    }

    /// Loads an attachment's data from the relay.
    public func loadAttachment(id: UUID) async throws(RelayError) -> [UInt8] {
        try await request { core in
            let (sequence, directives) = core.submit(at: self.loop.clock.instant().nanoseconds) { .loadRequest(sequence: $0, id: id) }
            core.track(load: sequence)
            return (sequence, directives)
        }
    }

    /// Leaves the session; the others go on.
    public func leave() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let departure = OnceWaiter(waiter)
            beginLeave { departure.resume() }
        }
    }

    /// Starts leaving and calls `completion` on the loop once left: `leave()` without a task.
    /// Any thread.
    package func beginLeave(_ completion: @escaping @Sendable () -> Void) {
        loop.execute { [self] in
            if hasLeft {
                completion()
                return
            }
            leaveWaiters.append(completion)
            apply(core.leave(at: loop.clock.instant().nanoseconds))
        }
    }

    /// Ends the session for everyone; returns once the relay has announced it (or the link closed).
    public func end(reason: String) async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let departure = OnceWaiter(waiter)
            beginEnd(reason: reason) { departure.resume() }
        }
    }

    /// Starts ending the session for everyone and calls `completion` on the loop once the relay
    /// has announced it (or the link closed): `end(reason:)` without a task. Any thread.
    package func beginEnd(reason: String, _ completion: @escaping @Sendable () -> Void) {
        loop.execute { [self] in
            if core.isClosed {
                completion()
                return
            }
            leaveWaiters.append(completion)
            apply(core.submit(at: loop.clock.instant().nanoseconds) { .end(sequence: $0, reason: reason) }.directives)
        }
    }

    /// Sends the relay an operator's signed statement (`RelayAuthority`): a grant, revocation or
    /// claim of the operator role, or a move to a new epoch. The relay checks its signature
    /// against the operator keys it keeps for the session; any thread, and nothing comes back
    /// (the relay ignores one it does not take).
    package func announce(_ statement: RelayAuthority) {
        loop.execute { [self] in
            guard !core.isClosed else { return }
            apply(core.submit(at: loop.clock.instant().nanoseconds) { .authority(sequence: $0, statement) }.directives)
        }
    }

    /// Test hook: drops the connection under the link as a network failure would. The link
    /// reconnects once `duration` has passed and resumes without loss, unless the relay's grace
    /// period ran out meanwhile.
    public func interruptConnection(for duration: Duration = .zero) {
        let nanoseconds = duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
        loop.execute { [self] in
            transport.interrupt(until: loop.clock.instant().nanoseconds + nanoseconds)
        }
    }

    // MARK: Inside, on the loop

    private var datagramToken: [UInt8]? {

        get { boundDatagramToken.value }

        _modify { yield &boundDatagramToken.value }

    }

    private let boundDatagramToken: Confined<[UInt8]?>

    private func request(_ submit: @escaping @Sendable (inout RelayLinkCore) -> (UInt64, [RelayLinkDirective])) async throws(RelayError) -> [UInt8] {
        guard !closed.load(ordering: .acquiring) else { throw RelayError(.closed, "") }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<[UInt8], RelayError>, Never>) in
            let waiter = OnceWaiter(continuation, ifDropped: .failure(RelayError(.closed, "")))
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
            joinWaiter?(.success(welcome))
            joinWaiter = nil
        }
    }

    private func apply(_ directives: [RelayLinkDirective]) {
        // Every change of the core ends here: what it holds unacknowledged is published first.
        sendQueue.update(bytes: core.queuedMessageBytes, frames: core.queuedMessageFrames)
        // Frames in a row go to the transport together, to be written in one write where they
        // fit (an acknowledgement riding on a message costs no write of its own).
        var transmitting: [RelayFrame] = []
        for directive in directives {
            if case let .transmit(frame) = directive {
                transmitting.append(frame)
                continue
            }
            if !transmitting.isEmpty {
                transport.transmit(transmitting)
                transmitting.removeAll()
            }
            switch directive {
            case let .connect(relay):
                relayIndex.store(relay, ordering: .relaxed)
                transport.connect(to: relay)
            case .disconnect:
                transport.disconnect()
            case .transmit:
                break
            case let .joined(welcome, token):
                datagramToken = token
                pendingWelcome = welcome
                joinedAt = loop.clock.instant().nanoseconds
                transport.registerDatagrams(token: token)
            case let .registerDatagrams(token):
                datagramToken = token
                transport.registerDatagrams(token: token)
            case let .joinFailed(error):
                joinWaiter?(.failure(error))
                joinWaiter = nil
            case let .emit(event):
                emit(event)
            case let .complete(request, result):
                requestWaiters.removeValue(forKey: request)?.resume(returning: result)
            case .left:
                hasLeft = true
                for waiter in leaveWaiters { waiter() }
                leaveWaiters.removeAll()
            case .finish:
                finish()
            }
        }
        if !transmitting.isEmpty { transport.transmit(transmitting) }
    }

    private func emit(_ event: RelayEvent) {
        eventObserver?(event)
        if let eventHandler {
            eventHandler(event)
            return
        }
        eventRoute.withLock { route in
            if route.streamed { continuation.yield(event) } else { route.held.append(event) }
        }
    }

    private func finish() {
        closed.store(true, ordering: .releasing)
        eventRoute.withLock { route in
            route.finished = true
            if route.streamed { continuation.finish() }
        }
        transport.close()
        if let ticker { loop.removeTicker(ticker) }
        ticker = nil
        for waiter in requestWaiters.values { waiter.resume(returning: .failure(RelayError(.closed, ""))) }
        requestWaiters.removeAll()
        hasLeft = true
        for waiter in leaveWaiters { waiter() }
        leaveWaiters.removeAll()
        if let welcome = pendingWelcome {
            pendingWelcome = nil
            // Joined already, only its datagram path was missing: the welcome stands, and the
            // waiter hears nothing more.
            joinWaiter?(.success(welcome))
            joinWaiter = nil
        }
        joinWaiter?(.failure(RelayError(.closed, "")))
        joinWaiter = nil
        // Its last event is out: whatever the handler holds (a session) is let go.
        eventHandler = nil
    }
}

extension RelayClientLink: RelayTransportDelegate {
    func transportConnected() { apply(core.onConnected(at: loop.clock.instant().nanoseconds)) }

    func transportReceived(_ frame: RelayFrame) { apply(core.onFrame(frame, at: loop.clock.instant().nanoseconds)) }

    func transportMalformed(_ error: WireError) { apply(core.onMalformed(error, at: loop.clock.instant().nanoseconds)) }

    func transportDisconnected(_ reason: String) { apply(core.onDisconnected(reason, at: loop.clock.instant().nanoseconds)) }

    func transportReceived(_ datagram: RelayDatagram) {
        guard case let .delivery(sender, body) = datagram, !core.isClosed else { return }
        emit(.message(from: sender, body: body, reliable: false))
    }

    func transportDatagramsReady() {
        guard let welcome = pendingWelcome else { return }
        pendingWelcome = nil
        joinWaiter?(.success(welcome))
        joinWaiter = nil
    }
}
