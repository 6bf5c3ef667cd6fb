#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import TandemClock
import TandemWire

/// The real relay: many sessions on one port number, TCP for reliable traffic and UDP for
/// unreliable messages and the time service, run by `RelayCore` on an event loop of its own.
///
/// Embed it in a program (`tandem host` does) or run it alone (`tandem serve`): `start()`,
/// read `address`, `stop()`. Offenders (malformed or oversized frames, unknown versions,
/// floods) get an error frame and are disconnected; everyone else goes on.
///
/// Confinement (why unchecked): the core, the connections, the buffers and every other `var`
/// belong to the loop's thread (before `start()` and after `stop()`, to the caller's, as nothing
/// else runs); a call from another thread hops there (`loop.execute`), and the loop's handlers
/// assert it (`loop.preconditionInLoop()`). A batch of writes lends connections to the second
/// writer thread while the loop waits (`RelayFanoutWriter`). The counters sit in a `Mutex`.
public final class RelayServer: @unchecked Sendable {
    /// Where the relay listens, for TCP and UDP alike.
    public let address: SocketAddress
    /// The port number, for TCP and UDP alike.
    public var port: UInt16 { address.port }
    /// The session clock that stamps time replies and drives the core's timers.
    public let clock: any LocalClock
    /// The core's configuration (its limits), which a cluster relay's scratch replicas share.
    public let configuration: RelayCoreConfiguration

    private let loop: EventLoop
    private let listener: TCPSocket
    private let datagrams: UDPSocket
    private let responder: TimeResponder
    private let counters = Mutex(RelayServerStatistics())

    // Confined to the loop.
    private var core: RelayCore
    private var connections: [RelayConnectionID: RelayServerConnection] = [:]
    private var datagramAddresses: [RelayToken: SocketAddress] = [:]
    private var nextConnection: UInt64 = 0
    /// Connections with frames queued since they were last flushed, each once: written after
    /// each connection's service, so that what it queued for a connection goes in one write.
    private var dirty: [RelayServerConnection] = []
    private var datagramBuffer = [UInt8](repeating: 0, count: 65_536)
    private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    /// What an unauthenticated connection is read into: a hello is small.
    private var strangerBuffer = [UInt8](repeating: 0, count: 8 * 1024)
    /// The bytes the connections hold (output queues, partial frames), for the budget.
    private var shellBytes = 0
    /// Set while `accept` is backed off after failing for want of descriptors or memory.
    private var acceptPausedUntil: Int64?
    private var paused: Set<RelayConnectionID> = []
    /// Cluster hook (`ClusterRelay`): set before `start()`, called on the loop with
    /// what a clustered core submits to NATS.
    package var clusterOutput: (@Sendable (RelayClusterOutput) -> Void)?
    /// Test-double hook: set before `start()`, called on the loop with the core's directives
    /// before they are carried out, to change them (a relay that shows people different
    /// histories, for the tests that catch one). Nothing that ships sets it.
    package var directiveHook: (@Sendable (inout [RelayDirective], borrowing RelayCore) -> Void)?
    /// Addresses whose strangers keep being cut: their new connections are closed at accept.
    private var offenders = RelayOffenderHoldOff()
    private var offendersPruned: Int64 = 0
    /// Whether the process's resident memory beyond `residentBaseline` counts for admission.
    private let countsResidentMemory: Bool
    /// The resident bytes when the relay was made, when it counts them.
    private let residentBaseline: Int?
    /// When the resident memory was last read, on the served clock; nil until the first tick
    /// reads it (the served clock may start anywhere, below zero with a negative session epoch).
    private var residentRead: Int64?
    private var residentTrimmed: Int64?
    /// The second thread that shares a large broadcast's writes, when there is one.
    private let writer: RelayFanoutWriter?
    /// Flushes of large batches and the connections the writer thread wrote of them.
    private var sharedFlushes = 0
    private var sharedWrites = 0
    /// The measuring mode, when on (`measureKernelTimestamps()`); nil costs a check per frame.
    private var stamps: RelayServerStamps?

    /// How long a closing connection may take to be read to its end before it is cut.
    private static let closingLimit: Int64 = 2_000_000_000
    /// How long `accept` rests after failing with EMFILE, ENFILE, ENOBUFS or ENOMEM, so that a
    /// relay out of descriptors does not spin; connections wait in the backlog meanwhile.
    static let acceptBackoff: Int64 = 100_000_000
    /// How many payload bytes of frames a paused connection may have held before its socket is
    /// no longer read: room for its acknowledgements to keep coming behind a few data frames.
    static let heldLimit = 256 * 1024
    /// How long the loop spends on one connection's frames in one pass before the rest waits
    /// for the next pass, after whatever else is ready: a burst of thousands of small frames
    /// (each fanned out) cannot hold the relay from everyone else.
    static let burstBudget: Int64 = 2_000_000

