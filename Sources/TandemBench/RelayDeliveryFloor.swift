#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TandemClock
import TandemNet
import TandemWire

/// The floor under the relay's broadcast figure, measured in the same run: the same reliable
/// broadcasts (the same delivery frames, the same sizes) written by one thread of this process
/// straight to `recipients` loopback sockets, one send each, to the same readers on one epoll
/// thread (`RelayProbeConnection`). No relay: no sender-to-relay hop, no core, no outbox, no
/// encoding per recipient. What is left is what this machine charges for 199 loopback sends
/// (on Linux, most of it the receiver's TCP processing, done in the sender's context), and the
/// wake-ups of the reader.
struct RelayDeliveryFloor: Sendable {
    /// How many sockets each broadcast is written to.
    let recipients: Int
    /// Phase bytes the bodies are stamped with (the recorder's format).
    let phase: UInt8
    /// How the sending and reading threads are scheduled.
    let priority: ThreadPriority
    /// Whether the reader busy-polls, as the probe's does with `--busy-poll`.
    var busyPolling = false

    /// Sends `messages` broadcasts `interval` apart, each to every recipient, and reads them
    /// until all have arrived or `timeout` has passed after the last was due.
    func run(messages: Int, interval: Int64, timeout: Int64) async throws -> RelayDeliveryProbe.Outcome {
        let listener = try TCPSocket.listening(on: try SocketAddress(host: "127.0.0.1", port: 0))
        let address = try listener.localAddress()
        var senders: [TCPSocket] = []
        var readers: [RelayProbeConnection] = []
        for _ in 0..<recipients {
            let client = try TCPSocket(family: address.family)
            try client.setNoDelay()
            if try !client.connect(to: address) {
                guard try RelayProbeConnection.wait(client.descriptor, events: Int16(POLLOUT), timeout: 5_000_000_000),
                      client.pendingError() == 0 else { throw RelayBenchmarkError("floor: cannot connect: errno \(client.pendingError())") }
            }
            var accepted = try listener.accept()
            if accepted == nil {
                guard try RelayProbeConnection.wait(listener.descriptor, events: Int16(POLLIN), timeout: 5_000_000_000) else {
                    throw RelayBenchmarkError("floor: no connection to accept")
                }
                accepted = try listener.accept()
            }
            guard let server = accepted?.socket else { throw RelayBenchmarkError("floor: no connection to accept") }
            try server.setNoDelay()
            senders.append(server)
            readers.append(RelayProbeConnection(connected: client))
        }
        let clock = SystemClock()
        let start = clock.instant().nanoseconds + 20_000_000
        let recorder = RelayDeliveryRecorder(clock: clock)
        let (phase, sockets) = (phase, senders)
        let sender = UUID()
        async let lateness = RelayDeliveryProbe.onThread("bench-floor-send", priority) {
            var lateness: [Double] = []
            lateness.reserveCapacity(messages)
            for index in 0..<messages {
                let due = start + Int64(index) * interval
                var request = timespec(tv_sec: Int(due / 1_000_000_000), tv_nsec: Int(due % 1_000_000_000))
                while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &request, nil) == EINTR {}
                lateness.append(Double(clock.instant().nanoseconds - due))
                // The frame a relay writes each recipient, encoded once: the sends are what is measured.
                let frame = RelayFrame.delivery(sequence: UInt64(index + 1), sender: sender, reliable: true,
                                                body: recorder.body(phase: phase)).encoded()
                for socket in sockets { try RelayProbeConnection.writeAll(frame, to: socket) }
            }
            return lateness
        }
        let deadline = start + Int64(messages) * interval + timeout
        let (busyPolling, watched) = (busyPolling, readers)
        async let latencies = RelayDeliveryProbe.onThread("bench-floor-read", priority) {
            try RelayDeliveryProbe.read(watched, expected: messages * recipients, until: deadline, busyPolling: busyPolling, clock: clock)
        }
        let outcome = RelayDeliveryProbe.Outcome(latencies: try await latencies, lateness: try await lateness)
        for socket in senders { socket.shutdown() }
        return outcome
    }
}
