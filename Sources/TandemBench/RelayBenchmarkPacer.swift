#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TandemClock
import TandemNet

/// Sends reliable messages on an even schedule from a thread of its own: message `i` at
/// `start + i / perSecond`, from the links in turn, each stamped as it leaves. A thread sleeping
/// to absolute deadlines keeps the offer even to a fraction of a millisecond, which tasks on the
/// cooperative pool cannot.
struct RelayBenchmarkPacer: Sendable {
    let links: [any RelayLink]
    let messages: Int
    let perSecond: Int
    let recorder: RelayDeliveryRecorder
    let phase: UInt8
    /// Whether each message is proposed for the relay to order (`sendOrdered`) rather than sent
    /// reliably to everyone.
    var ordered = false

    /// Sends every message; returns how late each left after its instant (ns). Bounded: the
    /// schedule lasts `messages / perSecond` seconds, and a send never blocks.
    func run() async -> [Double] {
        await withCheckedContinuation { (continuation: CheckedContinuation<[Double], Never>) in
            let thread = Thread {
                continuation.resume(returning: send())
            }
            thread.name = "bench-pacer"
            thread.start()
        }
    }

    private func send() -> [Double] {
        guard !links.isEmpty, perSecond > 0 else { return [] }
        let clock = SystemClock()
        let interval = 1e9 / Double(perSecond)
        let start = clock.instant().nanoseconds + 10_000_000
        var lateness: [Double] = []
        lateness.reserveCapacity(messages)
        for index in 0..<messages {
            let due = start + Int64((Double(index) * interval).rounded())
            var request = timespec(tv_sec: Int(due / 1_000_000_000), tv_nsec: Int(due % 1_000_000_000))
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &request, nil) == EINTR {}
            lateness.append(Double(clock.instant().nanoseconds - due))
            let link = links[index % links.count]
            if ordered {
                _ = try? link.sendOrdered(recorder.body(phase: phase))
            } else {
                _ = try? link.send(recorder.body(phase: phase), to: .everyone, reliable: true)
            }
        }
        return lateness
    }
}
