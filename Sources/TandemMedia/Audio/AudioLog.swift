#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import TandemClock
import TandemMediaTypes

/// The sound output's log, one JSON line per event, for `tandem bench audio` (which reads
/// exactly these lines); instants are local CLOCK_MONOTONIC nanoseconds, media positions are
/// frames at 48 kHz:
///
/// - one per write to the output that plays media (writes of silence, while paused, are not
///   logged): `{"kind":"write","item":"<identifier>","media":<media position of the write's
///   first frame that plays media, a Double>,"intended":<the instant the timeline says that
///   frame must reach the output>,"expected":<the instant the output's timing model says it
///   will>,"frames":<frames from that one to the write's end>,"rate":<the timeline's
///   rate>,"correction":<the resampling correction, in ppm>,"lead":<nanoseconds from the
///   write to the instant its first frame reaches the output: how much sound the output still
///   had>}`;
/// - `{"kind":"snap","at":<instant>,"error":<nanoseconds; positive: the output was ahead>}`
///   when the output jumps to the timeline's position;
/// - `{"kind":"underrun","at":<instant>}` when the sound server ran out of written sound;
/// - `{"kind":"busy","at":<instant>}` when a write played from the schedule read for an earlier
///   one, the player's lock being held by another thread (`AudioPlayout`);
/// - `{"kind":"missing","at":<instant>,"frames":<count>}` when a write wanted media frames that
///   were not decoded yet (played, or searched by the stretch, as silence);
/// - `{"kind":"rewrite","at":<instant>,"from":<the instant its first frame reaches the
///   output>,"frames":<count>}` when the output writes again, under a changed timeline, frames
///   it had written but not played (`PulseAudioOutput`);
/// - `{"kind":"latency","at":<instant>,"latency":<nanoseconds from a write to its frame
///   reaching the output>}` when the output's latency first becomes known and whenever it
///   moves by more than 0.5 ms.
///
/// - `{"kind":"priority","at":<instant>,"realtime":<true or false>,"errno":<0, or why not>}`
///   once, at the first write: whether the output's thread got its real-time priority
///   (`PulseAudioOutput.realtimePriority`, SCHED_FIFO) or plays on at an ordinary one;
///
/// - `{"kind":"dropped","count":<records>}` when records were left out, the ring between the
///   output's thread and the log's being full (`AudioLogRing`).
///
/// The output's thread only puts a record of a few numbers into a ring sized at start
/// (`AudioLogRing`: no allocation, no lock the log's own thread holds, never a wait); the log's
/// own thread (`tandem-audiolog`, of ordinary priority) takes them out every `drainInterval`,
/// makes their lines and writes them through a buffer in blocks of 16 KiB. `flush()`, `close()`
/// and deinit write everything put in so far.
public final class AudioLog: Sendable {
    /// How often the log's thread takes the records out.
    static let drainInterval = TimeSpan.milliseconds(20)
    /// Records the ring holds: seconds of an output's writes and events.
    static let capacity = 4_096

    /// The file being written.
    public var path: String { drain.file.path }
    private let drain: Drain
    /// The output's side of the ring: one writer at a time.
    private let producer = Mutex(())
    private let thread: WorkerThread

    /// Creates (or truncates) the log file at `path`, and starts the log's thread.
    public init(path: String) throws(MediaError) {
        let drain = Drain(file: try BufferedLineFile(path: path, what: "audio log", threshold: 16 * 1024),
                          ring: AudioLogRing(capacity: Self.capacity))
        self.drain = drain
        let interval = UInt32(Self.drainInterval.nanoseconds / 1_000)
        thread = WorkerThread(name: "tandem-audiolog") {
            while !drain.stopped.load(ordering: .acquiring) {
                drain.drain()
                usleep(interval)
            }
        }
    }

    deinit {
        close()
    }

    /// Logs a write whose first media frame is `media`, of `item` (nil when its sound is no longer stored).
    func write(item: String?, media: Double, intended: LocalInstant, expected: LocalInstant, frames: Int, rate: Double,
               correction: Double, lead: TimeSpan) {
        put(AudioLogRing.Record(kind: .write, at: 0, intended: intended.nanoseconds, expected: expected.nanoseconds,
                                media: media, frames: frames, rate: rate, correction: correction, lead: lead.nanoseconds, item: item))
    }

    /// Logs a snap at `at` that took away `error`.
    func snap(at: LocalInstant, error: TimeSpan) {
        put(AudioLogRing.Record(kind: .snap, at: at.nanoseconds, value: error.nanoseconds))
    }

