#if canImport(Glibc)
import Glibc
#endif
import CTandemSystem
import Foundation
import Synchronization
import TandemClock
import TandemNet
import TandemWire

/// The floor under the relay's own cost, timed the way the relay's measuring mode is: a bare
/// forwarder on one thread (pinned where the relay's loop is) that reads each frame a sender
/// writes it and writes the bytes to that sender's recipients, no core, no outbox, no encoding
/// per recipient, with the kernel stamping every socket (`SocketTimestamping`). Senders write
/// delivery frames on an even schedule from a thread of their own, and the recipients are read
/// on one epoll thread (`RelayDeliveryProbe.read`), as the probe's are.
///
/// Shapes: one sender and 199 recipients (the large session's broadcast), or 1,000 senders of
/// one recipient each (the sessions of two).
struct RelayDeliveryForwarder: Sendable {
    /// Senders, each with its own connection to the forwarder.
    let senders: Int
    /// Recipients of each sender.
    let recipientsPerSender: Int
    /// Phase bytes the bodies are stamped with (the recorder's format).
    let phase: UInt8
    /// How the sending and reading threads are scheduled (the forwarder's keeps the default).
    let priority: ThreadPriority
    /// The processor the forwarder's thread is pinned to; nil leaves it free.
    var cpu: Int?
    /// Whether the reader busy-polls, as the probe's does with `--busy-poll`.
    var busyPolling = false

    /// What one run measured.
    struct Outcome: Sendable {
        /// What the recipients saw (send to receipt) and how late each message left.
        var clients: RelayDeliveryProbe.Outcome
        /// Arrivals, copies and transmit stamps on the forwarder's sockets.
        var ledger: RelayTimestampLedger
        /// The forwarder thread's CPU time, reading its error queues left out.
        var cpuTime: TimeSpan
        /// The forwarder thread's CPU time reading its error queues.
        var drainTime: TimeSpan
        /// Frames forwarded (reads of a sender's socket).
        var forwarded: Int
    }

