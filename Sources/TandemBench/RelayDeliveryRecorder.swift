import Synchronization
import TandemClock
import TandemNet

/// Stamps benchmark messages and records, on receipt, how long each took, by phase.
///
/// A body is the phase byte, then the send time in nanoseconds (big-endian), then padding.
final class RelayDeliveryRecorder: Sendable {
    let clock: any LocalClock
    private let latencies = Mutex<[UInt8: [Double]]>([:])
    private let counts = Mutex<[UInt8: Int]>([:])
    private let lastDelivery = Mutex<Int64>(0)

    init(clock: any LocalClock) { self.clock = clock }

    /// A body for `phase`, stamped now, `size` bytes long.
    func body(phase: UInt8, size: Int = 64) -> [UInt8] {
        var bytes: [UInt8] = [phase]
        let now = UInt64(bitPattern: clock.now())
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: now >> UInt64(shift))) }
        return bytes + [UInt8](repeating: 0, count: max(size - bytes.count, 0))
    }

    /// Records every benchmark message `link` receives until its events end.
    func follow(_ link: any RelayLink) {
        Task.detached { [self] in
            for await event in link.events {
                guard case let .message(_, body, _) = event, body.count >= 9 else { continue }
                let now = clock.now()
                let sent = body[1...8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                let latency = Double(now - Int64(bitPattern: sent))
                latencies.withLock { $0[body[0], default: []].append(latency) }
                counts.withLock { $0[body[0], default: 0] += 1 }
                lastDelivery.withLock { $0 = max($0, now) }
            }
        }
    }

    func count(_ phase: UInt8) -> Int { counts.withLock { $0[phase] ?? 0 } }
    func latencies(_ phase: UInt8) -> [Double] { latencies.withLock { $0[phase] ?? [] } }
    var lastDeliveryTime: Int64 { lastDelivery.withLock { $0 } }

    /// Waits until `phase` has `expected` deliveries or `timeout` passes; returns the count.
    func wait(for phase: UInt8, expected: Int, timeout: Duration) async -> Int {
        let deadline = ContinuousClock.now + timeout
        while count(phase) < expected, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return count(phase)
    }
}
