#if canImport(Glibc)
import Glibc
#endif
import CPulse
import Synchronization
import TandemClock

/// What a sound output could not do: reach a server, or open a playback stream on it.
public struct AudioOutputError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Code: Sendable, Equatable { case noServer, noStream }
    private let code: Code
    /// What was tried (the server, the device).
    public let context: String
    /// libpulse's reason.
    public let detail: String

    /// No sound server could be reached at `server` (libpulse's own lookup when nil).
    public static func noServer(_ server: String?, _ detail: String) -> AudioOutputError {
        AudioOutputError(code: .noServer, context: server ?? "the default server", detail: detail)
    }

    /// The server refused a playback stream on `device` (the server's default when nil).
    public static func noStream(_ device: String?, _ detail: String) -> AudioOutputError {
        AudioOutputError(code: .noStream, context: device ?? "the default device", detail: detail)
    }

    /// Whether this is "no server reachable".
    public var isNoServer: Bool { code == .noServer }

    /// One line for people.
    public var description: String {
        switch code {
        case .noServer: "no sound server (PulseAudio/PipeWire) reachable at \(context): \(detail)"
        case .noStream: "the sound server refused a playback stream on \(context): \(detail)"
        }
    }
}

/// The player's sound output through PulseAudio's asynchronous client API (PipeWire's desktop
/// sessions speak the same protocol): a playback stream of interleaved s16le stereo at 48 kHz
/// on a threaded main loop, with a target latency of some tens of milliseconds.
///
/// It **pulls**: when the server wants more, the write callback (on the main loop's thread)
/// asks `render` for the frames that will reach the output from the instant the first of them
/// will, which `OutputTimingModel` knows from the stream's timing reports (read index, sink
/// latency, the report's timestamp). The client never starts a server (`PA_CONTEXT_NOAUTOSPAWN`)
/// and gives up connecting after `connectTimeout`.
///
/// The stream keeps time through an underrun: it has no pre-buffering (`prebuf` 0, started
/// corked and uncorked after the first write), so when the server runs out of samples it plays
/// silence and its read index runs on past the write index, and what is written late for
/// instants already past is dropped by the server. Stream frame N still reaches the output on
/// the same line, the timing model stays valid, and the sound comes back in place after a gap,
/// rather than late by the gap and then corrected.
///
/// Lock order: the main loop's lock, then whatever `render` takes; nothing that holds a lock
/// `render` takes may call into this output.
///
/// Confinement (why `@unchecked Sendable`): the libpulse handles and the mutable state (the
/// context, the stream, the timing model, the frames written, `closed`) are touched only with
/// the threaded main loop's lock held: on the main loop's own thread, in its callbacks (which
/// assert it), or by the caller's thread between `pa_threaded_mainloop_lock` and `unlock`.
final class PulseAudioOutput: @unchecked Sendable {
    /// Where and how to play.
    struct Settings: Sendable {
        /// The server (`unix:/path/native`, `tcp:host`); nil lets libpulse look (PULSE_SERVER…).
        var server: String?
        /// The sink's name; nil plays on the server's default.
        var device: String?
        /// The total latency asked of the server.
        var latency = TimeSpan.milliseconds(50)
        /// Volume in percent of the stream's full level (0...150).
        var volume = 100
        var muted = false
        /// How long connecting may take before the output gives up.
        var connectTimeout = TimeSpan.seconds(2)
        /// The client's name, as the server's lists show it.
        var name = "Tandem"
        /// Whether the main loop's thread, which fills the server's buffer, asks for a real-time
        /// (SCHED_FIFO) priority, as sound servers' and players' audio threads do, so that a busy
        /// machine does not starve it into an underrun; without the privilege it runs normally.
        var realtime = true
    }

    /// Renders up to `frames` frames whose first reaches the output at `instant`, the output's
    /// frame period being `period` ns, into the buffer (interleaved stereo samples in −1...1,
    /// room for `frames`); returns how many it rendered. It may render fewer (media not decoded
    /// yet), but never fewer than those that reach the output before `holding`: the stream's
    /// buffer then still holds `minimumBuffered` beyond the sink's own latency, and the output
    /// asks again shortly (`retryInterval`) for the rest. It runs on the main loop's thread, at
    /// a real-time priority: it must not allocate, free, print or wait for a lock that a thread
    /// of ordinary priority may hold for long.
    typealias Render = @Sendable (_ frames: Int, _ instant: LocalInstant, _ period: Double, _ holding: LocalInstant,
                                  _ into: UnsafeMutableBufferPointer<Float>) -> Int
    /// Hears the output's timing events (underruns, latency) on the main loop's thread.
    typealias Events = @Sendable (Event) -> Void