    /// How often the resident memory is read when it counts.
    static let residentInterval: Int64 = 100_000_000
    /// How often, at most, freed memory is handed back to the system while the footprint is at
    /// the limit and what the budget counts is not.
    static let trimInterval: Int64 = 5_000_000_000

    /// Binds TCP and UDP to `address` (port 0 picks a port free for both); `start()` serves.
    ///
    /// - Parameters:
    ///   - writerThreads: 1, or 2 to share the writes of a flush to more than
    ///     `RelayFanoutWriter.sharedThreshold` connections (a large session's broadcast) with a
    ///     second thread; each connection is still written by one thread at a time, in order.
    ///   - countsResidentMemory: whether the process's resident memory beyond what it held as
    ///     the relay was made counts for admission against `configuration.memoryLimit`
    ///     (`RelayCore.footprintBytes`): right for a process that is only a relay (`tandem
    ///     serve`, which `tandem host` also starts), wrong for a program that embeds the relay
    ///     beside other work, whose memory would count.
    public init(address: SocketAddress, configuration: RelayCoreConfiguration = RelayCoreConfiguration(),
                clock: any LocalClock = SystemClock(), writerThreads: Int = 1,
                countsResidentMemory: Bool = false) throws(SystemCallError) {
        precondition((1...2).contains(writerThreads), "a relay writes with 1 or 2 threads, not \(writerThreads)")
        self.countsResidentMemory = countsResidentMemory
        residentBaseline = countsResidentMemory ? ProcessResidentMemory.current() : nil
        writer = writerThreads > 1 ? RelayFanoutWriter() : nil
        let port = try SharedPort(binding: address)
        listener = port.listener
        datagrams = port.datagrams
        self.address = port.address
        self.clock = clock
        responder = TimeResponder(clock: clock)
        self.configuration = configuration
        core = RelayCore(configuration: configuration)
        // Invites' tickets expire on the wall clock; the core runs on the served clock.
        core.unixOffset = Int64(Date().timeIntervalSince1970 * 1_000_000_000) - clock.instant().nanoseconds
        loop = try EventLoop(name: "tandem-relay", clock: clock)
    }

    /// Counters so far.
    public var statistics: RelayServerStatistics { counters.withLock { $0 } }

    /// Starts serving on a thread of its own. Calling it again does nothing.
    public func start() {
        writer?.start()
        loop.execute { [self] in
            loop.register(listener.descriptor, interest: .readable) { [self] _, _, _ in acceptAll() }
            loop.register(datagrams.descriptor, interest: .readable) { [self] _, _, _ in receiveDatagrams() }
            loop.addTicker { [self] now in tick(now.nanoseconds) }
        }
        loop.start()
    }

    /// Starts serving, as `start()`, on a thread scheduled at `priority`: a relay on a machine
    /// busy with other work keeps its delivery prompt at `high` or `realtime`. Throws, and keeps
    /// serving at the default priority, when the system refuses it.
    public func start(priority: ThreadPriority) throws(SystemCallError) {
        writer?.priority = priority
        start()
        try loop.apply(priority)
    }

    /// Stops serving and waits for the threads (the loop's, and the second writer's under
    /// `writerThreads: 2`); every connection is closed. What is queued for the connections (the
    /// notice that a session ended, say) is written first, for at most `drainTimeout`, so that a
    /// host that ends its session and exits is heard by everyone.
    ///
    /// A started relay must be stopped: until then its loop's handlers hold it, so dropping the
    /// last reference of its owner does not end it (no deinit can run), and both threads and
    /// its sockets stay. One that was never started holds no thread.
    public func stop(drainTimeout: Duration = .seconds(1)) {
        drain(timeout: drainTimeout)
        loop.stop()
        // The loop's thread is gone: its handlers (which hold this server) can be dropped, and
        // the sockets close once the last reference to the server goes.
        loop.reset()
        writer?.stop()
        listener.shutdown()
        for connection in connections.values { connection.socket.shutdown() }
        connections.removeAll()
    }

    // Only reached once `stop()` has released the loop's handlers, or for a relay never
    // started: the writer's thread, if any, is ended either way (stopping it twice is nothing).
    deinit { writer?.stop() }

