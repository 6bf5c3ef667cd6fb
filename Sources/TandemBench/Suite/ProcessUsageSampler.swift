#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// Samples the CPU time and peak resident memory of running processes, their children
/// included (a peer's mpv), from `/proc`, a few times a second on a thread of its own, so that
/// a process's last figures before it exits are known.
final class ProcessUsageSampler: Sendable {
    /// One process's latest figures.
    struct Usage {
        /// When sampling began, raw monotonic ns.
        var started: Int64
        /// When it was last read, raw monotonic ns.
        var lastRead: Int64
        /// User plus system CPU time at the last reading, seconds.
        var cpuSeconds: Double
        /// Peak resident memory at the last reading (VmHWM), bytes.
        var peakResidentBytes: Int

        /// CPU time over wall time, percent of one core.
        var cpuPercent: Double? {
            let wall = Double(lastRead - started) / 1e9
            return wall > 0.5 ? cpuSeconds / wall * 100 : nil
        }
    }

    private let usages = Mutex<[Int32: Usage]>([:])
    private let running = Atomic(true)
    private let finished = DispatchSemaphore(value: 0)
    private let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// Starts sampling every `interval` seconds.
    init(interval: Double = 0.2) {
        Thread.detachNewThread { [self] in
            while running.load(ordering: .relaxed) {
                sampleAll()
                Thread.sleep(forTimeInterval: interval)
            }
            finished.signal()
        }
    }

    /// Begins following process `pid`.
    func follow(_ pid: Int32) {
        let now = Self.now()
        usages.withLock { $0[pid] = Usage(started: now, lastRead: now, cpuSeconds: 0, peakResidentBytes: 0) }
        sample(pid)
    }

    /// Reads `pid` once more now (just before it is asked to exit).
    func sample(_ pid: Int32) {
        let family = [pid] + descendants(of: pid)
        guard let own = cpuSeconds(pid) else { return }
        let cpu = own + family.dropFirst().compactMap(cpuSeconds).reduce(0, +)
        let peak = family.compactMap(peakResidentBytes).reduce(0, +)
        let now = Self.now()
        usages.withLock { all in
            guard var usage = all[pid] else { return }
            usage.lastRead = now
            // A child that exits between readings leaves its time to its parent's reaped total
            // only once reaped: never let the figure go back.
            usage.cpuSeconds = max(usage.cpuSeconds, cpu)
            usage.peakResidentBytes = max(usage.peakResidentBytes, peak)
            all[pid] = usage
        }
    }

    /// The latest figures of `pid`.
    func usage(of pid: Int32) -> Usage? {
        usages.withLock { $0[pid] }
    }

    /// Stops sampling.
    func stop() {
        guard running.exchange(false, ordering: .relaxed) else { return }
        finished.wait()
    }

    private func sampleAll() {
        for pid in usages.withLock({ Array($0.keys) }) { sample(pid) }
    }

    /// The children of `pid`, and theirs, from `/proc/PID/task/TID/children`.
    private func descendants(of pid: Int32) -> [Int32] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        let children = tasks.flatMap { task in
            ((try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? "")
                .split(separator: " ").compactMap { Int32($0) }
        }
        return children + children.flatMap(descendants)
    }

    /// utime + stime + cutime + cstime from `/proc/PID/stat` (fields 14 to 17, counted after
    /// the command name, which may itself hold spaces and parentheses): its own CPU time and
    /// that of the children it has reaped.
    private func cpuSeconds(_ pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // fields[0] is the state (field 3); utime, stime, cutime and cstime are fields 14 to 17.
        guard fields.count > 14 else { return nil }
        let ticks = fields[11...14].compactMap { Double($0) }
        return ticks.count == 4 ? ticks.reduce(0, +) / ticksPerSecond : nil
    }

    /// VmHWM from `/proc/PID/status`.
    private func peakResidentBytes(_ pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
        let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        return kilobytes.map { $0 * 1024 }
    }

    private static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
