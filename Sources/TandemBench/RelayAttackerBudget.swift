import Foundation

/// A CPU cgroup (cgroup v1's `cpu` controller) that caps what the attackers of
/// `tandem bench relay --adversarial` may take: a share of one processor per period, so that
/// the honest figures measure what the relay does under attack, not how much of the machine's
/// two processors the attackers took from it. Made for one run and removed after it.
struct RelayAttackerBudget {
    /// Where the `cpu` controller is mounted.
    static let controller = "/sys/fs/cgroup/cpu"
    /// The scheduling period of the quota, in microseconds.
    static let period = 100_000

    /// The group's directory.
    let path: String
    /// The share of one processor the group may use in each period.
    let share: Double

    /// Creates the group `name` under the controller with its quota set: `share` of one
    /// processor. Throws with the reason when cgroups cannot be made here (no controller, not
    /// permitted).
    init(name: String, share: Double, controller: String = RelayAttackerBudget.controller) throws {
        guard share > 0, share <= 64 else { throw RelayBenchmarkError("a CPU share of \(share) processors is not a budget") }
        guard FileManager.default.fileExists(atPath: controller + "/cpu.cfs_quota_us") else {
            throw RelayBenchmarkError("no cgroup v1 cpu controller at \(controller)")
        }
        path = controller + "/" + name
        self.share = share
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        } catch {
            throw RelayBenchmarkError("cannot create the cgroup \(path): \(error.localizedDescription)")
        }
        do {
            try Self.write(String(Self.period), to: path + "/cpu.cfs_period_us")
            try Self.write(String(Int((Double(Self.period) * share).rounded())), to: path + "/cpu.cfs_quota_us")
        } catch {
            _ = rmdir(path)
            throw error
        }
    }

    /// Moves every thread of process `pid` into the group (its `cgroup.procs`); threads it
    /// starts later are born in it.
    func admit(process pid: Int32) throws { try Self.write(String(pid), to: path + "/cgroup.procs") }

    /// Moves one thread (its kernel id) into the group (its `tasks`).
    func admit(thread: Int32) throws { try Self.write(String(thread), to: path + "/tasks") }

    /// The threads in the group now.
    var threads: [Int32] {
        ((try? String(contentsOfFile: path + "/tasks", encoding: .utf8)) ?? "").split(separator: "\n").compactMap { Int32($0) }
    }

    /// How many periods the group was throttled in, and for how long in all (`cpu.stat`).
    var throttling: (periods: Int, throttled: Int, nanoseconds: Int) {
        let text = (try? String(contentsOfFile: path + "/cpu.stat", encoding: .utf8)) ?? ""
        var fields: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Int(parts[1]) { fields[String(parts[0])] = value }
        }
        return (fields["nr_periods"] ?? 0, fields["nr_throttled"] ?? 0, fields["throttled_time"] ?? 0)
    }

    /// Moves whatever still runs in the group back to the root group, and removes the group.
    /// Throws with the reason when it stays.
    func remove() throws {
        for thread in threads { try? Self.write(String(thread), to: (path as NSString).deletingLastPathComponent + "/tasks") }
        guard rmdir(path) == 0 || errno == ENOENT else {
            throw RelayBenchmarkError("cannot remove the cgroup \(path): \(String(cString: strerror(errno)))")
        }
    }

    private static func write(_ text: String, to file: String) throws {
        guard let handle = FileHandle(forWritingAtPath: file) else { throw RelayBenchmarkError("cannot open \(file) for writing") }
        defer { try? handle.close() }
        do {
            try handle.write(contentsOf: Data(text.utf8))
        } catch {
            throw RelayBenchmarkError("cannot write \(text) to \(file): \(error.localizedDescription)")
        }
    }
}

extension RelayProcessMemory {
    /// The CPU time all threads of the process have run so far, to the nanosecond (the sum of
    /// `/proc/PID/task/*/schedstat`): threads that ended are not counted, so read it over
    /// stretches in which the process keeps its threads (the relay's loop and writer).
    var threadCPUSeconds: Double {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return 0 }
        var nanoseconds = 0
        for task in tasks {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8),
                  let first = text.split(separator: " ").first, let value = Int(first) else { continue }
            nanoseconds += value
        }
        return Double(nanoseconds) / 1e9
    }
}