    /// Waits, while the loop keeps running, until no connection has anything left to write or
    /// `timeout` has passed.
    private func drain(timeout: Duration) {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let answer = DrainAnswer()
            loop.execute { [self] in
                answer.empty.store(connections.values.allSatisfy { $0.output.isEmpty || $0.writeShut }, ordering: .relaxed)
                answer.ready.signal()
            }
            // A loop that is not running (never started, or stopped) answers nothing.
            guard answer.ready.wait(timeout: .now() + .milliseconds(100)) == .success, !answer.empty.load(ordering: .relaxed) else { return }
            Thread.sleep(forTimeInterval: 0.005)
        }
    }

    // MARK: TCP

    private func acceptAll() {
        loop.preconditionInLoop()
        guard acceptPausedUntil == nil else { return }
        // A bounded batch per pass, so that a burst of connections cannot starve the others.
        for _ in 0..<64 {
            let accepted: (socket: TCPSocket, peer: SocketAddress?)
            do {
                guard let next = try listener.accept() else { return }
                accepted = next
            } catch {
                switch error.errno {
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // Out of descriptors or memory: poll would report the listener ready at
                    // once again, so stop watching it for a while.
                    acceptPausedUntil = clock.instant().nanoseconds + RelayServer.acceptBackoff
                    loop.setInterest(listener.descriptor, [])
                    counters.withLock { $0.acceptFailures += 1 }
                    return
                default:
                    // The peer gave up before it was accepted (ECONNABORTED and the like).
                    continue
                }
            }
            let host = accepted.peer?.host
            // Held off: closed at once (the socket goes with this scope), before any state, read
            // or core work is spent on it.
            if let host, offenders.refuses(host, at: clock.instant().nanoseconds) {
                counters.withLock { $0.acceptsHeldOff += 1 }
                continue
            }
            try? accepted.socket.setNoDelay()
            nextConnection += 1
            let connection = RelayServerConnection(id: RelayConnectionID(nextConnection), socket: accepted.socket, peerHost: host)
            connections[connection.id] = connection
            stamps?.enable(connection)
            loop.register(accepted.socket.descriptor, interest: .readable) { [self] readable, writable, failed in
                // Measuring: waiting transmit stamps raise an error report; they are read after the pass.
                if failed, let stamps { stamps.written(connection) }
                // A paused connection whose held frames are full is not watched for reading, so a
                // report now is a hang-up or an error: it is gone (what it sent unread is sent
                // again when it resumes).
                if failed, connection.pausedUntil != nil, !connection.readsWhilePaused(limit: RelayServer.heldLimit) {
                    return teardown(connection, byPeer: true)
                }
                service(connection, readable: readable || failed, writable: writable)
            }
            counters.withLock { $0.connectionsAccepted += 1 }
            core.shellBytes = shellBytes
            perform(core.onOpen(connection.id, entropy: RelayAuthenticator.randomBytes(RelayCore.entropyLength), at: clock.instant().nanoseconds,
                                peer: accepted.peer))
        }
    }

    private func service(_ connection: RelayServerConnection, readable: Bool, writable: Bool) {
        loop.preconditionInLoop()
        if writable { flush(connection) }
        if readable { read(connection) }
        // What this connection's frames queued is written now, each connection once, not at the
        // end of the loop's pass: a pass may go on to read many other connections (a flood's
        // among them), and a broadcast waiting behind them would carry their delay.
        flushDirty()
        // At once rather than at the next tick: a flood fills the budget in milliseconds.
        if core.budgetBytes > core.configuration.memoryLimit { shedOverBudget(at: clock.instant().nanoseconds) }
    }

    private func read(_ connection: RelayServerConnection) {
        let strangerLimit = core.configuration.maximumUnauthenticatedBytes
        // A bounded number of reads per pass keeps one busy sender from starving the others.
        for _ in 0..<16 {
            guard connection.isOpen, !connection.isBacklogged,
                  connection.pausedUntil == nil || connection.readsWhilePaused(limit: RelayServer.heldLimit) else { return }
            // A stranger is read a small piece at a time: its first piece has the length its
            // frame announces, which is all it takes to cut one announcing too much, without
            // copying 64 KiB of it first (a flood of such strangers, reconnecting each time they
            // are cut, is one of the cheapest ways to spend a relay's time).
            let stranger = connection.closingSince == nil && core.isUnauthenticated(connection.id)
            let count: Int?
            do {
                if stranger {
                    count = try connection.socket.read(into: &strangerBuffer)
                } else if let stamps {
                    count = try stamps.read(connection, into: &readBuffer)
                } else {
                    count = try connection.socket.read(into: &readBuffer)
                }
            } catch {
                // A reset (or any failed read): the peer's side is gone.
                return teardown(connection, byPeer: true)
            }
            guard let count else { return }
            // End of stream: the peer closed its side (it exited, or was killed).
            guard count > 0 else { return teardown(connection, byPeer: connection.closingSince == nil) }
            counters.withLock { $0.bytesReceived += count }
            // A read that did not fill the buffer took all there was: readiness is level-triggered,
            // so the next pass reports whatever arrives later, and reading again now would only
            // cost a system call to hear EAGAIN.
            let drained = count < (stranger ? strangerBuffer.count : readBuffer.count)
            // A closing connection's bytes are read only to reach its end.
            if connection.closingSince != nil {
                if drained { return }
                continue
            }
            // A stranger may not make the relay hold more than a hello's worth of bytes, nor
            // announce a frame longer than that.
            if stranger, connection.reader.buffered + count > strangerLimit {
                return cutStranger(connection, RelayFault(.tooLarge, "more than \(strangerLimit) bytes before being admitted"))
            }
            connection.reader.append(stranger ? strangerBuffer[..<count] : readBuffer[..<count])
            if stranger, let announced = connection.reader.announcedLength, announced <= connection.reader.limit, announced + 4 > strangerLimit {
                return cutStranger(connection, RelayFault(.tooLarge, "a frame of \(announced) bytes before being admitted (at most \(strangerLimit))"))
            }
            decodeFrames(connection)
            if drained { return }
        }
    }

    /// Drops a stranger over what it may send before being admitted, at once: the fault is
    /// written if the socket takes it, and nothing more is read. A stranger is owed no orderly
    /// close, and reading the rest of what it sends would let it spend the relay's time for
    /// nothing (a flood of partial frames, reconnecting each time it is cut).
    private func cutStranger(_ connection: RelayServerConnection, _ fault: RelayFault) {
        let now = clock.instant().nanoseconds
        if let host = connection.peerHost, offenders.cut(host, at: now) {
            counters.withLock { $0.addressesHeldOff += 1 }
        }
        perform(core.onOverLimit(connection.id, fault, outputQueue: false, at: now))
        _ = try? connection.output.flush(to: connection.socket)
        teardown(connection)
    }

    /// Hands the core the frames `connection` has buffered, until it closes; while it is
    /// paused, its acknowledgements, pings and pongs go on to the core and the rest is held
    /// (up to `heldLimit` bytes), so that a paused participant still keeps up with what the
    /// relay sends it and is never dropped as too far behind for being held.
    private func decodeFrames(_ connection: RelayServerConnection) {
        let started = clock.instant().nanoseconds
        var handled = 0
        while connection.closingSince == nil,
              connection.pausedUntil == nil || connection.readsWhilePaused(limit: RelayServer.heldLimit) {
            handled += 1
            if handled.isMultiple(of: 32), clock.instant().nanoseconds - started > RelayServer.burstBudget {
                continueNextPass(connection)
                break
            }
            let frame: RelayFrame?
            do {
                frame = try connection.reader.next()
            } catch {
                counters.withLock { $0.offendersDropped += 1 }
                perform(core.onMalformed(error, from: connection.id, at: clock.instant().nanoseconds))
                break
            }
            guard let frame else { break }
            counters.withLock { $0.framesReceived += 1 }
            if connection.pausedUntil != nil, frame.sequence != nil {
                connection.held.append(frame)
                connection.heldFrameBytes += max(frame.payloadSize, 1)
                continue
            }
            core.shellBytes = shellBytes
            stamps?.begin(connection)
            perform(core.onFrame(frame, from: connection.id, at: clock.instant().nanoseconds))
            stamps?.end()
        }
        // Paused with its held frames full: the socket is not watched for reading until the pause
        // ends (readiness is level-triggered, and unread bytes would wake the loop every pass).
        if connection.isOpen, connection.pausedUntil != nil, !connection.readsWhilePaused(limit: RelayServer.heldLimit) {
            updateInterest(connection, writing: !connection.output.isEmpty)
        }
        account(connection)
    }

    /// `connection`'s pass ran out of time with frames still buffered: the socket is not read
    /// and the rest is handled on the loop's next pass, after whatever else is ready then.
    private func continueNextPass(_ connection: RelayServerConnection) {
        guard !connection.isBacklogged else { return }
        connection.isBacklogged = true
        updateInterest(connection, writing: !connection.output.isEmpty)
        let id = connection.id
        loop.execute { [self] in
            guard let connection = connections[id] else { return }
            connection.isBacklogged = false
            updateInterest(connection, writing: !connection.output.isEmpty)
            decodeFrames(connection)
            flushDirty()
        }
    }

    /// The pause of `connection` is over: its held frames go to the core in order (until one
    /// pauses it again), then what it has buffered.
    private func resumeReading(_ connection: RelayServerConnection) {
        connection.pausedUntil = nil
        var handed = 0
        while handed < connection.held.count, connection.pausedUntil == nil, connection.closingSince == nil, connection.isOpen {
            let frame = connection.held[handed]
            handed += 1
            connection.heldFrameBytes -= max(frame.payloadSize, 1)
            core.shellBytes = shellBytes
            perform(core.onFrame(frame, from: connection.id, at: clock.instant().nanoseconds))
        }
        connection.held.removeFirst(handed)
        if connection.pausedUntil != nil { paused.insert(connection.id) }
        guard connection.isOpen else { return }
        updateInterest(connection, writing: !connection.output.isEmpty)
        decodeFrames(connection)
    }

    private func flush(_ connection: RelayServerConnection) {
        flush(connection, written: nil)
    }

    /// Flushes `connection`; `written` is the outcome of a first write already made for it (by
    /// the fan-out writer), which the rest goes on from.
    private func flush(_ connection: RelayServerConnection, written: RelayFanoutWriter.Outcome?) {
        guard connection.isOpen else { return }
        // Bulk transfers refill the queue as it drains: a few rounds per pass, then the socket's
        // readiness brings the rest.
        var done = false
        for round in 0..<8 {
            if round == 0, let written {
                guard case .written(finished: let finished) = written else { return teardown(connection, byPeer: true) }
                // What a connection written earlier in the batch queued since (a drain's next
                // window) is written by the rounds below or the next flush.
                done = finished && connection.output.isEmpty
            } else {
                do {
                    done = try connection.output.flush(to: connection.socket)
                } catch {
                    return teardown(connection, byPeer: true)
                }
            }
            guard connection.awaitingDrain, connection.closingSince == nil,
                  connection.output.queuedBytes <= core.configuration.drainLowWater else { break }
            connection.awaitingDrain = false
            perform(core.onDrained(connection.id, at: clock.instant().nanoseconds))
            guard connection.isOpen else { return }
            done = connection.output.isEmpty
            if done { break }
        }
        stamps?.written(connection)
        // Whatever is left is written when the socket takes more.
        updateInterest(connection, writing: !done)
        if done, connection.closingSince != nil, !connection.writeShut {
            connection.writeShut = true
            connection.socket.shutdownWrite()
        }
        account(connection)
    }

    /// Watches the socket for reading unless paused with its held frames full, and for writing
    /// while output waits.
    private func updateInterest(_ connection: RelayServerConnection, writing: Bool) {
        let reading = !connection.isBacklogged
            && (connection.pausedUntil == nil || connection.readsWhilePaused(limit: RelayServer.heldLimit))
        var interest: EventLoop.Readiness = reading ? .readable : []
        if writing { interest.insert(.writable) }
        loop.setInterest(connection.socket.descriptor, interest)
    }

    /// Brings the server's share of the budget up to date with what `connection` holds.
    private func account(_ connection: RelayServerConnection) {
        let held = connection.isOpen ? connection.heldBytes : 0
        shellBytes += held - connection.accountedBytes
        connection.accountedBytes = held
    }

    private func flushDirty() {
        loop.preconditionInLoop()
        // Flushing may queue more (a load's next window), on this or another connection.
        for _ in 0..<4 where !dirty.isEmpty {
            let batch = dirty
            dirty.removeAll(keepingCapacity: true)
            if let writer, batch.count > RelayFanoutWriter.sharedThreshold {
                // A large fan-out: both threads write the queues, each connection by one of
                // them, then the loop goes on from each write's outcome as it would have.
                for connection in batch { connection.isDirty = false }
                let (outcomes, shared) = writer.write(batch)
                sharedFlushes += 1
                sharedWrites += shared
                for (connection, outcome) in zip(batch, outcomes) { flush(connection, written: outcome) }
            } else {
                // One writer: each connection's mark is cleared just before its own flush, as
                // before the second writer existed.
                for connection in batch {
                    connection.isDirty = false
                    flush(connection)
                }
            }
        }
        // Measuring: the transmit stamps of what was just written, after the writes.
        stamps?.drain()
    }

    private func markDirty(_ connection: RelayServerConnection) {
        guard !connection.isDirty else { return }
        connection.isDirty = true
        dirty.append(connection)
    }

    /// Forgets `connection`; `byPeer` when its peer closed it (end of stream, reset, hang-up),
    /// which gives the participant on it the core's shorter grace period.
    private func teardown(_ connection: RelayServerConnection, byPeer: Bool = false) {
        guard connections.removeValue(forKey: connection.id) != nil else { return }
        connection.isOpen = false
        loop.deregister(connection.socket.descriptor)
        connection.output.removeAll()
        connection.reader = RelayFrameReader()
        connection.held = []
        connection.heldFrameBytes = 0
        paused.remove(connection.id)
        account(connection)
        perform(core.onClose(connection.id, at: clock.instant().nanoseconds, byPeer: byPeer))
    }

    // MARK: UDP

    private func receiveDatagrams() {
        loop.preconditionInLoop()
        // A bounded batch per pass: datagrams never hold up reliable traffic for long.
        for _ in 0..<256 {
            guard let received = try? datagrams.receive(into: &datagramBuffer) else { return }
            let receiveTime = clock.instant().nanoseconds
            guard let sender = received.sender, received.length <= datagramBuffer.count else { continue }
            let bytes = datagramBuffer[..<received.length]
            if RelayDatagramKind.matches(bytes) {
                relay(bytes, from: sender, at: receiveTime)
            } else if case let .success(reply) = responder.reply(to: bytes, receivedAt: receiveTime) {
                _ = try? datagrams.send(reply, to: sender)
                counters.withLock { $0.timeRequestsAnswered += 1 }
            } else {
                counters.withLock { $0.datagramsIgnored += 1 }
            }
        }
        flushDirty()
    }

    private func relay(_ bytes: ArraySlice<UInt8>, from sender: SocketAddress, at now: Int64) {
        guard let datagram = try? RelayDatagram.decode(bytes) else {
            counters.withLock { $0.datagramsIgnored += 1 }
            return
        }
        switch datagram {
        case .register, .confirm, .unreliable:
            let directives = core.onDatagram(datagram, from: sender, at: now)
            if case .unreliable = datagram, !directives.isEmpty {
                counters.withLock { $0.datagramsRouted += 1 }
            } else if directives.isEmpty {
                counters.withLock { $0.datagramsIgnored += 1 }
            }
            perform(directives)
        case .cookie, .registered, .delivery:
            counters.withLock { $0.datagramsIgnored += 1 }
        }
    }

    // MARK: The core's directives

    private func tick(_ now: Int64) {
        loop.preconditionInLoop()
        if let until = acceptPausedUntil, now >= until {
            acceptPausedUntil = nil
            loop.setInterest(listener.descriptor, .readable)
            acceptAll()
        }
        for id in paused {
            guard let connection = connections[id], let until = connection.pausedUntil, now >= until else { continue }
            paused.remove(id)
            resumeReading(connection)
        }
        if now - offendersPruned >= 1_000_000_000 {
            offendersPruned = now
            offenders.prune(at: now)
        }
        if countsResidentMemory { measureFootprint(at: now) }
        core.shellBytes = shellBytes
        perform(core.onTick(at: now))
        shedOverBudget(at: now)
        for connection in connections.values {
            if let since = connection.closingSince, now - since > RelayServer.closingLimit { teardown(connection) }
        }
        flushDirty()
        let (sessions, open, strangers, accounted, limits) = (core.sessionCount, core.connectionCount, core.unauthenticatedCount,
                                                              core.budgetBytes, core.limitCounts)
        let (footprint, flushes, writes) = (core.footprintBytes, sharedFlushes, sharedWrites)
        counters.withLock {
            $0.footprintBytes = footprint
            $0.sharedFlushes = flushes
            $0.sharedWrites = writes
            $0.sessions = sessions
            $0.connections = open
            $0.unauthenticatedConnections = strangers
            $0.bytesAccounted = accounted
            $0.limits = limits
        }
    }

    /// Reads the resident memory (every `residentInterval`) into the core's footprint. While the
    /// footprint is at the limit and what the budget counts is not, freed memory the allocator
    /// still holds is handed back (malloc_trim(3)), at most every `trimInterval`, so that a
    /// relay past a peak does not refuse newcomers for memory it no longer uses.
    private func measureFootprint(at now: Int64) {
        guard residentRead.map({ now - $0 >= RelayServer.residentInterval }) ?? true, let baseline = residentBaseline,
              let resident = ProcessResidentMemory.current() else { return }
        residentRead = now
        core.footprintBytes = max(resident - baseline, 0)
        let limit = core.configuration.memoryLimit
        if core.footprintBytes >= limit, core.budgetBytes < limit,
           residentTrimmed.map({ now - $0 >= RelayServer.trimInterval }) ?? true {
            residentTrimmed = now
            ProcessResidentMemory.trimFreedMemory()
            if let trimmed = ProcessResidentMemory.current() { core.footprintBytes = max(trimmed - baseline, 0) }
        }
    }

    /// Over the relay-wide budget, the connection with the most waiting for it goes first (a
    /// peer that does not read), as long as it holds more than two load windows and their low
    /// water: nobody who keeps up is dropped, and what the relay holds comes back under its
    /// budget. When that is not enough, the largest holders' journals give way
    /// (`RelayCore.onOverBudget(at:)`).
    private func shedOverBudget(at now: Int64) {
        let limit = core.configuration.memoryLimit
        shedUnreadQueues(at: now)
        guard core.budgetBytes > limit else { return }
        core.shellBytes = shellBytes
        perform(core.onOverBudget(at: now))
    }

    /// The first part of `shedOverBudget(at:)`: the queues of those who do not read.
    private func shedUnreadQueues(at now: Int64) {
        let limit = core.configuration.memoryLimit
        let spared = 2 * (core.configuration.loadWindowBytes + core.configuration.drainLowWater)
        for _ in 0..<4 where core.budgetBytes > limit {
            guard let hog = connections.values.filter({ $0.closingSince == nil }).max(by: { $0.output.queuedBytes < $1.output.queuedBytes }),
                  hog.output.queuedBytes > spared else { return }
            hog.output.removeAll()
            account(hog)
            core.shellBytes = shellBytes
            let fault = RelayFault(.disconnected, "not reading while the relay is at its memory limit of \(limit) bytes")
            perform(core.onOverLimit(hog.id, fault, outputQueue: true, at: now))
        }
    }

    private func perform(_ directives: [RelayDirective]) {
        loop.preconditionInLoop()
        var directives = directives
        directiveHook?(&directives, core)
        // Cluster hook: what the core submitted goes to NATS (nothing on a single relay).
        if let clusterOutput, core.isClustered { takeClusterOutput(clusterOutput) }
        let configuration = core.configuration
        // A datagram to many recipients in a row goes out in as few system calls as it can.
        var fanout: DatagramFanout?
        for directive in directives {
            if case let .sendDatagram(token, datagram) = directive {
                guard let address = datagramAddresses[token] else { continue }
                if fanout?.datagram == datagram {
                    fanout?.addresses.append(address)
                } else {
                    send(fanout)
                    fanout = DatagramFanout(datagram: datagram, addresses: [address])
                }
                continue
            }
            send(fanout)
            fanout = nil
            switch directive {
            case let .send(id, frame):
                guard let connection = connections[id], !connection.writeShut else { continue }
                connection.output.append(frame)
                stamps?.queued(frame, on: connection)
                markDirty(connection)
                if connection.closingSince == nil,
                   connection.output.queuedBytes > configuration.maximumOutputBytes
                    || connection.output.count > configuration.maximumOutputFrames {
                    // A peer that does not read: what waits for it is dropped at once, and it
                    // gets only the reason.
                    connection.output.removeAll()
                    let fault = RelayFault(.disconnected, "not reading: more than \(configuration.maximumOutputBytes) bytes or \(configuration.maximumOutputFrames) frames waiting")
                    perform(core.onOverLimit(id, fault, outputQueue: true, at: clock.instant().nanoseconds))
                }
                account(connection)
            case let .close(id):
                guard let connection = connections[id], connection.closingSince == nil else { continue }
                connection.closingSince = clock.instant().nanoseconds
                connection.awaitingDrain = false
                markDirty(connection)
            case .sendDatagram:
                break
            case let .forgetToken(token):
                datagramAddresses[token] = nil
            case let .bindDatagrams(token, address):
                datagramAddresses[token] = address
            case let .answerDatagram(address, datagram):
                _ = try? datagrams.send(datagram.encoded(), to: address)
            case let .notifyWhenDrained(id):
                guard let connection = connections[id] else { continue }
                connection.awaitingDrain = true
                markDirty(connection)
            case let .pauseReading(id, until):
                guard let connection = connections[id] else { continue }
                connection.pausedUntil = max(connection.pausedUntil ?? until, until)
                paused.insert(id)
                updateInterest(connection, writing: !connection.output.isEmpty)
            }
        }
        send(fanout)
    }

    /// One datagram and the addresses it goes to.
    private struct DatagramFanout {
        var datagram: RelayDatagram
        var addresses: [SocketAddress]
    }

    /// Sends a fan-out's datagram, encoded once, to each of its addresses: at most once, as
    /// the network carries datagrams.
    private func send(_ fanout: DatagramFanout?) {
        guard let fanout else { return }
        let bytes = fanout.datagram.encoded()
        if fanout.addresses.count == 1 {
            _ = try? datagrams.send(bytes, to: fanout.addresses[0])
        } else {
            _ = try? datagrams.send(bytes, toEach: fanout.addresses)
        }
    }
}