    /// What the output tells its owner.
    enum Event: Sendable {
        /// Whether the main loop's thread got the real-time priority it asked for, once, at the
        /// first write (`Settings.realtime`); `errno` is the reason when it did not.
        case priority(at: LocalInstant, realtime: Bool, errno: Int32)
        case underrun(at: LocalInstant)
        case latency(at: LocalInstant, TimeSpan)
        case failed(String)
        /// At its start, the output's end of what joins it to the renderer: a renderer that
        /// connects to it (`OutputRewriting.connect`) has a change heard after its instant's
        /// frames were written written again from the change's instant.
        case rewriting(OutputRewriting)
        /// The output wrote `frames` frames again at `at`, the first reaching the output at
        /// `from`, under a changed timeline.
        case rewrite(at: LocalInstant, from: LocalInstant, frames: Int)
    }

    static let frameBytes = 4
    /// The main loop's thread's SCHED_FIFO priority: above every ordinary thread, and below the
    /// sound server's own (PulseAudio's is 5 by default), so that a client never preempts the
    /// server it feeds.
    static let realtimePriority: Int32 = 4
    /// How much sound a write that is held back leaves in the stream's buffer at least, beyond
    /// the sink's own latency.
    static let minimumBuffered = TimeSpan.milliseconds(10)
    /// How soon the output asks again after a write of fewer frames than the server wanted, in
    /// microseconds: well within the sound the write left in the output.
    static let retryInterval: pa_usec_t = 2_000
    /// The most frames one write gives (half a second); a server that wants more is given the
    /// rest at once by the next write (`retrySoon`).
    static let maximumFrames = AudioChunk.sampleRate / 2
    /// How far past the frame the server is reading now a rewrite starts at least: the server
    /// takes the stream's frames in blocks, and the read index is known by interpolation.
    static let rewriteMargin = TimeSpan.milliseconds(5)
    /// How often the output asks whether the timeline changed under frames it has written, in
    /// microseconds: a change is ordered some tens of milliseconds ahead, and heard this much
    /// later at most, while its frames are still in the stream's buffer.
    static let changePollInterval: pa_usec_t = 2_000

    private let mainloop: OpaquePointer
    private var context: OpaquePointer?
    private var stream: OpaquePointer?
    private let render: Render
    private let events: Events
    // Main loop thread only (or under its lock):
    private var model = OutputTimingModel()
    private var written: Int64 = 0
    /// Whether the stream is still corked, as it starts: it plays from its first write.
    private var corked = true
    private var loggedLatency: TimeSpan?
    private var lastTimingRequest = LocalInstant.distantPast
    /// Whether the main loop's thread has asked for its real-time priority (on its first write).
    private var askedForPriority = false
    /// The sink's latency in the latest timing report: a frame reaches the output that long after
    /// it leaves the stream's buffer.
    private var sinkLatency = TimeSpan.zero
    /// Whether a timer is set to write what the server still wants.
    private var retryPending = false
    private let settings: Settings
    /// What `render` fills, for `maximumFrames`: allocated at start, so that no write allocates.
    private let samples: UnsafeMutableBufferPointer<Float>
    private var closed = false
    private let released = Mutex(false)
    /// Where the renderer answers whether the timeline changed under what was written.
    private let rewriting = OutputRewriting()
    /// Where the latest renders started (main loop thread only).
    private var starts = OutputRewrite.Starts()
    /// The samples of a rewrite, converted, for `maximumFrames`: allocated at start.
    private let rewritten: UnsafeMutableBufferPointer<Int16>
    /// The timer that asks for changes (main loop thread only).
    private var pollEvent: OpaquePointer?

