#if canImport(Glibc)
import Glibc
#endif
import CTandemSystem
import TandemClock

/// The kernel's software timestamps on a TCP socket (`SO_TIMESTAMPING`): when each read's
/// last segment arrived, and when each write entered the packet scheduler and left through the
/// device, read from the socket's error queue. What the relay's measuring mode and the bare
/// forwarder beside it are timed with, the same way.
///
/// Not thread-safe: one reader of error queues per instance (it holds the batch it reads into).
public final class SocketTimestamping {
    private var batch = [tandem_transmit_stamp](repeating: tandem_transmit_stamp(), count: Int(TANDEM_STAMP_BATCH))

    /// A reader of error queues.
    public init() {}

    /// Turns stamping on for `descriptor`: software receive stamps, and transmit stamps at the
    /// scheduler and the device keyed by byte (`OPT_ID`), without the payload looped back. Call
    /// it before anything is written, so that keys count from the stream's first byte.
    public static func enable(_ descriptor: Int32) throws(SystemCallError) {
        let result = tandem_enable_timestamping(descriptor)
        if result < 0 { throw SystemCallError(call: "setsockopt(SO_TIMESTAMPING)", errno: -result) }
    }

    /// Reads what waits on `descriptor` into `buffer`, as `TCPSocket.read(into:)` does (nil when
    /// nothing waits, 0 at end of stream), with the instant its last segment arrived.
    public static func receive(_ descriptor: Int32, into buffer: inout [UInt8]) throws(SystemCallError) -> (count: Int, arrival: KernelStamp?)? {
        var stamp: Int64 = 0
        let result = buffer.withUnsafeMutableBytes { tandem_receive_stamped(descriptor, $0.baseAddress, $0.count, &stamp) }
        if result < 0 {
            if result == -Int(EAGAIN) || result == -Int(EWOULDBLOCK) { return nil }
            throw SystemCallError(call: "recvmsg", errno: Int32(-result))
        }
        return (result, stamp > 0 ? KernelStamp(nanoseconds: stamp) : nil)
    }

    /// Reads every transmit stamp waiting in `descriptor`'s error queue into `ledger` as
    /// `stream`'s; returns how many. Never blocks.
    @discardableResult
    public func drain(_ descriptor: Int32, stream: Int, into ledger: inout RelayTimestampLedger) throws(SystemCallError) -> Int {
        var total = 0
        while true {
            let count = batch.withUnsafeMutableBufferPointer {
                tandem_read_transmit_stamps(descriptor, $0.baseAddress, Int32($0.count))
            }
            if count < 0 { throw SystemCallError(call: "recvmmsg(MSG_ERRQUEUE)", errno: -count) }
            for stamp in batch.prefix(Int(count)) {
                let stage: RelayTimestampLedger.Stage? = stamp.stage == tandem_stamp_scheduled ? .scheduled
                    : stamp.stage == tandem_stamp_sent ? .sent : nil
                if let stage { ledger.stamp(stream: stream, key: stamp.key, stage: stage, at: KernelStamp(nanoseconds: stamp.nanoseconds)) }
            }
            total += Int(count)
            if count < TANDEM_STAMP_BATCH { return total }
        }
    }

    /// The calling thread's CPU time so far (`CLOCK_THREAD_CPUTIME_ID`).
    public static func threadCPUTime() -> TimeSpan {
        TimeSpan(nanoseconds: tandem_thread_cpu_nanoseconds())
    }

    /// The calling thread's kernel id (as `/proc/self/task` names it).
    public static func currentThreadID() -> Int32 { tandem_thread_id() }

    /// The CPU time thread `thread` of this process has run so far, from
    /// `/proc/self/task/<thread>/schedstat` (nanoseconds, not the 10 ms ticks of `stat`); nil
    /// when it cannot be read (the thread ended).
    public static func cpuTime(ofThread thread: Int32) -> TimeSpan? {
        guard let file = fopen("/proc/self/task/\(thread)/schedstat", "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 128)
        guard fgets(&line, Int32(line.count), file) != nil else { return nil }
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let first = text.split(separator: " ").first, let nanoseconds = Int64(first) else { return nil }
        return TimeSpan(nanoseconds: nanoseconds)
    }

    /// Pins thread (or process) `task` to processor `cpu` (sched_setaffinity(2)).
    public static func pin(task: Int32, toCPU cpu: Int) throws(SystemCallError) {
        let result = tandem_pin_task_to_cpu(task, Int32(cpu))
        if result < 0 { throw SystemCallError(call: "sched_setaffinity", errno: -result) }
    }
}
