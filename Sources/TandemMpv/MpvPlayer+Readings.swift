import TandemClock
import TandemPlayback
import TandemMediaTypes

/// Reading mpv's position, for the machine's decisions (`MpvPlayer+Shell.swift`) and the presentation log.
///
/// What a reading reads. While mpv plays a file with sound, `audio-pts`: the media time of the
/// sound leaving the audio output at that moment (mpv takes the output's delay off the time of
/// the audio written so far), computed afresh for each request, so it advances smoothly rather
/// than a frame at a time. Under `--video-sync=audio`, mpv's default, it is also the clock the
/// pictures are timed by: the frame on screen is the last one whose time it has passed. Other
/// properties are worse: `time-pos` (and `playback-time`, the same clamped to the file) is the
/// time of the last frame handed to the video output, and it steps a frame at a time. Rendering
/// ahead (mpv's default) mpv hands a frame over up to 50 ms before it shows it, and `time-pos`
/// read 0 to 47 ms (20 ms on average) ahead of `audio-pts` at 30 frames/s on mpv 0.35; rendering
/// at display time (`Options.rendersAtDisplayTime`, Tandem's default) it is the frame on
/// screen, 0 to 1 frame behind. `avsync` and `estimated-display-fps` describe the display's
/// timing, not the position. So `time-pos`, less `positionLead` (minus half a frame, or half a
/// frame rendering ahead), is only the fallback: for a file without sound, and for the moments
/// mpv has no audio position (between a seek and the sound starting again). While paused the reading is `time-pos` as it is: after a seek it is the frame shown
/// (`audio-pts` then still counts the sound buffered before the seek). A speed change moves
/// `audio-pts` by a step at once: the sound already in the output (about 170 ms with
/// `--ao=null`) plays at the old speed, and the reading is where the position will be once it
/// has (1.7 ms for a 1 % nudge), so the correction loop's nudges are proportional and small.
///
/// Precision. mpv does not stamp its replies, so a reading is placed at the middle of its IPC
/// round trip (request written, reply read, both on CLOCK_MONOTONIC): it is good to half the
/// round trip, typically 0.1–0.3 ms on one machine and a few ms at worst when the machine is
/// busy, plus the audio output's error in reporting its delay (none for `--ao=null`, whose
/// readings fit a straight line to 0.02 ms; about a millisecond for a real device). A reading is
/// of the clock that drives the picture: the picture itself changes a frame at a time (33 ms at
/// 30 frames/s) and, on a real display, at the next vertical refresh. A `time-pos` fallback is
/// good to half a frame (±17 ms at 30 frames/s) plus mpv's jitter in handing frames over
/// (about ±10 ms more, measured).
extension MpvPlayer {
    /// The coordinator whose timeline the presentation log's readings are scheduled against:
    /// the player's own (nil, the default), or the one a program drives the player's transport
    /// from (a benchmark's baseline, which keeps the player's own uncoordinated). Held weakly.
    public var readingsCoordinator: PlaybackCoordinator? {
        get { state.withLock { $0.readingsCoordinator } }
        set {
            state.withLock { state in
                state.readingsCoordinator = newValue
                // That program applies every change as it arrives: a person's goes to it as it is.
                state.machine.forwardsPersonChanges = newValue != nil
            }
        }
    }

    /// The coordinator a person's queue keys in mpv's window and mpv's item reports go to: the
    /// one a program drives the player's transport from (`readingsCoordinator`), when there is
    /// one, else the player's own.
    var groupCoordinator: PlaybackCoordinator { readingsCoordinator ?? playbackCoordinator }

    /// Schedules the next reading for the presentation log, `readingInterval` on, on the loop:
    /// besides the machine's own readings, which are logged too. Loop only.
    func scheduleLogReading() {
        guard !state.withLock({ $0.closed }) else { return }
        loop.schedule(after: TimeSpan(nanoseconds: options.readingInterval.nanoseconds)) { [weak self] in
            guard let self else { return }
            self.takeLogReading()
            self.scheduleLogReading()
        }
    }

    /// One reading for the presentation log: while mpv plays a file with sound its audio clock,
    /// else the frame shown less `positionLead` while playing.
    private func takeLogReading() {
        guard (readingsCoordinator ?? playbackCoordinator).localClock != nil else { return }
        let playing = state.withLock { !$0.machine.paused }
        let sound = playing && hasAudio
        connection.send(["get_property", sound ? "audio-pts" : "time-pos"]) { [weak self] reply in
            guard let self, case .success(let reply) = reply, let seconds = reply.value.seconds else { return }
            let position = Int64(saturating: seconds * 1e9).saturatingSubtracting(playing && !sound ? self.positionLead : 0)
            self.loop.execute { [weak self] in self?.record(position, at: reply.midpoint) }
        }
    }

    /// Writes a reading of `position` at raw monotonic instant `instant` to the presentation
    /// log, against the shared timeline: its scheduled instant is when the timeline plays that
    /// position. A reading of a still mpv is marked still, scheduled at its own instant: the
    /// group is paused, or mpv holds the frame it landed on until its start instant (a start,
    /// `MpvMachine+Start.swift`), or a person paused it. Nothing is written before the group is
    /// on this item or while the session clock is unknown.
    func record(_ position: Int64, at instant: Int64) {
        let coordinator = readingsCoordinator ?? playbackCoordinator
        guard let log = options.presentationLog, coordinator.localClock != nil else { return }
        let timeline = coordinator.core.timeline
        guard timeline.item == itemIdentifier else { return }
        let still = timeline.rate <= 0 || state.withLock { $0.machine.paused }
        var scheduled = instant
        if !still {
            guard let session = timeline.sessionTime(forMediaTime: ItemTime(nanoseconds: position)),
                  let host = coordinator.hostTime(atSessionTime: session) else { return }
            scheduled = host.nanoseconds
        }
        log.write(PresentationRecord(item: itemIdentifier, pts: Double(position) / 1e9, scheduledNanoseconds: scheduled,
                                     presentedNanoseconds: instant, still: still ? true : nil, reading: true))
        state.withLock { $0.readings += 1 }
    }
}
