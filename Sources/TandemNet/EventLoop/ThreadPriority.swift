#if canImport(Glibc)
import Glibc
#endif

/// How a latency-sensitive thread (the relay's loop) is scheduled against the machine's other
/// work. On a machine busy with other processes, a thread at the default priority waits behind
/// them for whole time slices (milliseconds) each time it wakes; a relay that must deliver
/// within a millisecond or two on such a machine runs its loop higher.
///
/// `high` lowers the thread's nice value to -10 (about ten times the CPU share of a default
/// thread when both want it, and prompt wake-ups); `realtime` gives it the round-robin real-time
/// policy at priority 10, ahead of every ordinary thread (the kernel's real-time throttling
/// still leaves the others 5 % of each second). Both need CAP_SYS_NICE (or root), or an
/// `RLIMIT_NICE`/`RLIMIT_RTPRIO` that allows it; without it they fail with EPERM.
public enum ThreadPriority: String, Sendable, CaseIterable {
    /// The default: what the thread inherited.
    case normal
    /// Nice -10.
    case high
    /// SCHED_RR at priority 10.
    case realtime

    /// Applies to the calling thread (only: other threads of the process keep theirs).
    public func applyToCurrentThread() throws(SystemCallError) {
        switch self {
        case .normal:
            return
        case .high:
            // On Linux the nice value is a thread's, and PRIO_PROCESS with 0 names the calling
            // thread (setpriority(2), NOTES).
            guard setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, -10) == 0 else {
                throw SystemCallError(call: "setpriority", errno: errno)
            }
        case .realtime:
            var parameters = sched_param(sched_priority: 10)
            let result = pthread_setschedparam(pthread_self(), Int32(SCHED_RR), &parameters)
            guard result == 0 else { throw SystemCallError(call: "pthread_setschedparam", errno: result) }
        }
    }
}
