#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization
@testable import TandemNet
import TandemClock
import Testing
import TandemHarness

/// The epoll loop on real sockets on loopback: readiness of many descriptors, interest changes,
/// handlers that deregister others, tasks from other threads and scheduled tasks. Every wait is
/// for an event, bounded in time; none is a sleep.
@Suite struct EventLoopIOTests {
    @Test func everyReadyDescriptorOfManyRunsItsHandlerOnce() throws {
        let loop = try EventLoop(name: "test-many")
        loop.start()
        defer { stopped(loop) }
        let pairs = try (0..<300).map { _ in try TCPPair() }
        let seen = Mutex<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        onLoop(loop) {
            for (index, pair) in pairs.enumerated() {
                loop.register(pair.server.descriptor, interest: .readable) { readable, _, _ in
                    var buffer = [UInt8](repeating: 0, count: 16)
                    // Reading the one byte makes the descriptor quiet again, so a second call
                    // would be a bug in the loop, not in the test.
                    _ = try? pair.server.read(into: &buffer)
                    let count = seen.withLock { seen in
                        seen.append(index)
                        return seen.count
                    }
                    if readable, count == pairs.count { done.signal() }
                }
            }
            #expect(loop.registered == pairs.count)
        }
        for pair in pairs.reversed() { try pair.client.writeAll([7]) }
        #expect(done.wait(timeout: .now() + 10) == .success)
        // A barrier: one more pass after the last, in which no quieted descriptor may fire again.
        barrier(loop, through: try TCPPair())
        let indices = seen.withLock { $0 }
        #expect(indices.count == pairs.count)
        #expect(Set(indices).count == pairs.count)
        withExtendedLifetime(pairs) {}
    }

    @Test func interestDecidesWhatTheHandlerIsCalledFor() throws {
        let loop = try EventLoop(name: "test-interest")
        loop.start()
        defer { stopped(loop) }
        let pair = try TCPPair()
        let calls = Mutex<[(readable: Bool, writable: Bool)]>([])
        let called = DispatchSemaphore(value: 0)
        onLoop(loop) {
            loop.register(pair.server.descriptor, interest: []) { readable, writable, _ in
                calls.withLock { $0.append((readable, writable)) }
                if writable { loop.setInterest(pair.server.descriptor, []) }
                if readable {
                    var buffer = [UInt8](repeating: 0, count: 16)
                    _ = try? pair.server.read(into: &buffer)
                }
                called.signal()
            }
        }
        try pair.client.writeAll([1])
        barrier(loop, through: try TCPPair())
        #expect(calls.withLock { $0.isEmpty }, "a descriptor watched for nothing was reported ready")

        onLoop(loop) { loop.setInterest(pair.server.descriptor, .readable) }
        #expect(called.wait(timeout: .now() + 5) == .success)
        #expect(calls.withLock { $0.map(\.readable) } == [true])

        // Writable: a connected socket with room in its buffer; the handler then stops watching.
        onLoop(loop) { loop.setInterest(pair.server.descriptor, .writable) }
        #expect(called.wait(timeout: .now() + 5) == .success)
        barrier(loop, through: try TCPPair())
        let all = calls.withLock { $0 }
        #expect(all.count == 2)
        #expect(all.last?.writable == true && all.last?.readable == false)
    }

