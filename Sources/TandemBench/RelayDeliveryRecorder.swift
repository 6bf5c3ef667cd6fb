import Synchronization
import TandemClock
import TandemNet

/// Stamps benchmark messages and records, on receipt, how long each took, by phase.
///
/// A body is the phase byte, then the send time in nanoseconds (big-endian), then padding.
final class RelayDeliveryRecorder: Sendable {
    let clock: any LocalClock
    /// One lock for what a receipt records: every participant's events are recorded from
    /// tasks of their own, and a receipt should cost one lock, not three.
    private let state = Mutex(State())
    private struct State {
        var latencies: [UInt8: [Double]] = [:]
        var lastDelivery: Int64 = 0
    }

    init(clock: any LocalClock) { self.clock = clock }

    /// A body for `phase`, stamped now, `size` bytes long.
    func body(phase: UInt8, size: Int = 64) -> [UInt8] {
        var bytes: [UInt8] = [phase]
        let now = UInt64(bitPattern: clock.instant().nanoseconds)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: now >> UInt64(shift))) }
        return bytes + [UInt8](repeating: 0, count: max(size - bytes.count, 0))
    }

    /// Records every benchmark message (or ordered broadcast) `link` receives until its events end.
    func follow(_ link: any RelayLink) {
        Task.detached { [self] in
            for await event in link.events {
                // A message, or an ordered broadcast (`tandem bench cluster`'s ordered delivery).
                let received: [UInt8]
                switch event {
                case let .message(_, body, _): received = body
                case let .ordered(delivery): received = delivery.body
                default: continue
                }
                let body = received
                guard body.count >= 9 else { continue }
                let now = clock.instant().nanoseconds
                let sent = body[1...8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                let latency = Double(now - Int64(bitPattern: sent))
                state.withLock { state in
                    state.latencies[body[0], default: []].append(latency)
                    state.lastDelivery = max(state.lastDelivery, now)
                }
            }
        }
    }

    func count(_ phase: UInt8) -> Int { state.withLock { $0.latencies[phase]?.count ?? 0 } }
    func latencies(_ phase: UInt8) -> [Double] { state.withLock { $0.latencies[phase] ?? [] } }
    var lastDeliveryTime: Int64 { state.withLock { $0.lastDelivery } }

    /// Waits until `phase` has `expected` deliveries or `timeout` passes; returns the count.
    func wait(for phase: UInt8, expected: Int, timeout: Duration) async -> Int {
        let deadline = ContinuousClock.now + timeout
        while count(phase) < expected, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return count(phase)
    }
}