    /// Connects to the server and opens the playback stream, within `settings.connectTimeout`.
    init(settings: Settings, render: @escaping Render, events: @escaping Events) throws(AudioOutputError) {
        // Named in messages as libpulse finds it: the environment's server when none is given.
        let named = settings.server ?? getenv("PULSE_SERVER").map { String(cString: $0) }
        self.settings = settings
        self.render = render
        self.events = events
        samples = .allocate(capacity: Self.maximumFrames * AudioChunk.channelCount)
        samples.initialize(repeating: 0)
        rewritten = .allocate(capacity: Self.maximumFrames * AudioChunk.channelCount)
        rewritten.initialize(repeating: 0)
        guard let mainloop = pa_threaded_mainloop_new() else {
            throw .noServer(named, "cannot create a main loop")
        }
        self.mainloop = mainloop
        let api = pa_threaded_mainloop_get_api(mainloop)
        // From here on every failure goes through `close()`, which frees what was made.
        guard let context = pa_context_new(api, settings.name) else {
            close()
            throw .noServer(named, "cannot create a context")
        }
        self.context = context
        if pa_context_connect(context, settings.server, PA_CONTEXT_NOAUTOSPAWN, nil) < 0 {
            let reason = String(cString: pa_strerror(pa_context_errno(context)))
            close()
            throw .noServer(named, reason)
        }
        pa_threaded_mainloop_set_name(mainloop, "tandem-sound")
        guard pa_threaded_mainloop_start(mainloop) >= 0 else {
            close()
            throw .noServer(named, "cannot start the main loop")
        }
        let deadline = HostInstant.now().nanoseconds + settings.connectTimeout.nanoseconds
        do throws(AudioOutputError) {
            try waitFor(deadline: deadline) { () throws(AudioOutputError) -> Bool in
                switch pa_context_get_state(context) {
                case PA_CONTEXT_READY: return true
                case PA_CONTEXT_FAILED, PA_CONTEXT_TERMINATED:
                    throw .noServer(named, String(cString: pa_strerror(pa_context_errno(context))))
                default: return false
                }
            } timedOut: { .noServer(named, "no answer within \(settings.connectTimeout)") }
            try openStream(deadline: deadline)
        } catch {
            close()
            throw error
        }
        events(.rewriting(rewriting))
        pa_threaded_mainloop_lock(mainloop)
        let me = Unmanaged.passUnretained(self).toOpaque()
        pollEvent = pa_context_rttime_new(context, pa_rtclock_now() + Self.changePollInterval, { _, _, _, user in
            guard let user else { return }
            Unmanaged<PulseAudioOutput>.fromOpaque(user).takeUnretainedValue().poll()
        }, me)
        pa_threaded_mainloop_unlock(mainloop)
    }

    deinit {
        close()
        samples.deallocate()
        rewritten.deallocate()
    }

    /// Waits (polling, the main loop's lock released in between) until `ready` is true.
    private func waitFor(deadline: Int64, _ ready: () throws(AudioOutputError) -> Bool,
                         timedOut: () -> AudioOutputError) throws(AudioOutputError) {
        while true {
            pa_threaded_mainloop_lock(mainloop)
            let result: Result<Bool, AudioOutputError>
            do throws(AudioOutputError) { result = .success(try ready()) } catch { result = .failure(error) }
            pa_threaded_mainloop_unlock(mainloop)
            switch result {
            case .success(true): return
            case .failure(let error): throw error
            case .success(false): break
            }
            if HostInstant.now().nanoseconds >= deadline { throw timedOut() }
            usleep(1_000)
        }
    }