// MARK: Measuring mode

/// What the relay's measuring mode saw over a stretch of time (`RelayServer.takeKernelTimestamps()`).
public struct RelayServerTimestamps: Sendable {
    /// Arrivals, copies and transmit stamps, to match (`RelayTimestampLedger.delays(to:)`).
    public var ledger: RelayTimestampLedger
    /// The loop thread's CPU time spent reading error queues since measuring began: what the
    /// measuring itself cost, to leave out of the relay's CPU per delivery.
    public var drainTime: TimeSpan
    /// Connections that could not be stamped, and error queues that could not be read.
    public var failures: Int
    /// Frames of every kind (deliveries, acknowledgements, pongs, notices) queued on stamped
    /// connections over the same stretch as `ledger`.
    public var framesQueued: Int
}

extension RelayServer {
    /// Turns the measuring mode on: every connection accepted from now (from one of `hosts`, when
    /// given) is stamped by the kernel (`SocketTimestamping`), and each delivery's arrival and
    /// transmit instants are kept until taken (`takeKernelTimestamps()`). For benchmarks; off by
    /// default, when it costs a check per frame. Call it before `start()`.
    public func measureKernelTimestamps(from hosts: Set<String>? = nil) {
        loop.execute { [self] in if stamps == nil { stamps = RelayServerStamps(hosts: hosts) } }
    }