    /// Sends `messages` frames `interval` nanoseconds apart, message `i` from sender
    /// `i % senders`, and forwards them until every copy has been read or `timeout` has passed
    /// after the last was due.
    func run(messages: Int, interval: Int64, timeout: Int64) async throws -> Outcome {
        let listener = try TCPSocket.listening(on: try SocketAddress(host: "127.0.0.1", port: 0))
        let address = try listener.localAddress()
        var inbound: [TCPSocket] = []
        var senderSockets: [TCPSocket] = []
        var outbound: [[TCPSocket]] = []
        var readers: [RelayProbeConnection] = []
        for _ in 0..<senders {
            let (client, server) = try Self.connect(to: address, listener: listener)
            try SocketTimestamping.enable(server.descriptor)
            senderSockets.append(client)
            inbound.append(server)
            var group: [TCPSocket] = []
            for _ in 0..<recipientsPerSender {
                let (reader, forwarding) = try Self.connect(to: address, listener: listener)
                try SocketTimestamping.enable(forwarding.descriptor)
                group.append(forwarding)
                readers.append(RelayProbeConnection(connected: reader))
            }
            outbound.append(group)
        }
        let clock = SystemClock()
        let start = clock.instant().nanoseconds + 20_000_000
        let deadline = start + Int64(messages) * interval + timeout
        let recorder = RelayDeliveryRecorder(clock: clock)
        let done = ForwarderStop()
        let (phase, priority, cpu, busyPolling) = (phase, priority, cpu, busyPolling)
        let (sources, targets, expected) = (inbound, outbound, messages * recipientsPerSender)
        async let forwarding = RelayDeliveryProbe.onThread("bench-forward", .normal) {
            if let cpu { try SocketTimestamping.pin(task: SocketTimestamping.currentThreadID(), toCPU: cpu) }
            return try Self.forward(from: sources, to: targets, until: deadline, done: done, clock: clock)
        }
        let (sockets, count) = (senderSockets, senders)
        async let lateness = RelayDeliveryProbe.onThread("bench-fwd-send", priority) {
            var lateness: [Double] = []
            lateness.reserveCapacity(messages)
            let sender = UUID()
            for index in 0..<messages {
                let due = start + Int64(index) * interval
                var request = timespec(tv_sec: Int(due / 1_000_000_000), tv_nsec: Int(due % 1_000_000_000))
                while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &request, nil) == EINTR {}
                lateness.append(Double(clock.instant().nanoseconds - due))
                let frame = RelayFrame.delivery(sequence: UInt64(index / count + 1), sender: sender, reliable: true,
                                                body: recorder.body(phase: phase)).encoded()
                try RelayProbeConnection.writeAll(frame, to: sockets[index % count])
            }
            return lateness
        }
        let watched = readers
        async let latencies = RelayDeliveryProbe.onThread("bench-fwd-read", priority) {
            defer { done.stop() }
            return try RelayDeliveryProbe.read(watched, expected: expected, until: deadline, busyPolling: busyPolling, clock: clock)
        }
        let clients = RelayDeliveryProbe.Outcome(latencies: try await latencies, lateness: try await lateness)
        let forwarded = try await forwarding
        for socket in senderSockets + inbound + outbound.flatMap({ $0 }) { socket.shutdown() }
        return Outcome(clients: clients, ledger: forwarded.ledger, cpuTime: forwarded.cpuTime, drainTime: forwarded.drainTime,
                       forwarded: forwarded.records)
    }

    private struct Forwarded: Sendable {
        var ledger: RelayTimestampLedger
        var cpuTime: TimeSpan
        var drainTime: TimeSpan
        var records: Int
    }

    /// The forwarder's loop: every sender's socket on one epoll, each read written whole to the
    /// sender's recipients, then their error queues read (timed apart).
    private static func forward(from sources: [TCPSocket], to targets: [[TCPSocket]], until deadline: Int64,
                                done: ForwarderStop, clock: SystemClock) throws -> Forwarded {
        let epoll = tandem_epoll_create()
        guard epoll >= 0 else { throw RelayBenchmarkError("epoll_create1 failed: errno \(errno)") }
        defer { close(epoll) }
        for (index, socket) in sources.enumerated() {
            guard tandem_epoll_ctl(epoll, tandem_epoll_add, socket.descriptor, tandem_epoll_in, UInt64(index)) == 0 else {
                throw RelayBenchmarkError("epoll_ctl failed: errno \(errno)")
            }
        }
        // Stream numbers: recipient `j` of sender `i` is `i × width + j`.
        let width = targets.first?.count ?? 0
        var streamBytes = [Int](repeating: 0, count: sources.count * width)
        var ledger = RelayTimestampLedger()
        let stamps = SocketTimestamping()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var ready = [tandem_epoll_ready](repeating: tandem_epoll_ready(), count: Int(TANDEM_EPOLL_BATCH))
        var drainTime = TimeSpan.zero
        let started = SocketTimestamping.threadCPUTime()
        while !done.isStopped, clock.instant().nanoseconds < deadline {
            let count = ready.withUnsafeMutableBufferPointer { tandem_epoll_pwait2(epoll, $0.baseAddress, Int32($0.count), 5_000_000) }
            for item in 0..<max(Int(count), 0) {
                let source = Int(ready[item].token)
                while let (read, arrival) = try SocketTimestamping.receive(sources[source].descriptor, into: &buffer), read > 0 {
                    let bytes = Array(buffer[..<read])
                    let record = arrival.map { ledger.arrive(at: $0) }
                    for (index, socket) in targets[source].enumerated() {
                        try RelayProbeConnection.writeAll(bytes, to: socket)
                        let stream = source * width + index
                        streamBytes[stream] += read
                        if let record { ledger.send(record: record, stream: stream, lastByte: streamBytes[stream] - 1) }
                    }
                    let draining = SocketTimestamping.threadCPUTime()
                    for (index, socket) in targets[source].enumerated() {
                        try stamps.drain(socket.descriptor, stream: source * width + index, into: &ledger)
                    }
                    drainTime += SocketTimestamping.threadCPUTime() - draining
                    if read < buffer.count { break }
                }
            }
        }
        let cpuTime = SocketTimestamping.threadCPUTime() - started - drainTime
        return Forwarded(ledger: ledger, cpuTime: cpuTime, drainTime: drainTime, records: ledger.records)
    }

    /// A connected pair on loopback: the client's end and the accepted end, both without Nagle.
    static func connect(to address: SocketAddress, listener: TCPSocket) throws -> (client: TCPSocket, server: TCPSocket) {
        let client = try TCPSocket(family: address.family)
        try client.setNoDelay()
        if try !client.connect(to: address) {
            guard try RelayProbeConnection.wait(client.descriptor, events: Int16(POLLOUT), timeout: 5_000_000_000),
                  client.pendingError() == 0 else { throw RelayBenchmarkError("forwarder: cannot connect: errno \(client.pendingError())") }
        }
        var accepted = try listener.accept()
        if accepted == nil {
            guard try RelayProbeConnection.wait(listener.descriptor, events: Int16(POLLIN), timeout: 5_000_000_000) else {
                throw RelayBenchmarkError("forwarder: no connection to accept")
            }
            accepted = try listener.accept()
        }
        guard let server = accepted?.socket else { throw RelayBenchmarkError("forwarder: no connection to accept") }
        try server.setNoDelay()
        return (client, server)
    }
}

/// Set by the reading thread once every copy is read (or its time is up): the forwarder stops.
private final class ForwarderStop: Sendable {
    private let stopped = Atomic<Bool>(false)
    func stop() { stopped.store(true, ordering: .releasing) }
    var isStopped: Bool { stopped.load(ordering: .acquiring) }
}