    private func openStream(deadline: Int64) throws(AudioOutputError) {
        let settings = settings
        pa_threaded_mainloop_lock(mainloop)
        var spec = pa_sample_spec(format: PA_SAMPLE_S16LE, rate: UInt32(AudioChunk.sampleRate), channels: UInt8(AudioChunk.channelCount))
        guard let stream = pa_stream_new(context, settings.name, &spec, nil) else {
            let reason = String(cString: pa_strerror(pa_context_errno(context)))
            pa_threaded_mainloop_unlock(mainloop)
            throw .noStream(settings.device, reason)
        }
        self.stream = stream
        let me = Unmanaged.passUnretained(self).toOpaque()
        pa_stream_set_write_callback(stream, { _, bytes, user in
            guard let user else { return }
            Unmanaged<PulseAudioOutput>.fromOpaque(user).takeUnretainedValue().write(bytes: bytes)
        }, me)
        pa_stream_set_latency_update_callback(stream, { _, user in
            guard let user else { return }
            Unmanaged<PulseAudioOutput>.fromOpaque(user).takeUnretainedValue().timingUpdated()
        }, me)
        pa_stream_set_underflow_callback(stream, { _, user in
            guard let user else { return }
            Unmanaged<PulseAudioOutput>.fromOpaque(user).takeUnretainedValue().underflowed()
        }, me)
        let latencyBytes = UInt32(Double(settings.latency.nanoseconds) / 1e9 * Double(AudioChunk.sampleRate)) * UInt32(Self.frameBytes)
        var attributes = pa_buffer_attr(maxlength: UInt32.max, tlength: latencyBytes, prebuf: 0,
                                        minreq: UInt32.max, fragsize: UInt32.max)
        var volume = pa_cvolume()
        pa_cvolume_set(&volume, UInt32(AudioChunk.channelCount), PulseAudioOutput.volume(settings.volume))
        var flags = PA_STREAM_INTERPOLATE_TIMING.rawValue | PA_STREAM_AUTO_TIMING_UPDATE.rawValue | PA_STREAM_ADJUST_LATENCY.rawValue
            | PA_STREAM_START_CORKED.rawValue
        flags |= settings.muted ? PA_STREAM_START_MUTED.rawValue : PA_STREAM_START_UNMUTED.rawValue
        let connected = pa_stream_connect_playback(stream, settings.device, &attributes, pa_stream_flags_t(rawValue: flags),
                                                   &volume, nil)
        let reason = connected < 0 ? String(cString: pa_strerror(pa_context_errno(context))) : nil
        pa_threaded_mainloop_unlock(mainloop)
        if let reason { throw .noStream(settings.device, reason) }
        let context = context
        try waitFor(deadline: deadline) { () throws(AudioOutputError) -> Bool in
            switch pa_stream_get_state(stream) {
            case PA_STREAM_READY: return true
            case PA_STREAM_FAILED, PA_STREAM_TERMINATED:
                throw .noStream(settings.device, String(cString: pa_strerror(pa_context_errno(context))))
            default: return false
            }
        } timedOut: { .noStream(settings.device, "no answer within \(settings.connectTimeout)") }
    }

    /// Stops the stream and disconnects; the output plays nothing after.
    func close() {
        // The main loop is freed by the first close: a second one must not touch it.
        guard !released.withLock({ released in defer { released = true }; return released }) else { return }
        pa_threaded_mainloop_lock(mainloop)
        closed = true
        if let pollEvent, let api = pa_threaded_mainloop_get_api(mainloop) {
            api.pointee.time_free(pollEvent)
            self.pollEvent = nil
        }
        if let stream {
            pa_stream_set_write_callback(stream, nil, nil)
            pa_stream_set_latency_update_callback(stream, nil, nil)
            pa_stream_set_underflow_callback(stream, nil, nil)
            pa_stream_disconnect(stream)
            pa_stream_unref(stream)
            self.stream = nil
        }
        if let context {
            pa_context_disconnect(context)
            pa_context_unref(context)
            self.context = nil
        }
        pa_threaded_mainloop_unlock(mainloop)
        pa_threaded_mainloop_stop(mainloop)
        pa_threaded_mainloop_free(mainloop)
    }

    /// Sets the stream's volume, in percent of its full level (0...150).
    func setVolume(_ percent: Int) {
        changeSinkInput { context, index in
            var volume = pa_cvolume()
            pa_cvolume_set(&volume, UInt32(AudioChunk.channelCount), PulseAudioOutput.volume(percent))
            return pa_context_set_sink_input_volume(context, index, &volume, nil, nil)
        }
    }

    /// Mutes or unmutes the stream.
    func setMuted(_ muted: Bool) {
        changeSinkInput { context, index in pa_context_set_sink_input_mute(context, index, muted ? 1 : 0, nil, nil) }
    }

    private func changeSinkInput(_ change: (OpaquePointer, UInt32) -> OpaquePointer?) {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        guard !closed, let context, let stream else { return }
        let index = pa_stream_get_index(stream)
        guard index != UInt32.max else { return }
        if let operation = change(context, index) { pa_operation_unref(operation) }
    }

