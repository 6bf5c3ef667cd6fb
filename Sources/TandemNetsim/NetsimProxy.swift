#if canImport(Glibc)
import Glibc
#endif
import CTandemSystem
import Dispatch
import Foundation
import Synchronization
import TandemClock
import TandemNet

/// The network impairment proxy: listens on one port number for TCP and UDP, relays to a target,
/// and holds every datagram and every chunk of a byte stream until the `ImpairmentSchedule` says
/// it is due.
///
/// Each TCP client gets its own connection to the target; each UDP client address gets its own
/// socket towards the target, so that replies find their way back. Runs on a thread of its own
/// whose timer slack is 1 ns, waiting with `ppoll` to the nanosecond (the relay's `EventLoop`
/// waits whole milliseconds, which would be the proxy's error), and measures how late it
/// delivers against each item's scheduled instant: `statistics.lateness`.
///
/// Confinement: the relaying state (the schedule, the queue, the connections, the flows, the
/// buffers) belongs to the proxy's thread while it runs, and to `stop()` once the thread has
/// ended: each field is held `Confined` to that thread, which asserts every access, as every
/// handler of the thread's loop and `stop()` do (`preconditionOnProxyThread()`). The rest is
/// immutable or behind a `Mutex`.
public final class NetsimProxy: Sendable {
    /// Where clients reach the proxy, for TCP and UDP alike.
    public let address: SocketAddress
    /// Where the proxy relays to.
    public let target: SocketAddress
    /// What it adds.
    public let impairment: Impairment
    /// The seed of its decisions.
    public let seed: UInt64
    /// The clock that stamps arrivals and deliveries.
    public let clock: any LocalClock

    /// How long a UDP client may stay silent both ways before its socket is closed.
    public static let datagramFlowIdleLimit: Int64 = 120_000_000_000
    /// At most this many UDP clients at once; the longest silent one makes room for a new one.
    public static let maximumDatagramFlows = 1_024
    /// At most this many bytes of one TCP stream direction wait inside the proxy; beyond, it
    /// stops reading from the sender, so that TCP's own flow control pushes back.
    public static let streamBufferLimit = 4 * 1024 * 1024

    let listener: TCPSocket
    let datagrams: UDPSocket
    private let wakeup: WakeupChannel
    private let lifecycle = Mutex(Lifecycle.idle)
    private let finished = DispatchSemaphore(value: 0)
    let counters = Mutex(NetsimStatistics())
    /// The proxy's thread, while it runs; any thread before and after.
    private let proxyThread = ThreadConfinement(name: "the proxy's thread")

    // Confined to the proxy's thread once it runs.
    var schedule: ImpairmentSchedule {
        get { boundSchedule.value }
        _modify { yield &boundSchedule.value }
    }
    private let boundSchedule: Confined<ImpairmentSchedule>
    var queue: DeliveryQueue<Pending> {
        get { boundQueue.value }
        _modify { yield &boundQueue.value }
    }
    private let boundQueue: Confined<DeliveryQueue<Pending>>
    var connections: [UInt64: ProxiedConnection] {
        get { boundConnections.value }
        _modify { yield &boundConnections.value }
    }
    private let boundConnections: Confined<[UInt64: ProxiedConnection]>
    var flows: [SocketAddress: DatagramFlow] {
        get { boundFlows.value }
        _modify { yield &boundFlows.value }
    }
    private let boundFlows: Confined<[SocketAddress: DatagramFlow]>
    var nextConnection: UInt64 {
        get { boundNextConnection.value }
        _modify { yield &boundNextConnection.value }
    }
    private let boundNextConnection: Confined<UInt64>
    var readBuffer: [UInt8] {
        get { boundReadBuffer.value }
        _modify { yield &boundReadBuffer.value }
    }
    private let boundReadBuffer: Confined<[UInt8]>
    private var nextHousekeeping: Int64 {
        get { boundNextHousekeeping.value }
        _modify { yield &boundNextHousekeeping.value }
    }
    private let boundNextHousekeeping: Confined<Int64>

