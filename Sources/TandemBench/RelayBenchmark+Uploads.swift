#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TandemClock
import TandemNet

/// One honest upload's cost to the relay process: its CPU seconds (user and system, from
/// `/proc/PID/stat`) beside the time this machine takes to copy that many bytes once.
public struct RelayUploadCost: Sendable, Codable {
    /// The attachment's size in bytes.
    public var bytes: Int
    /// The relay's CPU seconds from the upload's start to its acknowledgement.
    public var relayCPUSeconds: Double
    /// Wall-clock seconds from the upload's start to its acknowledgement.
    public var seconds: Double
    /// Seconds to copy `bytes` once in this process (the median of five copies).
    public var copySeconds: Double
    /// Why the relay refused the upload, nil when it stored it (a relay still full after an
    /// attack may refuse an honest upload: a result, not a failure of the benchmark).
    public var refused: String? = nil
}

extension RelayAdversarialBenchmark {
    /// Uploads one attachment of each size through `link`, one after another, measuring the relay.
    func uploadCosts(_ sizes: [Int], link: any RelayLink, memory: RelayProcessMemory) async -> [RelayUploadCost] {
        var costs: [RelayUploadCost] = []
        let clock = SystemClock()
        for size in sizes {
            let data = [UInt8](repeating: 0x3C, count: size)
            let cpu = memory.cpuSeconds
            let start = clock.instant().nanoseconds
            var refused: String?
            do {
                try await link.addAttachment(id: UUID(), metadata: [], data: data)
            } catch {
                refused = "\(error)"
            }
            let seconds = Double(clock.instant().nanoseconds - start) / 1e9
            costs.append(RelayUploadCost(bytes: size, relayCPUSeconds: memory.cpuSeconds - cpu, seconds: seconds,
                                         copySeconds: Self.copySeconds(data), refused: refused))
            if refused != nil { break }
        }
        return costs
    }

    /// The median time of five copies of `data` into fresh memory.
    private static func copySeconds(_ data: [UInt8]) -> Double {
        guard !data.isEmpty else { return 0 }
        let clock = SystemClock()
        var times: [Double] = []
        let destination = UnsafeMutableRawPointer.allocate(byteCount: data.count, alignment: 64)
        defer { destination.deallocate() }
        // Touch every page first, so that the copies measure copying, not page faults.
        memset(destination, 0, data.count)
        for _ in 0..<5 {
            let start = clock.instant().nanoseconds
            data.withUnsafeBytes { source in _ = memcpy(destination, source.baseAddress!, data.count) }
            times.append(Double(clock.instant().nanoseconds - start) / 1e9)
        }
        return times.sorted()[2]
    }
}

extension RelayProcessMemory {
    /// The process's CPU seconds so far, user and system (`/proc/PID/stat`, fields 14 and 15).
    var cpuSeconds: Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return 0 }
        // After the command name: state is field 3, so utime (14) and stime (15) are the 12th
        // and 13th fields after it.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
