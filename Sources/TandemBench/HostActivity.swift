import Foundation
import Synchronization
import TandemClock

/// What the machine as a whole did during a run: the time the virtual machine's host took
/// from its processors (`/proc/stat`'s `steal`) and the load, sampled on the machine's
/// monotonic clock, so that a report can tell an underrun that every output had at once, in a
/// stall of the whole machine, from one output's own.
public struct HostActivity: Sendable, Codable, Equatable {
    /// One reading.
    public struct Sample: Sendable, Codable, Equatable {
        /// When (monotonic ns).
        public var at: Int64
        /// The steal time of all processors together so far, in ms.
        public var stealMilliseconds: Double
        /// The one-minute load average.
        public var load: Double

        /// A reading; see the properties.
        public init(at: Int64, stealMilliseconds: Double, load: Double) {
            (self.at, self.stealMilliseconds, self.load) = (at, stealMilliseconds, load)
        }
    }

    /// The readings, in order.
    public var samples: [Sample]

    /// The readings given.
    public init(samples: [Sample]) {
        self.samples = samples
    }

    /// The readings from `start` through `end` (monotonic ns).
    public func within(_ start: Int64, _ end: Int64) -> HostActivity {
        HostActivity(samples: samples.filter { $0.at >= start && $0.at <= end })
    }

    /// The steal time between the first and the last reading, in ms.
    public var stealMilliseconds: Double {
        guard let first = samples.first, let last = samples.last else { return 0 }
        return last.stealMilliseconds - first.stealMilliseconds
    }

    /// The largest steal time between two consecutive readings, in ms.
    public var largestStealMilliseconds: Double {
        zip(samples, samples.dropFirst()).map { $1.stealMilliseconds - $0.stealMilliseconds }.max() ?? 0
    }

    /// The load's extremes over the readings; nil without any.
    public var loadRange: ClosedRange<Double>? {
        guard let low = samples.map(\.load).min(), let high = samples.map(\.load).max() else { return nil }
        return low...high
    }

    /// The steal time from the last reading at or before `start` to the first at or after `end`,
    /// in ms (the readings' own interval around the span); nil when the readings do not cover it.
    public func stealMilliseconds(from start: Int64, to end: Int64) -> Double? {
        guard let before = samples.last(where: { $0.at <= start }), let after = samples.first(where: { $0.at >= end }) else { return nil }
        return after.stealMilliseconds - before.stealMilliseconds
    }

    /// The one-minute load at the last reading at or before `instant`.
    public func load(at instant: Int64) -> Double? {
        samples.last { $0.at <= instant }?.load
    }

    /// One moment at which outputs ran dry: underruns of several outputs within `together` of
    /// the first are one moment.
    public struct UnderrunMoment: Sendable, Codable, Equatable {
        /// The first underrun's instant (monotonic ns).
        public var at: Int64
        /// The outputs that ran dry then, by participant name, in order.
        public var outputs: [String]
        /// The longest time between the first and the last of them (ns).
        public var spread: Int64
        /// Whether every output with a log ran dry then: the whole machine, or the sound server
        /// that every output feeds, stalled; no output alone.
        public var everyOutput: Bool
        /// The host's steal time in the `lookBack` before the moment (to the readings'
        /// resolution), ms; nil when not sampled.
        public var stealMilliseconds: Double?
        /// The one-minute load then.
        public var load: Double?
    }

    /// The moments at which the outputs (`underruns`: each one's underrun instants, monotonic
    /// ns, by participant name) ran dry: underruns within `together` of a moment's first are
    /// that moment's, each with the host's steal time in the `lookBack` before it.
    public func underrunMoments(_ underruns: [String: [Int64]], together: Int64 = 5_000_000,
                                lookBack: Int64 = 250_000_000) -> [UnderrunMoment] {
        let events = underruns.flatMap { name, instants in instants.map { (at: $0, name: name) } }
            .sorted { ($0.at, $0.name) < ($1.at, $1.name) }
        var moments: [UnderrunMoment] = []
        var index = 0
        while index < events.count {
            let first = events[index].at
            var end = index
            while end < events.count && events[end].at - first <= together { end += 1 }
            let members = events[index..<end]
            let names = Array(Set(members.map(\.name))).sorted()
            moments.append(UnderrunMoment(at: first, outputs: names, spread: (members.last?.at ?? first) - first,
                                          everyOutput: underruns.count > 1 && names.count == underruns.count,
                                          stealMilliseconds: stealMilliseconds(from: first - lookBack, to: first),
                                          load: load(at: first)))
            index = end
        }
        return moments
    }
}

/// Reads `/proc/stat` and `/proc/loadavg` every `interval` on a thread of its own, until
/// stopped (or for at most `limit` readings: a run's bound).
final class HostActivityRecorder: Sendable {
    /// What the reading thread and the caller share.
    private final class Shared: Sendable {
        let samples = Mutex<[HostActivity.Sample]>([])
        let stopped = Atomic(false)
        let done = Atomic(false)
    }

    private let shared = Shared()

    /// Starts reading at once.
    init(interval: TimeInterval = 0.1, limit: Int = 40_000) {
        let shared = shared
        let thread = Thread {
            var count = 0
            while !shared.stopped.load(ordering: .acquiring) && count < limit {
                if let sample = HostActivityRecorder.read() { shared.samples.withLock { $0.append(sample) } }
                count += 1
                Thread.sleep(forTimeInterval: interval)
            }
            shared.done.store(true, ordering: .releasing)
        }
        thread.name = "bench-host-activity"
        thread.start()
    }

    /// Stops reading (within one interval) and returns what was read.
    func stop() -> HostActivity {
        shared.stopped.store(true, ordering: .releasing)
        for _ in 0..<100 where !shared.done.load(ordering: .acquiring) { Thread.sleep(forTimeInterval: 0.01) }
        if let sample = HostActivityRecorder.read() { shared.samples.withLock { $0.append(sample) } }
        return HostActivity(samples: shared.samples.withLock { $0 })
    }

    /// One reading now; nil where `/proc` is not readable.
    static func read() -> HostActivity.Sample? {
        let at = HostInstant.now().nanoseconds
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let loadavg = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8),
              let steal = stealTicks(stat: stat), let load = loadavg.split(separator: " ").first.flatMap({ Double($0) }) else { return nil }
        let hertz = Double(sysconf(Int32(_SC_CLK_TCK)))
        return HostActivity.Sample(at: at, stealMilliseconds: Double(steal) / (hertz > 0 ? hertz : 100) * 1000, load: load)
    }

    /// The `steal` field of `/proc/stat`'s first line (all processors), in clock ticks.
    static func stealTicks(stat: String) -> Int64? {
        guard let line = stat.split(separator: "\n").first, line.hasPrefix("cpu ") else { return nil }
        let fields = line.split(separator: " ").dropFirst()
        // user nice system idle iowait irq softirq steal …
        guard fields.count >= 8 else { return nil }
        return Int64(fields[fields.startIndex + 7])
    }
}