    @Test func aHandlerMayDeregisterAnotherReadyOneAndReuseItsNumber() throws {
        let loop = try EventLoop(name: "test-deregister")
        loop.start()
        defer { stopped(loop) }
        let pairs = [SendableBox<TCPPair?>(try TCPPair()), SendableBox<TCPPair?>(try TCPPair())]
        let descriptors = pairs.map { $0.value!.server.descriptor }
        let fired = Mutex<[String]>([])
        let replacement = Mutex<(UDPSocket, Int32)?>(nil)
        let once = DispatchSemaphore(value: 0)
        // Both become readable before either is registered, so that one pass reports both.
        for pair in pairs { try pair.value!.client.writeAll([1]) }
        onLoop(loop) {
            for (me, descriptor) in descriptors.enumerated() {
                loop.register(descriptor, interest: .readable) { _, _, _ in
                    fired.withLock { $0.append("pair-\(me)") }
                    // Whoever runs first drops the other, closes it, and puts a new socket that
                    // is not readable at the other's number: the other's stale event must reach
                    // neither the dropped handler nor the new one.
                    let other = 1 - me
                    loop.deregister(descriptors[other])
                    loop.deregister(descriptor)
                    pairs[other].value = nil
                    guard let socket = try? UDPSocket(boundTo: try SocketAddress(host: "127.0.0.1", port: 0)),
                          dup2(socket.descriptor, descriptors[other]) == descriptors[other] else { return }
                    replacement.withLock { $0 = (socket, descriptors[other]) }
                    loop.register(descriptors[other], interest: .readable) { _, _, _ in fired.withLock { $0.append("replacement") } }
                    once.signal()
                }
            }
        }
        #expect(once.wait(timeout: .now() + 5) == .success)
        barrier(loop, through: try TCPPair())
        #expect(fired.withLock { $0.count } == 1, "\(fired.withLock { $0 })")
        // The duplicate at the other's number is closed here; the UDP socket closes itself.
        if let (_, number) = replacement.withLock({ $0 }) {
            onLoop(loop) { loop.deregister(number) }
            close(number)
        }
    }

    // Tasks from other threads in each thread's order, on both loops: `SerialEventLoopContractIOTests`.

    @Test func scheduledTasksRunAtTheirDeadlinesInOrderUnlessCancelled() throws {
        let clock = VirtualClock(start: 1_000_000_000)
        let loop = try EventLoop(name: "test-schedule", clock: clock, tickInterval: .seconds(1_000))
        loop.start()
        defer { stopped(loop) }
        let ran = Mutex<[String]>([])
        let start = clock.instant().nanoseconds
        let late = loop.schedule(at: LocalInstant(nanoseconds: start + 3_000)) { ran.withLock { $0.append("late") } }
        loop.schedule(at: LocalInstant(nanoseconds: start + 1_000)) { ran.withLock { $0.append("early") } }
        // Ties run in the order they were scheduled, whichever thread scheduled them.
        loop.schedule(at: LocalInstant(nanoseconds: start + 2_000)) { ran.withLock { $0.append("tie-1") } }
        onLoop(loop) { loop.schedule(at: LocalInstant(nanoseconds: start + 2_000)) { ran.withLock { $0.append("tie-2") } } }
        let cancelled = loop.schedule(at: LocalInstant(nanoseconds: start + 2_500)) { ran.withLock { $0.append("cancelled") } }
        #expect(cancelled.cancel())
        #expect(!cancelled.cancel(), "a second cancel reports that nothing was left to cancel")

        onLoop(loop) {}
        #expect(ran.withLock { $0 }.isEmpty, "nothing is due before the clock moves")
        clock.set(to: start + 2_000)
        onLoop(loop) {}
        // The pass that runs the barrier may precede the due tasks'; one more settles it.
        onLoop(loop) {}
        #expect(ran.withLock { $0 } == ["early", "tie-1", "tie-2"])
        #expect(late.isPending)
        clock.set(to: start + 3_000)
        onLoop(loop) {}
        onLoop(loop) {}
        #expect(ran.withLock { $0 } == ["early", "tie-1", "tie-2", "late"])
        #expect(!late.isPending)
        #expect(!late.cancel(), "a task that ran cannot be cancelled")
    }

    /// With epoll_pwait2 and with the timer descriptor that older kernels need.
    @Test(arguments: [false, true])
    func aScheduledTaskWakesTheLoopOnTheRealClock(timerDescriptor: Bool) throws {
        let clock = SystemClock()
        let loop = try EventLoop(name: "test-wake", clock: clock, tickInterval: .seconds(1_000), timedByDescriptor: timerDescriptor)
        loop.start()
        defer { stopped(loop) }
        let ranAt = Atomic<Int64>(0)
        let done = DispatchSemaphore(value: 0)
        let deadline = clock.instant().nanoseconds + 2_000_000
        loop.schedule(at: LocalInstant(nanoseconds: deadline)) {
            ranAt.store(clock.instant().nanoseconds, ordering: .relaxed)
            done.signal()
        }
        // Nothing else wakes the loop: no descriptor, no task, and a tick a thousand seconds off.
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(ranAt.load(ordering: .relaxed) >= deadline, "a scheduled task ran before its deadline")
        // And sockets are served as well on that path.
        let pair = try TCPPair()
        let read = DispatchSemaphore(value: 0)
        onLoop(loop) {
            loop.register(pair.server.descriptor, interest: .readable) { _, _, _ in
                loop.deregister(pair.server.descriptor)
                read.signal()
            }
        }
        try pair.client.writeAll([1])
        #expect(read.wait(timeout: .now() + 10) == .success)
    }