    private enum Lifecycle { case idle, running, stopping, stopped }

    /// An item held until its due time.
    enum Pending {
        case datagram(DatagramFlow, PathDirection, sequence: UInt64, bytes: [UInt8])
        case chunk(ProxiedConnection, PathDirection, bytes: [UInt8])
    }

    private enum PollTarget {
        case wakeup, listener, datagrams
        case flow(DatagramFlow)
        case client(ProxiedConnection), server(ProxiedConnection)
    }

    /// Binds TCP and UDP to `address` (port 0 picks a port free for both); `start()` relays to
    /// `target`, adding `impairment` with decisions drawn from `seed`.
    public init(address: SocketAddress, target: SocketAddress, impairment: Impairment, seed: UInt64 = 1,
                clock: any LocalClock = SystemClock()) throws(NetsimError) {
        if let problem = impairment.problem { throw .impossibleImpairment(problem) }
        do throws(SystemCallError) {
            let port = try SharedPort(binding: address)
            listener = port.listener
            datagrams = port.datagrams
            self.address = port.address
            wakeup = try WakeupChannel()
        } catch {
            throw .socket(error, address: address)
        }
        self.target = target
        self.impairment = impairment
        self.seed = seed
        self.clock = clock
        boundSchedule = Confined(ImpairmentSchedule(impairment: impairment, seed: seed), to: proxyThread)
        boundQueue = Confined(DeliveryQueue<Pending>(), to: proxyThread)
        boundConnections = Confined([:], to: proxyThread)
        boundFlows = Confined([:], to: proxyThread)
        boundNextConnection = Confined(0, to: proxyThread)
        boundReadBuffer = Confined([UInt8](repeating: 0, count: 65_536), to: proxyThread)
        boundNextHousekeeping = Confined(0, to: proxyThread)
    }

    /// What the proxy has seen and done so far, with its own added error.
    public var statistics: NetsimStatistics { counters.withLock { $0 } }

