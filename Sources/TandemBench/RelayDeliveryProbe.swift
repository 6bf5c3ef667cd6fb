#if canImport(Glibc)
import Glibc
#endif
import CTandemSystem
import Foundation
import TandemClock
import TandemNet

/// The relay's own delivery, measured without the client stack: participants that speak the
/// relay's frames by hand (`RelayProbeConnection`), all read by one epoll thread, while a pacing
/// thread sends reliable messages on an even schedule, each stamped as it leaves
/// (`RelayDeliveryRecorder`'s body format). A receipt is stamped as soon as its bytes are read.
///
/// What this leaves out is exactly what the full-stack figure adds: the links' cores, their
/// event loops and the hop of each event onto the cooperative pool. Both are reported, side by
/// side and labelled. Bounded: every run stops at its expected count or its timeout.
struct RelayDeliveryProbe: Sendable {
    /// The relay's address.
    let address: SocketAddress
    /// Phase bytes the probe stamps its bodies with (the recorder's format).
    let phase: UInt8
    /// How its pacing and reading threads are scheduled.
    let priority: ThreadPriority
    /// Whether the reading thread polls without sleeping while it waits for deliveries. On
    /// loopback, every frame the relay sends to a sleeping reader also wakes it, on the relay's
    /// time (a cross-CPU wake-up, costly in a virtual machine): a reader that never sleeps
    /// leaves the relay only its sends to pay for, as receivers on other machines do. It costs
    /// a CPU while the run lasts.
    var busyPolling = false

    /// What one run measured.
    struct Outcome: Sendable {
        /// Send-to-receipt latency of every delivery read, in nanoseconds.
        var latencies: [Double]
        /// How late each message left after its instant, in nanoseconds.
        var lateness: [Double]
    }

    /// `sessions` sessions of `size` participants each, session by session, the first of each
    /// creating it. Each joins with a fresh key of its own and the benchmark's session key.
    func join(sessions: Int, size: Int) throws -> [[RelayProbeConnection]] {
        let sessionKey = SigningKeyPair(seed: [UInt8](repeating: 0x42, count: 32))
        var joined: [[RelayProbeConnection]] = []
        joined.reserveCapacity(sessions)
        for index in 0..<sessions {
            let session = UUID()
            var members: [RelayProbeConnection] = []
            for member in 0..<size {
                members.append(try RelayProbeConnection(address: address, session: session, sessionKey: sessionKey,
                                                        create: member == 0, name: "probe\(index)-\(member)"))
            }
            joined.append(members)
        }
        return joined
    }

    /// Sends `messages` reliable messages, message `i` from `senders[i % senders.count]` at
    /// `start + i × interval`, while reading every connection in `watched`, until `expected`
    /// deliveries have arrived or `timeout` has passed since the last message was due.
    func run(senders: [RelayProbeConnection], watched: [RelayProbeConnection], messages: Int, interval: Int64,
             expected: Int, timeout: Int64) async throws -> Outcome {
        let clock = SystemClock()
        let start = clock.instant().nanoseconds + 20_000_000
        let recorder = RelayDeliveryRecorder(clock: clock)
        let phase = phase
        let priority = priority
        let busyPolling = busyPolling
        async let lateness = Self.onThread("bench-probe-pace", priority) {
            var lateness: [Double] = []
            lateness.reserveCapacity(messages)
            for index in 0..<messages {
                let due = start + Int64(index) * interval
                var request = timespec(tv_sec: Int(due / 1_000_000_000), tv_nsec: Int(due % 1_000_000_000))
                while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &request, nil) == EINTR {}
                lateness.append(Double(clock.instant().nanoseconds - due))
                try senders[index % senders.count].sendMessage(recorder.body(phase: phase), at: clock.instant().nanoseconds)
            }
            return lateness
        }
        let deadline = start + Int64(messages) * interval + timeout
        async let latencies = Self.onThread("bench-probe-read", priority) {
            try Self.read(watched, expected: expected, until: deadline, busyPolling: busyPolling, clock: clock)
        }
        return Outcome(latencies: try await latencies, lateness: try await lateness)
    }

    /// Reads every connection on one epoll thread, stamping deliveries, until `expected` or
    /// `deadline`; every 10 ms each connection acknowledges and pings as a link's tick would.
    static func read(_ connections: [RelayProbeConnection], expected: Int, until deadline: Int64,
                             busyPolling: Bool, clock: SystemClock) throws -> [Double] {
        let epoll = tandem_epoll_create()
        guard epoll >= 0 else { throw RelayBenchmarkError("epoll_create1 failed: errno \(errno)") }
        defer { close(epoll) }
        for (index, connection) in connections.enumerated() {
            guard tandem_epoll_ctl(epoll, tandem_epoll_add, connection.socket.descriptor, tandem_epoll_in, UInt64(index)) == 0 else {
                throw RelayBenchmarkError("epoll_ctl failed: errno \(errno)")
            }
        }
        var latencies: [Double] = []
        latencies.reserveCapacity(expected)
        var ready = [tandem_epoll_ready](repeating: tandem_epoll_ready(), count: Int(TANDEM_EPOLL_BATCH))
        var lastTick = clock.instant().nanoseconds
        while latencies.count < expected, clock.instant().nanoseconds < deadline {
            let count = ready.withUnsafeMutableBufferPointer { buffer in
                tandem_epoll_pwait2(epoll, buffer.baseAddress, Int32(buffer.count), busyPolling ? 0 : 5_000_000)
            }
            // A busy poller at a real-time priority gives way to its equals (the pacing thread)
            // whenever it finds nothing, rather than hold its CPU for a whole time slice.
            if busyPolling, count == 0 { sched_yield() }
            for index in 0..<max(Int(count), 0) {
                try connections[Int(ready[index].token)].receive(at: clock.instant().nanoseconds) { body in
                    guard body.count >= 9 else { return }
                    let now = clock.instant().nanoseconds
                    let sent = body[1...8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                    latencies.append(Double(now - Int64(bitPattern: sent)))
                }
            }
            let now = clock.instant().nanoseconds
            if now - lastTick >= Self.tickInterval {
                lastTick = now
                for connection in connections { try connection.tick(at: now) }
            }
        }
        for connection in connections { try? connection.acknowledge() }
        return latencies
    }

    /// How often the reading thread ticks every connection, as a link's loop does.
    static let tickInterval: Int64 = 10_000_000

    /// Runs `body` on a thread of its own at `priority` (blocking calls never run on the
    /// cooperative pool).
    static func onThread<T: Sendable>(_ name: String, _ priority: ThreadPriority,
                                              _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let thread = Thread {
                continuation.resume(with: Result {
                    try priority.applyToCurrentThread()
                    return try body()
                })
            }
            thread.name = name
            thread.start()
        }
    }
}