    @Test func thisKernelWaitsToTheNanosecondWithoutATimer() {
        // Linux 5.11 and later: a loop here needs no timer descriptor (the fallback is tested above).
        #expect(EventLoop.hasPreciseWait)
    }

    @Test func cancellingManyScheduledTasksKeepsTheHeapBounded() throws {
        let loop = try EventLoop(name: "test-compact", clock: VirtualClock(), tickInterval: .seconds(1_000))
        loop.start()
        defer { stopped(loop) }
        onLoop(loop) {
            for index in 0..<10_000 { loop.schedule(at: LocalInstant(nanoseconds: 1_000 + Int64(index))) {}.cancel() }
            #expect(loop.scheduled.count <= 2_048)
        }
    }

    #if DEBUG
    @Test func loopOnlyMethodsTrapOffTheLoopWhileItRuns() async {
        await #expect(processExitsWith: .failure) {
            let loop = try EventLoop(name: "test-confined")
            loop.start()
            let started = DispatchSemaphore(value: 0)
            loop.execute { started.signal() }
            _ = started.wait(timeout: .now() + 10)
            loop.addTicker { _ in }
        }
    }
    #endif

    // MARK: Helpers

    /// Runs `body` on the loop and waits for it.
    @Test func aRelayTransportDroppedUnclosedLetsGoOfItsSocket() throws {
        let loop = try EventLoop(name: "test-dropped")
        loop.start()
        defer { stopped(loop) }
        let listener = try TCPSocket.listening(on: try SocketAddress(host: "127.0.0.1", port: 0))
        let address = try listener.localAddress()
        // Counted on the loop, compared here.
        let counts = Mutex<[Int]>([])
        onLoop(loop) {
            counts.withLock { $0.append(loop.registered) }
            // A link dropped without `leave()`: its transport goes, its socket registered.
            var transport: NetworkRelayTransport? = NetworkRelayTransport(addresses: [address], loop: loop)
            transport?.connect(to: 0)
            counts.withLock { $0.append(loop.registered) }
            transport = nil
        }
        var accepted: TCPSocket?
        for _ in 0..<100 where accepted == nil {
            accepted = try listener.accept()?.socket
            if accepted == nil { usleep(10_000) }
        }
        #expect(accepted != nil)
        // The relay closes its end: before, the end of stream woke the loop at every pass, for
        // good, and the socket stayed open (CLOSE-WAIT).
        accepted = nil
        barrier(loop, through: try TCPPair())
        onLoop(loop) { counts.withLock { $0.append(loop.registered) } }
        let (idle, connected, after) = counts.withLock { ($0[0], $0[1], $0[2]) }
        #expect(connected == idle + 1)
        #expect(after == idle)
    }

    private func onLoop(_ loop: EventLoop, _ body: @escaping () -> Void) {
        let done = DispatchSemaphore(value: 0)
        let box = SendableBox(body)
        loop.execute {
            box.value()
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success, "the loop did not run a task")
    }

    /// Returns once the loop has reported a descriptor that became ready after everything the
    /// caller did before: every descriptor ready by then has been reported in that pass or before.
    private func barrier(_ loop: EventLoop, through pair: TCPPair) {
        let done = DispatchSemaphore(value: 0)
        onLoop(loop) {
            loop.register(pair.server.descriptor, interest: .readable) { _, _, _ in
                loop.deregister(pair.server.descriptor)
                done.signal()
            }
        }
        #expect((try? pair.client.writeAll([0])) != nil)
        #expect(done.wait(timeout: .now() + 10) == .success, "the barrier descriptor was never reported")
        // Let the pass in which the barrier fired finish.
        onLoop(loop) {}
    }

    private func stopped(_ loop: EventLoop) {
        loop.stop()
        loop.reset()
    }
}