    static func volume(_ percent: Int) -> pa_volume_t {
        pa_volume_t(Double(PA_VOLUME_NORM) * Double(min(max(percent, 0), 150)) / 100)
    }

    // MARK: The main loop's thread

    /// Asserts that the caller runs on the main loop's thread (its callbacks hold its lock).
    private func assertOnMainLoop() {
        assert(pa_threaded_mainloop_in_thread(mainloop) != 0, "PulseAudioOutput's state is the main loop's")
    }

    private func write(bytes: Int) {
        assertOnMainLoop()
        guard !closed, let stream else { return }
        var data: UnsafeMutableRawPointer?
        var size = bytes
        guard pa_stream_begin_write(stream, &data, &size) >= 0, let data else { return }
        let frames = min(size / Self.frameBytes, Self.maximumFrames)
        guard frames > 0 else {
            pa_stream_cancel_write(stream)
            return
        }
        if settings.realtime, !askedForPriority {
            askedForPriority = true
            var parameters = sched_param(sched_priority: Self.realtimePriority)
            let result = pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters)
            // Without the privilege the thread plays on at its ordinary priority; the owner's log
            // says so in one line.
            events(.priority(at: LocalInstant(nanoseconds: HostInstant.now().nanoseconds), realtime: result == 0, errno: result))
        }
        let now = LocalInstant(nanoseconds: HostInstant.now().nanoseconds)
        // The server's own timing updates thin out to one in 1.5 s: the fit wants one every 50 ms.
        if now - lastTimingRequest >= .milliseconds(50), let operation = pa_stream_update_timing_info(stream, nil, nil) {
            pa_operation_unref(operation)
            lastTimingRequest = now
        }
        // Until the server's first timing report, nobody knows when these frames will play:
        // media placed on a guess of the latency would start off by the guess's error, and the
        // drift tiers would take seconds to slew it away. Silence starts the stream, and its
        // reports; the media goes out from the first write they place.
        let samples = samples
        let rendered: Int
        if let first = model.instant(ofFrame: written) {
            rewriteIfChanged(now: now)
            starts.add(.init(frame: written, instant: first))
            rendered = min(frames, render(frames, first, model.framePeriod, now + sinkLatency + Self.minimumBuffered, samples))
        } else {
            for index in 0..<(frames * AudioChunk.channelCount) { samples[index] = 0 }
            rendered = frames
        }
        if rendered < size / Self.frameBytes { retrySoon() }
        guard rendered > 0 else {
            pa_stream_cancel_write(stream)
            return
        }
        let out = data.bindMemory(to: Int16.self, capacity: rendered * AudioChunk.channelCount)
        for index in 0..<(rendered * AudioChunk.channelCount) {
            out[index] = Int16(min(max((samples[index] * 32768).rounded(), -32768), 32767))
        }
        pa_stream_write(stream, data, rendered * Self.frameBytes, nil, 0, PA_SEEK_RELATIVE)
        written += Int64(rendered)
        if corked {
            corked = false
            if let operation = pa_stream_cork(stream, 0, nil, nil) { pa_operation_unref(operation) }
        }
    }

    /// Asks whether the timeline changed under what was written, and asks again in
    /// `changePollInterval`.
    private func poll() {
        assertOnMainLoop()
        guard !closed, let context, let pollEvent else { return }
        rewriteIfChanged(now: LocalInstant(nanoseconds: HostInstant.now().nanoseconds))
        pa_context_rttime_restart(context, pollEvent, pa_rtclock_now() + Self.changePollInterval)
    }

    /// When the timeline changed at an instant whose frames are written and not yet taken by
    /// the server, writes them again from there (`OutputRewrite`): the write index moved back
    /// over them (a negative relative seek), the renderer put back in its state at the start
    /// of the render that wrote them, and rendering again under the new timeline.
    private func rewriteIfChanged(now: LocalInstant) {
        guard !corked, let stream, let line = model.frame(at: now + sinkLatency + Self.rewriteMargin) else { return }
        let safe = Int64(line.rounded(.up))
        guard safe < written, let first = model.instant(ofFrame: safe),
              let change = rewriting.change(notBefore: first),
              let changeFrame = model.frame(at: change),
              let plan = OutputRewrite.plan(starts: starts, written: written, safe: safe,
                                            change: Int64(changeFrame.rounded(.up)), maximumFrames: Self.maximumFrames),
              rewriting.resume(at: plan.start.instant) else { return }
        let count = Int(written - plan.start.frame)
        let period = model.framePeriod
        // Every frame up to the written end is rendered again (none held back): the rest of
        // what was written must not play.
        let holding = plan.start.instant + TimeSpan(nanoseconds: Int64((Double(count + 1) * period).rounded(.up)))
        starts.add(plan.start)
        let rendered = min(count, render(count, plan.start.instant, period, holding, samples))
        let skip = Int(plan.from - plan.start.frame)
        guard rendered > skip else { return }
        let channels = AudioChunk.channelCount
        for index in (skip * channels)..<(rendered * channels) {
            rewritten[index - skip * channels] = Int16(min(max((samples[index] * 32768).rounded(), -32768), 32767))
        }
        let frames = rendered - skip
        pa_stream_write(stream, rewritten.baseAddress, frames * Self.frameBytes, nil,
                        -(written - plan.from) * Int64(Self.frameBytes), PA_SEEK_RELATIVE)
        written = plan.start.frame + Int64(rendered)
        if rendered < count { retrySoon() }
        if let from = model.instant(ofFrame: plan.from) { events(.rewrite(at: now, from: from, frames: frames)) }
    }

    /// Writes what the server still wants in `retryInterval`: the server asks again only once
    /// it has played what it asked for last, and a write held back wants the rest sooner.
    private func retrySoon() {
        guard !retryPending, let context else { return }
        retryPending = true
        let me = Unmanaged.passUnretained(self).toOpaque()
        pa_context_rttime_new(context, pa_rtclock_now() + Self.retryInterval, { api, event, _, user in
            api?.pointee.time_free(event)
            guard let user else { return }
            Unmanaged<PulseAudioOutput>.fromOpaque(user).takeUnretainedValue().retry()
        }, me)
    }

    private func retry() {
        assertOnMainLoop()
        retryPending = false
        guard !closed, let stream else { return }
        let wanted = pa_stream_writable_size(stream)
        guard wanted != size_t.max, wanted > 0 else { return }
        write(bytes: wanted)
    }

    private func timingUpdated() {
        assertOnMainLoop()
        guard !closed, let stream, let info = pa_stream_get_timing_info(stream)?.pointee,
              info.playing != 0, info.read_index_corrupt == 0 else { return }
        var stamp = info.timestamp
        let microseconds = Int64(pa_timeval_load(&stamp))
        // The server stamps its reports with the wall clock, unless it marks them as its
        // monotonic real-time clock: moved onto the monotonic clock here.
        let isMonotonic = (Int(info.timestamp.tv_usec) & (1 << 30)) != 0
        // The wall clock read between two monotonic readings, and set against their middle: a
        // preemption between the two clocks would otherwise shift this report by its length.
        var wall = timespec()
        let before = HostInstant.now().nanoseconds
        clock_gettime(CLOCK_REALTIME, &wall)
        let monotonic = HostInstant.now().nanoseconds
        let middle = before + (monotonic - before) / 2
        let shift = isMonotonic ? 0 : middle - (Int64(wall.tv_sec) * 1_000_000_000 + Int64(wall.tv_nsec))
        sinkLatency = TimeSpan(nanoseconds: Int64(info.sink_usec) * 1000)
        let reaches = microseconds * 1000 + shift + Int64(info.sink_usec) * 1000
        model.add(.init(frame: info.read_index / Int64(Self.frameBytes), instant: LocalInstant(nanoseconds: reaches)))
        let now = LocalInstant(nanoseconds: monotonic)
        if let next = model.instant(ofFrame: written) {
            let latency = next - now
            if loggedLatency.map({ abs(($0 - latency).nanoseconds) > 500_000 }) ?? true {
                loggedLatency = latency
                events(.latency(at: now, latency))
            }
        }
    }

    private func underflowed() {
        assertOnMainLoop()
        guard !closed else { return }
        // The read index runs on through the underrun (no pre-buffering): the line holds.
        events(.underrun(at: LocalInstant(nanoseconds: HostInstant.now().nanoseconds)))
    }
}

