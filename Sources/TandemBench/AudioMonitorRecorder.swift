#if canImport(Glibc)
import Glibc
#endif
import CPulse
import Foundation
import Synchronization
import TandemClock

/// A recording of a PulseAudio source (the audio bench's null sink's monitor) through libpulse,
/// placed on the machine's monotonic clock by the sound server's own timing of it: raw signed
/// 16-bit little-endian frames at 48 kHz into a file, and, some fifty times a second, a timing
/// report saying at which instant the sink plays one recorded frame.
///
/// A report (`pa_stream_get_timing_info`) holds the stream's write index (every frame the server
/// has put into the recording's queue), the sink's latency (a null sink renders that far ahead of
/// its timer; the monitor passes each frame on as it is rendered) and the source's latency (what
/// is on its way from the sink's thread to the queue), stamped when the server took them. So the
/// last frame in the queue plays at the stamp plus the sink's latency less the source's, by the
/// sink's own clock, whatever the recording's transport, its file writes or the machine's load
/// do to when the frames reach the file. The frames a timing report names are the file's frames:
/// a hole in the stream is written as silence.
///
/// Confinement (why `@unchecked Sendable`): the libpulse handles and the mutable state (the file,
/// `closed`) are touched only with the threaded main loop's lock held:
/// on its own thread, in its callbacks (which assert it), or by the caller's thread between
/// `pa_threaded_mainloop_lock` and `unlock`.
public final class AudioMonitorRecorder: @unchecked Sendable {
    /// One timing report: recorded frame `frame` plays at `instant` (monotonic ns).
    public struct Timing: Sendable, Equatable {
        /// The frame's index in the recording.
        public var frame: Int64
        /// When the sink plays it, on the machine's monotonic clock (ns).
        public var instant: Int64

        /// Frame `frame` at `instant`.
        public init(frame: Int64, instant: Int64) {
            (self.frame, self.instant) = (frame, instant)
        }
    }

    /// The raw file.
    public let path: String
    /// Channels per frame.
    public let channels: Int
    private let bytesPerFrame: Int
    private let mainloop: OpaquePointer
    // The main loop's (under its lock):
    private var context: OpaquePointer?
    private var stream: OpaquePointer?
    private var file: UnsafeMutablePointer<FILE>?
    private var lastRequest: Int64 = 0
    private var closed = false
    private let released = Mutex(false)
    /// What was recorded: bytes and timing reports, readable after `stop()` too.
    private let recorded = Mutex<(bytes: Int64, reports: [Timing])>((0, []))

    /// How often the recorder asks the server for a timing report (ns).
    static let timingInterval: Int64 = 20_000_000