    /// What the measuring mode saw since the last call (or since it was turned on), leaving it
    /// on; nil when it is off or the loop does not answer within a second.
    public func takeKernelTimestamps() -> RelayServerTimestamps? {
        let answer = LoopAnswer<RelayServerTimestamps?>(nil)
        loop.execute { [self] in
            let taken = stamps.map {
                let (ledger, frames) = $0.take()
                return RelayServerTimestamps(ledger: ledger, drainTime: $0.drainTime, failures: $0.failures, framesQueued: frames)
            }
            answer.value.withLock { $0 = taken }
            answer.ready.signal()
        }
        guard answer.ready.wait(timeout: .now() + .seconds(1)) == .success else { return nil }
        return answer.value.withLock { $0 }
    }

    /// The kernel id of the loop's thread (as `/proc/self/task` names it), for reading its CPU
    /// time or pinning it; nil when the loop does not answer within a second (not started).
    public func loopThreadID() -> Int32? {
        let answer = LoopAnswer<Int32?>(nil)
        loop.execute {
            let thread = SocketTimestamping.currentThreadID()
            answer.value.withLock { $0 = thread }
            answer.ready.signal()
        }
        guard answer.ready.wait(timeout: .now() + .seconds(1)) == .success else { return nil }
        return answer.value.withLock { $0 }
    }
}

