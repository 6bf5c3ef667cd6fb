import Foundation
import TandemClock
import TandemNet

/// The relay's measuring mode in a process of its own (`tandem serve --measure-kernel`): the
/// relay stamps every connection by the kernel (`RelayServer.measureKernelTimestamps()`), and each
/// `stamps` line on its standard input is answered with one line on its standard output: what
/// it saw since the last, and its loop thread's CPU time so far. A benchmark that runs the relay
/// as its own process (`tandem bench relay --adversarial`) asks at a window's start, which also
/// empties the ledger, and at its end, and takes the difference.
public enum RelayServeStamps {
    /// The line the relay's standard input takes.
    public static let command = "stamps"
    /// How the answering line starts; JSON of a `Reading` follows.
    public static let prefix = "stamps "

    /// One answer: the figures of what the relay forwarded since the last one, and the readings
    /// a window's CPU time is the difference of.
    public struct Reading: Sendable, Codable {
        /// Arrival to send of every record forwarded since the last reading, with no CPU time
        /// and no client figures.
        public var cost: RelayBenchmarkReport.KernelCost
        /// The loop thread's CPU seconds since the relay started, reading error queues included;
        /// nil where it could not be read.
        public var loopCPUSeconds: Double?
        /// The loop thread's CPU seconds spent reading error queues since measuring began.
        public var drainSeconds: Double
        /// Connections that could not be stamped, and error queues that could not be read.
        public var failures: Int
    }

    /// The answer to one `stamps` line of `server`, whose loop runs on kernel thread `thread`:
    /// the prefix and the reading's JSON; nil when the relay is not measuring or its loop did not
    /// answer.
    public static func answer(server: RelayServer, thread: Int32?) -> String? {
        guard let taken = server.takeKernelTimestamps() else { return nil }
        let cost = RelayBenchmarkReport.KernelCost(ledger: taken.ledger, cpu: nil, drain: nil, frames: taken.framesQueued,
                                                   delivered: 0, clients: [])
        let reading = Reading(cost: cost, loopCPUSeconds: thread.flatMap { SocketTimestamping.cpuTime(ofThread: $0) }?.seconds,
                              drainSeconds: taken.drainTime.seconds, failures: taken.failures)
        guard let data = try? JSONEncoder().encode(reading) else { return nil }
        return prefix + String(decoding: data, as: UTF8.self)
    }

    /// The reading an answering line holds; nil for any other line.
    public static func reading(_ line: String) -> Reading? {
        guard line.hasPrefix(prefix) else { return nil }
        return try? JSONDecoder().decode(Reading.self, from: Data(line.dropFirst(prefix.count).utf8))
    }

    /// The window between `start` and `end`: `end`'s figures, with the loop thread's CPU time over
    /// the window less what reading error queues took, and the recipients' `delivered` count.
    public static func window(from start: Reading, to end: Reading, delivered: Int) -> RelayBenchmarkReport.KernelCost {
        var cost = end.cost
        let drain = end.drainSeconds - start.drainSeconds
        if let before = start.loopCPUSeconds, let after = end.loopCPUSeconds {
            cost.cpuSeconds = after - before - drain
        }
        cost.drainSeconds = drain
        cost.delivered = delivered
        return cost
    }
}
