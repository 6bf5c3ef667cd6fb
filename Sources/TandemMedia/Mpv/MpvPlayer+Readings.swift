import TandemClock
import TandemPlayback

/// Reading mpv's position, for the correction loop, the commands and the presentation log.
///
/// What a reading reads. While mpv plays a file with sound, `audio-pts`: the media time of the
/// sound leaving the audio output at that moment (mpv takes the output's delay off the time of
/// the audio written so far), computed afresh for each request, so it advances smoothly rather
/// than a frame at a time. Under `--video-sync=audio`, mpv's default, it is also the clock the
/// pictures are timed by: the frame on screen is the last one whose time it has passed. Other
/// properties are worse: `time-pos` (and `playback-time`, the same clamped to the file) is the
/// time of the last frame handed to the video output, which shows it later: it steps a frame at
/// a time and reads 0 to 47 ms (20 ms on average) ahead of `audio-pts` at 30 frames/s on mpv
/// 0.35; `avsync` and `estimated-display-fps` describe the display's timing, not the position.
/// So `time-pos`, less half a frame (`positionLead`), is only the fallback: for a file without
/// sound, and for the moments mpv has no audio position (between a seek and the sound starting
/// again). While paused the reading is `time-pos` as it is: after a seek it is the frame shown.
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
    /// mpv's position and when it held (raw monotonic ns), as above; nil while mpv has none.
    /// Written to the presentation log, if any, while coordinated.
    func measurePosition() async -> (position: Int64, at: Int64)? {
        let playing = state.withLock { !$0.ledger.paused }
        var reading: (position: Int64, at: Int64)?
        if playing, hasAudio, let reply = try? await connection.command(["get_property", "audio-pts"]),
           let seconds = reply.value.double {
            reading = (Int64((seconds * 1e9).rounded()), reply.midpoint)
        } else if let reply = try? await connection.command(["get_property", "time-pos"]), let seconds = reply.value.double {
            reading = (Int64((seconds * 1e9).rounded()) - (playing ? positionLead : 0), reply.midpoint)
        }
        guard let reading else { return nil }
        record(reading.position, at: reading.at)
        return reading
    }

    /// One reading for the presentation log, between the correction loop's.
    func takeReading() async {
        guard playbackCoordinator.localClock != nil else { return }
        _ = await measurePosition()
    }

    /// Writes a reading of `position` at raw monotonic instant `instant` to the presentation
    /// log, against the shared timeline: its scheduled instant is when the timeline plays that
    /// position (the reading's own instant while the group is paused, marked still). Nothing is
    /// written before the group is on this item or while the session clock is unknown.
    private func record(_ position: Int64, at instant: Int64) {
        guard let log = options.presentationLog, let clock = playbackCoordinator.localClock else { return }
        let timeline = playbackCoordinator.core.timeline
        guard timeline.item == itemIdentifier else { return }
        var scheduled = instant
        if timeline.rate > 0 {
            guard let session = timeline.sessionTime(forMediaTime: position),
                  let local = playbackCoordinator.localTime(atSessionTime: session) else { return }
            scheduled = clock.monotonicTime(atLocal: local)
        }
        log.write(PresentationRecord(item: itemIdentifier, pts: Double(position) / 1e9, scheduledNanoseconds: scheduled,
                                     presentedNanoseconds: instant, still: timeline.rate > 0 ? nil : true, reading: true))
        state.withLock { $0.statistics.readings += 1 }
    }
}