/// An answer the loop gives another thread: `value` is set on the loop before `ready` is
/// signalled, and read after waiting for it.
private final class LoopAnswer<Value: Sendable>: Sendable {
    let ready = DispatchSemaphore(value: 0)
    let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
}

// MARK: Cluster hooks (`ClusterRelay` in Sources/TandemCluster). The cluster part's:
// this block, `clusterOutput` and the one line marked "cluster hook" in `perform`.

extension RelayServer {
    /// Runs `body` on the loop with the core and the loop's time (before `start()`, it runs
    /// first thing once started); its directives are carried out and written.
    package func withCore(_ body: @escaping @Sendable (inout RelayCore, Int64) -> [RelayDirective]) {
        loop.execute { [self] in
            perform(body(&core, clock.instant().nanoseconds))
            flushDirty()
        }
    }

    private func takeClusterOutput(_ carry: @Sendable (RelayClusterOutput) -> Void) {
        let output = core.takeClusterOutput()
        if !output.isEmpty { carry(output) }
    }
}

/// The loop's answer to "is everything written?": `empty` is set on the loop before `ready` is
/// signalled, and read only after waiting for it.
private final class DrainAnswer: Sendable {
    let ready = DispatchSemaphore(value: 0)
    let empty = Atomic<Bool>(false)
}
