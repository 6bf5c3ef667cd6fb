#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import TandemClock
import TandemMediaTypes

/// Where a `HeadlessPlayer`'s sound plays.
public enum AudioOutputKind: String, Sendable, CaseIterable {
    /// Nowhere: the player is silent (its audio sinks still hear the decoded sound).
    case none
    /// A PulseAudio server, or PipeWire's (which speaks its protocol).
    case pulse
}

/// What a player's sound output has done so far.
public struct SoundStatistics: Sendable, Equatable {
    /// Writes to the output that played media.
    public var writes = 0
    /// Jumps to the timeline's position (an error beyond the snap threshold).
    public var snaps = 0
    /// Times the sound server ran out of written sound.
    public var underruns = 0
    /// Output frames that should have played media not decoded in time (silence instead).
    public var missingFrames = 0
    /// The last write's resampling correction, as a fraction (0: the samples pass as decoded).
    public var correction = 0.0
    /// The largest correction so far, as a fraction (at most 0.005).
    public var largestCorrection = 0.0
    /// The output's latency as last measured (from a write to its first frame reaching the
    /// output), nil until the server's timing reports have given it.
    public var latency: TimeSpan?
    /// How late the last write's first media frame reaches the output, by the output's own
    /// timing, against the instant the timeline gives that frame (negative: early; the latency
    /// offset is part of the timeline's instant, not an error); nil before the first write.
    public var lateness: TimeSpan?

    /// Nothing done yet.
    public init() {}
}

/// A player's sound output and its settings: the PulseAudio output when one could be opened.
final class HeadlessPlayerSound: Sendable {
    let playout: AudioPlayout?
    private let output: PulseAudioOutput?
    private let levels: Mutex<(volume: Int, muted: Bool)>

    /// Opens the output that `options` ask for; without a server, says so in one line (through
    /// `options.audioNotice`, or on standard error) and plays on without sound.
    init(playout: AudioPlayout?, options: HeadlessPlayer.Options, engine: PlaybackEngine) {
        self.playout = playout
        levels = Mutex((HeadlessPlayer.clampedVolume(options.volume), options.muted))
        guard let playout else {
            output = nil
            return
        }
        // The output's thread never waits for the engine's lock: while another thread holds it,
        // the output renders from the schedule it read last (`AudioPlayout.attach`).
        playout.attach { engine.lock.withLockIfAvailable { (engine.schedule, engine.latencyOffset) } }
        var settings = PulseAudioOutput.Settings()
        settings.server = options.audioServer
        settings.device = options.audioDevice
        settings.latency = options.audioLatency
        settings.volume = HeadlessPlayer.clampedVolume(options.volume)
        settings.muted = options.muted
        settings.realtime = options.realtimePresentation
        do throws(AudioOutputError) {
            output = try PulseAudioOutput(settings: settings, render: { frames, instant, period, holding, samples in
                playout.render(frames: frames, instant: instant, period: period, holding: holding, into: samples)
            }, events: { playout.handle($0) })
        } catch {
            output = nil
            let notice = options.audioNotice ?? { line in
                let text = Array((line + "\n").utf8)
                text.withUnsafeBytes { _ = writeFully(STDERR_FILENO, $0) }
            }
            notice("\(error): playing without sound")
        }
    }

    var hasOutput: Bool { output != nil }

    var volume: Int {
        get { levels.withLock { $0.volume } }
        set {
            let volume = HeadlessPlayer.clampedVolume(newValue)
            levels.withLock { $0.volume = volume }
            output?.setVolume(volume)
        }
    }

    var muted: Bool {
        get { levels.withLock { $0.muted } }
        set {
            levels.withLock { $0.muted = newValue }
            output?.setMuted(newValue)
        }
    }

    func close() {
        output?.close()
        playout?.log?.close()
    }
}

extension HeadlessPlayer {
    /// The loudest volume: 150 %.
    public static let maximumVolume = 150

    static func clampedVolume(_ volume: Int) -> Int { min(max(volume, 0), maximumVolume) }

    /// The playout (decoded PCM, core, log) for the output `options` ask for, if any.
    static func playout(options: Options) throws(MediaError) -> AudioPlayout? {
        guard options.audioOutput == .pulse else { return nil }
        let log = try options.audioLog.map { path throws(MediaError) in try AudioLog(path: path) }
        return AudioPlayout(log: log)
    }

    /// Whether the player's sound reaches a sound server (false with `.none`, or when none
    /// could be reached).
    public var hasSoundOutput: Bool { sound.hasOutput }

    /// The sound's volume in percent (0 to `maximumVolume`); set it at any time, clamped.
    public var volume: Int {
        get { sound.volume }
        set { sound.volume = newValue }
    }

    /// What the sound output has done so far (all zero without one).
    public var soundStatistics: SoundStatistics { sound.playout?.statistics ?? SoundStatistics() }

    /// Whether the sound is muted; set it at any time.
    public var isMuted: Bool {
        get { sound.muted }
        set { sound.muted = newValue }
    }
}