    /// Logs a write at `at` that played from the schedule read before, the player's lock being held.
    func busy(at: LocalInstant) {
        put(AudioLogRing.Record(kind: .busy, at: at.nanoseconds))
    }

    /// Logs an underrun noticed at `at`.
    func underrun(at: LocalInstant) {
        put(AudioLogRing.Record(kind: .underrun, at: at.nanoseconds))
    }

    /// Logs a write at `at` that wanted `frames` media frames not decoded yet.
    func missing(at: LocalInstant, frames: Int) {
        put(AudioLogRing.Record(kind: .missing, at: at.nanoseconds, value: Int64(frames)))
    }

    /// Logs a rewrite at `at` of `frames` frames, the first reaching the output at `from`.
    func rewrite(at: LocalInstant, from: LocalInstant, frames: Int) {
        var record = AudioLogRing.Record(kind: .rewrite, at: at.nanoseconds, value: from.nanoseconds)
        record.frames = frames
        put(record)
    }

    /// Logs the output's latency at `at`.
    func latency(at: LocalInstant, latency: TimeSpan) {
        put(AudioLogRing.Record(kind: .latency, at: at.nanoseconds, value: latency.nanoseconds))
    }

    /// Logs whether the output's thread got its real-time priority at `at` (`errno` 0), or why not.
    func priority(at: LocalInstant, realtime: Bool, errno: Int32) {
        put(AudioLogRing.Record(kind: .priority, at: at.nanoseconds, value: realtime ? 0 : Int64(max(errno, 1))))
    }

    /// Writes everything logged so far.
    public func flush() {
        drain.drain()
        drain.file.flush()
    }

    /// Writes everything logged so far and closes the file; later events are not logged.
    public func close() {
        drain.stopped.store(true, ordering: .releasing)
        thread.join()
        drain.drain()
        drain.file.close()
    }

    private func put(_ record: AudioLogRing.Record) {
        producer.withLock { _ in _ = drain.ring.put(record) }
    }

    /// The log's thread's part: the ring's reader and the file.
    private final class Drain: Sendable {
        let file: BufferedLineFile
        let ring: AudioLogRing
        let stopped = Atomic(false)
        /// The ring's reading side: one reader at a time (the log's thread, or `flush`).
        private let reader = Mutex(())

        init(file: BufferedLineFile, ring: AudioLogRing) {
            self.file = file
            self.ring = ring
        }

        /// Takes every record out of the ring and buffers its line.
        func drain() {
            reader.withLock { _ in
                ring.take { file.append(AudioLog.line($0)) }
                let dropped = ring.takeDropped()
                if dropped > 0 { file.append("{\"kind\":\"dropped\",\"count\":\(dropped)}\n") }
            }
        }
    }

    /// A record's line.
    static func line(_ record: AudioLogRing.Record) -> String {
        switch record.kind {
        case .write:
            let ppm = (record.correction * 1e6 * 1000).rounded() / 1000
            return "{\"kind\":\"write\",\"item\":\(BufferedLineFile.jsonString(record.item ?? "")),\"media\":\(number(record.media)),"
                + "\"intended\":\(record.intended),\"expected\":\(record.expected),\"frames\":\(record.frames),"
                + "\"rate\":\(number(record.rate)),\"correction\":\(number(ppm)),\"lead\":\(record.lead)}\n"
        case .snap: return "{\"kind\":\"snap\",\"at\":\(record.at),\"error\":\(record.value)}\n"
        case .busy: return "{\"kind\":\"busy\",\"at\":\(record.at)}\n"
        case .underrun: return "{\"kind\":\"underrun\",\"at\":\(record.at)}\n"
        case .missing: return "{\"kind\":\"missing\",\"at\":\(record.at),\"frames\":\(record.value)}\n"
        case .latency: return "{\"kind\":\"latency\",\"at\":\(record.at),\"latency\":\(record.value)}\n"
        case .rewrite:
            return "{\"kind\":\"rewrite\",\"at\":\(record.at),\"from\":\(record.value),\"frames\":\(record.frames)}\n"
        case .priority:
            return "{\"kind\":\"priority\",\"at\":\(record.at),\"realtime\":\(record.value == 0),\"errno\":\(record.value)}\n"
        }
    }

    /// A Double as JSON (finite values only reach here).
    private static func number(_ value: Double) -> String {
        value.isFinite ? "\(value)" : "0"
    }
}