    /// Starts relaying on a thread of its own. Calling it again does nothing.
    public func start() {
        let shouldStart = lifecycle.withLock { state in
            guard state == .idle else { return false }
            state = .running
            return true
        }
        guard shouldStart else { return }
        let thread = Thread { [self] in
            // Wake-ups at due times are what this thread is for: no slack, and a name for `top -H`.
            _ = tandem_set_timer_slack(1)
            _ = tandem_set_thread_name("tandem-netsim")
            proxyThread.adopt()
            run()
            proxyThread.release()
            finished.signal()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Stops relaying and waits for the thread; every connection is closed and whatever was
    /// still held is dropped.
    public func stop() {
        let wasRunning = lifecycle.withLock { state in
            defer { if state != .stopped { state = .stopping } }
            return state == .running
        }
        if wasRunning {
            wakeup.wake()
            finished.wait()
        }
        lifecycle.withLock { $0 = .stopped }
        preconditionOnProxyThread()
        listener.shutdown()
        for connection in connections.values { close(connection) }
        connections.removeAll()
        for flow in flows.values { flow.closed = true }
        flows.removeAll()
        queue.removeAll { _ in true }
    }

    private var isRunning: Bool { lifecycle.withLock { $0 == .running } }

    /// Traps, in debug builds, unless the caller is the proxy's thread or that thread is not
    /// running (before `start()`, once `stop()` has waited for it): what touches the relaying
    /// state checks.
    func preconditionOnProxyThread(_ function: StaticString = #function, file: StaticString = #fileID, line: UInt = #line) {
        proxyThread.preconditionConfined(function, file: file, line: line)
    }

    private func run() {
        nextHousekeeping = clock.instant().nanoseconds + 1_000_000_000
        var entries: [pollfd] = []
        var targets: [PollTarget] = []
        while isRunning {
            deliverDue()
            entries.removeAll(keepingCapacity: true)
            targets.removeAll(keepingCapacity: true)
            func watch(_ descriptor: Int32, _ events: Int32, _ target: PollTarget) {
                guard events != 0 else { return }
                entries.append(pollfd(fd: descriptor, events: Int16(events), revents: 0))
                targets.append(target)
            }
            watch(wakeup.readDescriptor, POLLIN, .wakeup)
            watch(listener.descriptor, POLLIN, .listener)
            watch(datagrams.descriptor, POLLIN, .datagrams)
            for flow in flows.values { watch(flow.socket.descriptor, POLLIN, .flow(flow)) }
            for connection in connections.values {
                let limit = Self.streamBufferLimit
                watch(connection.client.descriptor,
                      (connection.wantsToRead(.up, limit: limit) ? POLLIN : 0) | (connection.wantsToWrite(.down) ? POLLOUT : 0),
                      .client(connection))
                watch(connection.server.descriptor,
                      (connection.wantsToRead(.down, limit: limit) ? POLLIN : 0)
                          | (!connection.connected || connection.wantsToWrite(.up) ? POLLOUT : 0),
                      .server(connection))
            }
            let now = clock.instant().nanoseconds
            // Wake at the next due item to the nanosecond, and at least once a second for housekeeping.
            let timeout = min(queue.nextDue.map { max($0 - now, 0) } ?? Int64.max, max(nextHousekeeping - now, 0))
            let ready = (try? SystemCall.run("ppoll") {
                tandem_poll_nanoseconds(&entries, UInt(entries.count), timeout)
            }) ?? 0
            deliverDue()
            if ready > 0 {
                for (entry, target) in zip(entries, targets) where entry.revents != 0 {
                    handle(target, revents: Int32(entry.revents))
                }
            }
            if clock.instant().nanoseconds >= nextHousekeeping { houseKeep() }
        }
    }

    private func handle(_ target: PollTarget, revents: Int32) {
        preconditionOnProxyThread()
        let readable = revents & (POLLIN | POLLERR | POLLHUP) != 0
        let writable = revents & (POLLOUT | POLLERR | POLLHUP) != 0
        switch target {
        case .wakeup: drainWakeups()
        case .listener: acceptClients()
        case .datagrams: receiveFromClients()
        case let .flow(flow): receiveFromTarget(flow)
        case let .client(connection):
            if writable { flush(connection, .down) }
            if readable { read(connection, .up) }
        case let .server(connection):
            if writable { serverWritable(connection) }
            if readable { read(connection, .down) }
        }
    }

    /// Delivers every held item whose time has come, in due order.
    func deliverDue() {
        preconditionOnProxyThread()
        // Bounded per pass, so that a flood cannot keep the loop from reading; the rest go next pass.
        for _ in 0..<4_096 {
            guard let (item, due) = queue.popDue(by: clock.instant().nanoseconds) else { return }
            switch item {
            case let .datagram(flow, direction, sequence, bytes): deliver(bytes, of: flow, direction, sequence: sequence, due: due)
            case let .chunk(connection, direction, bytes): deliver(bytes, of: connection, direction, due: due)
            }
        }
    }

    /// Records how late a delivery happened: the proxy's own added error.
    func recordLateness(due: Int64) {
        let lateness = clock.instant().nanoseconds - due
        counters.withLock { $0.lateness.record(lateness) }
    }

    private func drainWakeups() {
        var scratch = [UInt8](repeating: 0, count: 64)
        let descriptor = wakeup.readDescriptor
        for _ in 0..<64 {
            guard let received = try? SystemCall.run("recv", { recv(descriptor, &scratch, scratch.count, 0) }), received > 0 else { return }
        }
    }

    private func houseKeep() {
        preconditionOnProxyThread()
        let now = clock.instant().nanoseconds
        nextHousekeeping = now + 1_000_000_000
        for (client, flow) in flows where now - flow.lastActivity > Self.datagramFlowIdleLimit {
            flow.closed = true
            flows[client] = nil
        }
    }
}