    /// Records `source` of the server at `server` (`unix:PATH`) in `channels` channels named by
    /// `channelMap` (named explicitly: else the server remixes channels the recording does not
    /// name, and aux channels are lost) into `path`, from now until `stop()`; waits at most
    /// `timeout` seconds for the server.
    public init(server: String, source: String, channels: Int, channelMap: [String], path: String, timeout: Double = 10) throws {
        self.path = path
        self.channels = channels
        bytesPerFrame = channels * 2
        guard let mainloop = pa_threaded_mainloop_new() else { throw BenchmarkError("the recording: cannot create a PulseAudio main loop") }
        self.mainloop = mainloop
        guard let file = fopen(path, "wb") else {
            pa_threaded_mainloop_free(mainloop)
            released.withLock { $0 = true }
            throw BenchmarkError("the recording: cannot create \(path): \(String(cString: strerror(errno)))")
        }
        self.file = file
        do {
            try open(server: server, source: source, channelMap: channelMap, deadline: HostInstant.now().nanoseconds + Int64(timeout * 1e9))
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    private func open(server: String, source: String, channelMap: [String], deadline: Int64) throws {
        let api = pa_threaded_mainloop_get_api(mainloop)
        guard let context = pa_context_new(api, "tandem bench audio recording") else { throw BenchmarkError("the recording: cannot create a context") }
        self.context = context
        guard pa_context_connect(context, server, PA_CONTEXT_NOAUTOSPAWN, nil) >= 0 else {
            throw BenchmarkError("the recording: cannot reach \(server): \(String(cString: pa_strerror(pa_context_errno(context))))")
        }
        guard pa_threaded_mainloop_start(mainloop) >= 0 else { throw BenchmarkError("the recording: cannot start the main loop") }
        try waitFor(deadline: deadline, "the sound server at \(server)") {
            switch pa_context_get_state(context) {
            case PA_CONTEXT_READY: return true
            case PA_CONTEXT_FAILED, PA_CONTEXT_TERMINATED: throw BenchmarkError("the recording: \(String(cString: pa_strerror(pa_context_errno(context))))")
            default: return false
            }
        }

        pa_threaded_mainloop_lock(mainloop)
        var spec = pa_sample_spec(format: PA_SAMPLE_S16LE, rate: UInt32(AudioBenchSignal.sampleRate), channels: UInt8(channels))
        var map = pa_channel_map()
        guard pa_channel_map_parse(&map, channelMap.joined(separator: ",")) != nil, map.channels == UInt8(channels) else {
            pa_threaded_mainloop_unlock(mainloop)
            throw BenchmarkError("the recording: bad channel map \(channelMap.joined(separator: ","))")
        }
        guard let stream = pa_stream_new(context, "tandem bench audio recording", &spec, &map) else {
            let reason = String(cString: pa_strerror(pa_context_errno(context)))
            pa_threaded_mainloop_unlock(mainloop)
            throw BenchmarkError("the recording: cannot create a stream: \(reason)")
        }
        self.stream = stream
        let me = Unmanaged.passUnretained(self).toOpaque()
        pa_stream_set_read_callback(stream, { _, _, user in
            guard let user else { return }
            Unmanaged<AudioMonitorRecorder>.fromOpaque(user).takeUnretainedValue().readAvailable()
        }, me)
        pa_stream_set_latency_update_callback(stream, { _, user in
            guard let user else { return }
            Unmanaged<AudioMonitorRecorder>.fromOpaque(user).takeUnretainedValue().timingUpdated()
        }, me)
        // Fragments of 10 ms: the server passes the recording on promptly, and the queue stays short.
        let fragment = UInt32(AudioBenchSignal.sampleRate / 100 * bytesPerFrame)
        var attributes = pa_buffer_attr(maxlength: UInt32.max, tlength: UInt32.max, prebuf: UInt32.max, minreq: UInt32.max, fragsize: fragment)
        let flags = PA_STREAM_ADJUST_LATENCY.rawValue | PA_STREAM_AUTO_TIMING_UPDATE.rawValue | PA_STREAM_DONT_MOVE.rawValue
        let connected = pa_stream_connect_record(stream, source, &attributes, pa_stream_flags_t(rawValue: flags))
        let reason = connected < 0 ? String(cString: pa_strerror(pa_context_errno(context))) : nil
        pa_threaded_mainloop_unlock(mainloop)
        if let reason { throw BenchmarkError("the recording: cannot record \(source): \(reason)") }
        try waitFor(deadline: deadline, "the recording of \(source)") {
            switch pa_stream_get_state(stream) {
            case PA_STREAM_READY: return true
            case PA_STREAM_FAILED, PA_STREAM_TERMINATED:
                throw BenchmarkError("the recording of \(source): \(String(cString: pa_strerror(pa_context_errno(context))))")
            default: return false
            }
        }
    }

    /// Waits (polling, the main loop's lock released in between) until `ready` is true.
    private func waitFor(deadline: Int64, _ what: String, _ ready: () throws -> Bool) throws {
        while true {
            pa_threaded_mainloop_lock(mainloop)
            let result = Result { try ready() }
            pa_threaded_mainloop_unlock(mainloop)
            if try result.get() { return }
            if HostInstant.now().nanoseconds >= deadline { throw BenchmarkError("the recording: no answer from \(what) in time") }
            usleep(1_000)
        }
    }

    /// Frames recorded so far.
    public var frames: Int {
        Int(recorded.withLock { $0.bytes }) / bytesPerFrame
    }

    /// The server's timing reports so far, in order.
    public var timing: [Timing] {
        recorded.withLock { $0.reports }
    }

    /// Waits at most `timeout` seconds until `frames` more frames are recorded; whether they were.
    public func waitUntilFlowing(frames wanted: Int = 2_400, timeout: Double = 10) -> Bool {
        let start = frames
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if frames - start >= wanted { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return false
    }

    /// Where the recording's frames sit on the machine's clock, fitted to the server's timing
    /// reports (`RecordingClock.fit(timing:)`), each stretch between two of `breaks` (monotonic
    /// ns: the changes, at which the sink may rewind) with an origin of its own, at `period` ns
    /// a frame when the sink's rate is known exactly (else fitted too); nil before any report.
    public func clock(breaks: [Int64] = [], period: Double? = nil) -> RecordingClock? {
        RecordingClock.fit(timing: timing, breaks: breaks, nominalPeriod: 1e9 / Double(AudioBenchSignal.sampleRate), period: period)
    }

    /// Stops recording, closes the file and disconnects. Idempotent.
    public func stop() {
        guard !released.withLock({ released in defer { released = true }; return released }) else { return }
        pa_threaded_mainloop_lock(mainloop)
        closed = true
        if let stream {
            pa_stream_set_read_callback(stream, nil, nil)
            pa_stream_set_latency_update_callback(stream, nil, nil)
            pa_stream_disconnect(stream)
            pa_stream_unref(stream)
            self.stream = nil
        }
        if let context {
            pa_context_disconnect(context)
            pa_context_unref(context)
            self.context = nil
        }
        if let file {
            fclose(file)
            self.file = nil
        }
        pa_threaded_mainloop_unlock(mainloop)
        pa_threaded_mainloop_stop(mainloop)
        pa_threaded_mainloop_free(mainloop)
    }

    /// The recording, one array of samples (full scale 1) per channel.
    public func channelSamples() throws -> [[Float]] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let frames = data.count / bytesPerFrame
        var result = [[Float]](repeating: [Float](repeating: 0, count: frames), count: channels)
        data.withUnsafeBytes { raw in
            for frame in 0..<frames {
                for channel in 0..<channels {
                    let offset = (frame * channels + channel) * 2
                    let value = Int16(bitPattern: UInt16(raw[offset]) | UInt16(raw[offset + 1]) << 8)
                    result[channel][frame] = Float(value) / 32768
                }
            }
        }
        return result
    }

    // MARK: The main loop's thread

    private func assertOnMainLoop() {
        assert(pa_threaded_mainloop_in_thread(mainloop) != 0, "AudioMonitorRecorder's state is the main loop's")
    }

    private func readAvailable() {
        assertOnMainLoop()
        guard !closed, let stream, let file else { return }
        while pa_stream_readable_size(stream) > 0 {
            var data: UnsafeRawPointer?
            var length = 0
            guard pa_stream_peek(stream, &data, &length) >= 0, length > 0 else { break }
            if let data {
                fwrite(data, 1, length, file)
            } else {
                // A hole: as many frames of silence, so that the file's frames stay the stream's.
                let zeros = [UInt8](repeating: 0, count: length)
                fwrite(zeros, 1, length, file)
            }
            recorded.withLock { $0.bytes += Int64(length) }
            pa_stream_drop(stream)
        }
        let now = HostInstant.now().nanoseconds
        if now - lastRequest >= Self.timingInterval, let operation = pa_stream_update_timing_info(stream, nil, nil) {
            pa_operation_unref(operation)
            lastRequest = now
        }
    }

    private func timingUpdated() {
        assertOnMainLoop()
        guard !closed, let stream, let info = pa_stream_get_timing_info(stream)?.pointee, info.write_index_corrupt == 0 else { return }
        var stamp = info.timestamp
        let microseconds = Int64(pa_timeval_load(&stamp))
        // The server stamps its reports with the wall clock, unless it marks them as its
        // monotonic real-time clock: moved onto the monotonic clock here.
        let isMonotonic = (Int(info.timestamp.tv_usec) & (1 << 30)) != 0
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        let monotonic = HostInstant.now().nanoseconds
        let shift = isMonotonic ? 0 : monotonic - (Int64(wall.tv_sec) * 1_000_000_000 + Int64(wall.tv_nsec))
        let instant = microseconds * 1000 + shift + Int64(info.sink_usec) * 1000 - Int64(info.source_usec) * 1000
        let report = Timing(frame: info.write_index / Int64(bytesPerFrame), instant: instant)
        recorded.withLock { recorded in
            if report.frame > 0, recorded.reports.last != report { recorded.reports.append(report) }
        }
    }
}
