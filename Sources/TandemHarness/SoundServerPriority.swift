#if canImport(Glibc)
import Glibc
#endif

/// The real-time priority the tests' and benchmarks' sound server (`PulseAudioServer`) gives
/// its main thread. PulseAudio moves every client's sound through that thread (the native
/// protocol's requests for more and the data that answers them) and only renices it, while its
/// sinks' threads run at SCHED_RR 5; starved on a busy machine, it runs every client dry at once.
public enum SoundServerPriority {
    /// The main thread's real-time (SCHED_RR) priority: the server's own default for its sinks'
    /// threads (daemon.conf's `realtime-priority`), above its clients' output threads, which the
    /// built-in player runs at SCHED_FIFO 4.
    public static let mainThreadPriority: Int32 = 5

    /// The real-time priority a process of `effectiveUser` whose `RLIMIT_RTPRIO` is
    /// `realtimeLimit` gives the server's main thread: `mainThreadPriority` when it may set it
    /// (root, or a limit that high), else nil (the thread keeps the server's own scheduling).
    public static func mainThread(effectiveUser: uid_t, realtimeLimit: rlim_t) -> Int32? {
        effectiveUser == 0 || realtimeLimit >= rlim_t(mainThreadPriority) ? mainThreadPriority : nil
    }
}