/// Carries a value confined by the test's own synchronisation (semaphores) across threads.
final class SendableBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// A connected TCP pair on loopback: the client's end and the server's accepted end.
struct TCPPair: @unchecked Sendable {
    let client: TCPSocket
    let server: TCPSocket

    init() throws {
        let listener = try TCPSocket.listening(on: try SocketAddress(host: "127.0.0.1", port: 0))
        client = try TCPSocket(family: AF_INET)
        _ = try client.connect(to: try listener.localAddress())
        var accepted: TCPSocket?
        // Loopback connects complete in the kernel at once; wait for the listener, bounded.
        for _ in 0..<100 where accepted == nil {
            accepted = try listener.accept()?.socket
            if accepted == nil {
                var entry = pollfd(fd: listener.descriptor, events: Int16(POLLIN), revents: 0)
                _ = poll(&entry, 1, 100)
            }
        }
        guard let accepted else { throw SystemCallError(call: "accept", errno: ETIMEDOUT) }
        server = accepted
        // The client's connect has completed once the server has it.
        var entry = pollfd(fd: client.descriptor, events: Int16(POLLOUT), revents: 0)
        _ = poll(&entry, 1, 1_000)
    }
}

extension TCPSocket {
    /// Writes all of `bytes` (a few, into an empty buffer: it never blocks here).
    func writeAll(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            guard let written = try write(bytes[offset...]) else { throw SystemCallError(call: "send", errno: EAGAIN) }
            offset += written
        }
    }
}

@Suite struct EventLoopReuseIOTests {
    /// Code that closes a socket without deregistering it and then opens another that takes its
    /// number must still be able to watch the new one (epoll forgot the old one by itself).
    @Test func aNumberClosedWithoutDeregisteringCanBeWatchedAgain() throws {
        let loop = try EventLoop(name: "test-reuse")
        loop.start()
        defer {
            loop.stop()
            loop.reset()
        }
        let first = SendableBox<TCPPair?>(try TCPPair())
        let number = first.value!.server.descriptor
        let fired = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let second = SendableBox<TCPPair?>(nil)
        loop.execute {
            loop.register(number, interest: .readable) { _, _, _ in }
            first.value = nil
            guard let pair = try? TCPPair(), dup2(pair.server.descriptor, number) == number else {
                done.signal()
                return
            }
            second.value = pair
            loop.register(number, interest: .readable) { _, _, _ in
                loop.deregister(number)
                fired.signal()
            }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        try #require(second.value != nil)
        try second.value!.client.writeAll([1])
        #expect(fired.wait(timeout: .now() + 10) == .success)
        close(number)
    }
}

@Suite struct ScheduledTaskQueueTests {
    /// The heap against a sort: random deadlines with many ties, a third cancelled, drained at
    /// rising instants, through compactions.
    @Test func runsTasksByDeadlineThenSchedulingOrderAndSkipsCancelledOnes() {
        var random = SeededRandom(seed: 42)
        var queue = ScheduledTaskQueue()
        let ran = Mutex<[Int]>([])
        var expected: [(deadline: Int64, index: Int)] = []
        for index in 0..<3_000 {
            let deadline = Int64.random(in: 0..<500, using: &random)
            let task = ScheduledTask(due: LocalInstant(nanoseconds: deadline)) { ran.withLock { $0.append(index) } }
            queue.insert(task)
            if Int.random(in: 0..<3, using: &random) == 0 {
                #expect(task.cancel())
            } else {
                expected.append((deadline, index))
            }
        }
        expected.sort { $0.deadline != $1.deadline ? $0.deadline < $1.deadline : $0.index < $1.index }
        for now in stride(from: Int64(0), through: 504, by: 7) {
            for body in queue.popDue(at: LocalInstant(nanoseconds: now)) { body() }
        }
        #expect(ran.withLock { $0 } == expected.map(\.index))
        #expect(queue.count == 0)
        #expect(queue.nextDeadline == nil)
    }
}
