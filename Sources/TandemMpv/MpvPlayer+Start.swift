import TandemClock
import TandemPlayback

/// Starting mpv on a timeline at an exact instant, which mpv cannot do by itself.
///
/// What mpv does (measured on mpv 0.35, `--ao=null`, a 30 frames/s clip with sound): an exact
/// seek lands on the first frame at or after its target (the frames before it are dropped and
/// the sound is cut to start with the picture), so a target between two frames lands up to a
/// frame (33 ms) further on; a seek while playing takes 10 to 30 ms to land, longer on a busy
/// machine, and plays on from there at once; while paused after a seek, `time-pos` is the frame
/// landed on, and `audio-pts` cannot be trusted (it still counts the sound buffered before the
/// seek, 170 ms off); an unpause sets the position moving from the frame landed on within a
/// fraction of a millisecond. A seek sent while playing and aimed a guessed landing time ahead
/// lands early or late by the guess's error plus up to a frame.
///
/// So a start pauses mpv, seeks exactly to where the timeline will be once the seek has landed
/// (the landing time measured so far, `DriverState.seekLead`, and a margin), waits for the
/// landing, reads the frame it landed on, and unpauses at the instant the timeline reaches that
/// frame, less mpv's start latency (`DriverState.startLatency`). A reading just after the start
/// measures that latency again, and the start's error; the latency varies from start to start
/// by a millisecond or so on a busy machine, and a pulse of speed of exactly the right length
/// trims whatever error is left beyond the policy's deadband. Rendering at display time, mpv
/// has no audio clock after landing on some frames of a clip (`audio-pts` unavailable while
/// paused; mpv alone, on the sample clip: at 0, 0.03 and 0.95 to 1.1 s, not at 0.1 to 0.9 s or
/// 1.2 s, the same frames every time; under Tandem, whose tempo filter stays in mpv's audio
/// chain, seen before mpv first played), and a start there moves 14 to 35 ms later than
/// elsewhere (0.1 to 0.3 ms), two ways at random: a start that lands there seeks on, a tenth of
/// a second at a time, to a frame where mpv has its audio clock (`audioClockSkip`), and mpv
/// starts from that frame when the timeline reaches it. The cost: mpv shows the landed
/// frame still until its instant, a few tens of ms. After a pre-roll (the group's seek, heard
/// ahead of its play: `preroll(to:)`), mpv is paused on the frame already, and the start only
/// unpauses it there.
extension MpvPlayer {
    /// How much longer than the measured landing time a start aims ahead (ns).
    static let startMargin: Int64 = 15_000_000
    /// How far before its target (ns) an exact seek may land: mpv keeps a frame less than 5 ms
    /// before the target.
    static let landingTolerance: Int64 = 10_000_000
    /// How long after the first unpause mpv's position starts moving (ns): mpv starts its sound
    /// output then, which is slower than at later starts (0.5 to 2.5 ms, measured).
    static let firstStartLatency: Int64 = 1_000_000
    /// How long a pulse of speed that trims a start's error lasts (ns). A change of speed moves
    /// mpv's audio clock at once by −`outputLag` × the change before the change itself tells
    /// (`MpvPlayer+Correction.swift`): a pulse of this length shows that as 0.4 of the error
    /// being trimmed, for a second, rather than as several times it.
    static let trimDuration: Int64 = 1_000_000_000
    /// The largest start error (ns) trimmed by a pulse: a larger one (mpv started a frame off,
    /// which happens once in a few dozen starts on a busy machine) is a start afresh.
    static let trimLimit: Int64 = 10_000_000
    /// How long after a start the correction loop leaves mpv alone (ns).
    static let startSettling: Int64 = 100_000_000
    /// How much further on (ns) a start that landed where mpv has no audio clock seeks again
    /// (see above), at most `audioClockSkips` times: past that, it unpauses a frame early, what
    /// such a start was late by in half of the starts measured.
    static let audioClockSkip: Int64 = 100_000_000
    /// How many times a start seeks on for an audio clock.
    static let audioClockSkips = 3

    /// Starts mpv playing at `rate` on the timeline that is at media time `itemTime` at raw
    /// monotonic instant `host` (already past, or to come); false when mpv could not be lined up
    /// or a command of another version than `version` superseded the start (mpv is left for that
    /// command: paused, or playing on if the start's instant was far off).
    @discardableResult
    func start(itemTime: Int64, at host: Int64, rate: Double, version: UInt64, again: Bool = true) async -> Bool {
        guard rate > 0 else { return false }
        func target(at instant: Int64) -> Int64 {
            itemTime.saturatingAdding(instant.saturatingSubtracting(host).saturatingScaled(by: rate))
        }
        let lead = state.withLock { $0.seekLead } + Self.startMargin
        // Where a seek sent now should aim: the timeline's position once it has landed.
        func aimNow() -> Int64 { max(0, target(at: max(host, MonotonicClock.now().saturatingAdding(lead)))) }
        // Far off (the relay's lead follows the slowest participant's round trip, up to a
        // second on a busy machine): mpv plays on until the start must begin rather than stand
        // still all that time, from where it is (the timeline it followed, or where a person
        // seeked it, paused for the group's answer: `MpvPlayer+UserActions.swift`).
        let begin = host.saturatingSubtracting(lead)
        if begin.saturatingSubtracting(MonotonicClock.now()) > Self.answerWait {
            if state.withLock({ $0.pausedForProposal != nil }) { await setPaused(false) }
            if state.withLock({ !$0.paused }) {
                guard await wait(until: begin, version: version) else { return false }
            }
        }
        await setPaused(true)
        state.withLock { $0.liningUp = true }
        defer { state.withLock { $0.liningUp = false } }
        // Pitch correction for the new rate, while paused and before the seek: a frame
        // pre-rolled under the old setting is not started from (`MpvPlayer+Pitch.swift`).
        if await correctPitch(forRate: rate) { state.withLock { $0.prerolledAtRestart = nil } }
        await setSpeed(rate)
        // A person's seek or change taken up meanwhile (its hold set while mpv was paused and
        // its speed set, above) supersedes this start: seeking now would put mpv back on the
        // old timeline until the group's answer moves it again (the person's seek undone, then
        // redone when the answer takes effect).
        guard isCurrent(version) else { return false }
        let latency = state.withLock { $0.statistics.starts == 0 ? Self.firstStartLatency : $0.startLatency }
        var landed: Int64
        var clockless = false
        let prerolled = await prerolledFrame(itemTime: itemTime, at: host, rate: rate, latency: latency)
        if let prerolled {
            landed = prerolled
        } else {
            var aimed = aimNow()
            landed = aimed
            // Bounded: the first seek and at most `audioClockSkips` more.
            for skip in 0...Self.audioClockSkips {
                guard let sent = await sendSeek(to: aimed) else { return false }
                await waitForLanding(sent, learning: true)
                guard let frame = await landedFrame(aimed: aimed) else { return false }
                landed = frame
                clockless = await lacksAudioClock()
                guard clockless, skip < Self.audioClockSkips, isCurrent(version) else { break }
                state.withLock { $0.statistics.audioClockSkips += 1 }
                aimed = max(aimNow(), landed.saturatingAdding(Self.audioClockSkip))
            }
        }
        let startAt = MpvMachine.startInstant(landed: ItemTime(nanoseconds: landed), itemTime: ItemTime(nanoseconds: itemTime),
                                              host: HostInstant(nanoseconds: host), rate: rate)
        let unpauseAt = MpvMachine.unpauseInstant(startAt: startAt, latency: TimeSpan(nanoseconds: latency), clockless: clockless,
                                                  frameDuration: TimeSpan(nanoseconds: frameDuration))
        guard await wait(until: unpauseAt.nanoseconds, version: version) else { return false }
        state.withLock { state in
            state.settleUntil = max(startAt.nanoseconds, MonotonicClock.now()) + Self.startSettling
            state.policy.reset(correcting: true)
            state.statistics.starts += 1
            if prerolled != nil { state.statistics.prerolledStarts += 1 }
            if clockless { state.statistics.clocklessStarts += 1 }
            state.followedVersion = version
        }
        state.withLock { $0.liningUp = false }
        guard let reply = await setPaused(false) else { return false }
        guard let error = await learnFromStart(landed: landed, startAt: startAt.nanoseconds, rate: rate, unpause: reply,
                                               learning: !clockless) else { return true }
        if error.saturatingDistance(to: 0) > Self.trimLimit, again {
            return await start(itemTime: itemTime, at: host, rate: rate, version: version, again: false)
        }
        await trim(error, rate: rate, version: version)
        return true
    }

    /// The frame a pre-roll left mpv paused on (`preroll(to:)`), when a start on the timeline
    /// (`itemTime` at `host`, at `rate`) can unpause there without seeking again: no seek landed
    /// since and mpv still paused, the frame within `landingTolerance` before the timeline's
    /// position at `host` and at most a frame after it (where an exact seek to it lands), and
    /// its instant on the timeline, less the start's `latency`, at least `spinLead` ahead, and
    /// mpv's audio clock there. nil otherwise: the start seeks.
    private func prerolledFrame(itemTime: Int64, at host: Int64, rate: Double, latency: Int64) async -> Int64? {
        guard state.withLock({ $0.paused && $0.prerolledAtRestart == $0.restarts }),
              (try? await connection.get("seeking"))?.bool == false,
              let seconds = (try? await connection.get("time-pos"))?.seconds else { return nil }
        let frame = Int64(saturating: seconds * 1e9)
        let offset = frame.saturatingSubtracting(itemTime)
        guard offset >= -Self.landingTolerance, offset <= frameDuration.saturatingAdding(1_000_000) else { return nil }
        let unpauseAt = host.saturatingAdding(offset.saturatingDivided(by: rate)).saturatingSubtracting(latency)
        guard unpauseAt.saturatingSubtracting(MonotonicClock.now()) >= Self.spinLead, await !lacksAudioClock(),
              state.withLock({ $0.prerolledAtRestart == $0.restarts }) else { return nil }
        return frame
    }

    /// Whether mpv, paused where it landed and rendering at display time, has no audio clock
    /// there (`audio-pts` unavailable), so that a start from there would move late (see
    /// above). False without sound, or rendering ahead (mpv's default, where every start is
    /// alike and `startLatency` covers it).
    private func lacksAudioClock() async -> Bool {
        guard hasAudio, options.rendersAtDisplayTime else { return false }
        return (try? await connection.get("audio-pts"))?.seconds == nil
    }

    /// The frame a paused mpv landed on after an exact seek to `aimed` (ns): at or after the
    /// target, for mpv drops the frames before it (less 5 ms). A reading before that, or while
    /// mpv still seeks, is of an earlier seek's landing (a superseded start's, say): this one
    /// is waited for, every 2 ms for at most half a second, and then the last reading is taken
    /// as it is (a target past the last frame lands on the last frame).
    private func landedFrame(aimed: Int64) async -> Int64? {
        var position: Int64?
        // Bounded: 250 steps of 2 ms.
        for _ in 0..<250 {
            if (try? await connection.get("seeking"))?.bool == false, let seconds = (try? await connection.get("time-pos"))?.seconds {
                position = Int64(saturating: seconds * 1e9)
                if let position, position >= aimed.saturatingSubtracting(Self.landingTolerance) { return position }
            }
            if state.withLock({ $0.closed }) { return nil }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return position
    }

    /// Measures how the start just made went: how long after the unpause was written mpv's
    /// position began to move (folded into `startLatency` when `learning`, but for the first
    /// start's, which is slower: `firstStartLatency`), and mpv's error against the timeline (ns;
    /// positive: ahead), returned. Only the audio clock is precise enough for either: nil
    /// without sound. A start without an audio clock learns nothing: its delay is another's.
    private func learnFromStart(landed: Int64, startAt: Int64, rate: Double, unpause: MpvConnection.Reply,
                                learning: Bool) async -> Int64? {
        guard hasAudio else { return nil }
        // The first few ms of sound after an unpause read a fraction of a ms apart from the rest.
        try? await Task.sleep(for: .milliseconds(30))
        guard let reading = await preciseReading(), reading.roundTrip <= Self.correctionRoundTrip else { return nil }
        let measured = MpvMachine.startMeasurement(position: ItemTime(nanoseconds: reading.position), at: HostInstant(nanoseconds: reading.at),
                                                   landed: ItemTime(nanoseconds: landed), startAt: HostInstant(nanoseconds: startAt),
                                                   unpausedAt: HostInstant(nanoseconds: unpause.sentAt), rate: rate)
        let (error, latency) = (measured.error.nanoseconds, measured.latency.nanoseconds)
        state.withLock { state in
            if learning, state.statistics.starts > 1 { state.startLatency = (state.startLatency + latency) / 2 }
            state.statistics.lastStartError = error
        }
        return error
    }

    /// Takes a start's `error` (ns; positive: ahead) out with one pulse of speed: for
    /// `trimDuration`, faster or slower by |error| / (rate × `trimDuration`). The steps the
    /// audio clock takes when the speed changes and changes back cancel (see `outputLag`), so
    /// the pulse moves mpv by just that much. Within the policy's deadband there is nothing to
    /// trim, and a larger error than `trimLimit` is left to the correction loop (when starting
    /// afresh did not help). A new command cuts the pulse short: it is waited for, as a
    /// command's instant is.
    private func trim(_ error: Int64, rate: Double, version: UInt64) async {
        guard let speed = MpvMachine.trimSpeed(error: TimeSpan(nanoseconds: error), rate: rate,
                                               deadband: TimeSpan(nanoseconds: correctionPolicy.deadband),
                                               limit: TimeSpan(nanoseconds: Self.trimLimit), duration: TimeSpan(nanoseconds: Self.trimDuration))
        else { return }
        let began = state.withLock { state -> Bool in
            guard !state.paused, state.hold == nil, !state.closed else { return false }
            state.statistics.nudges += 1
            return true
        }
        guard began, let sent = await setSpeed(speed) else { return }
        _ = await wait(until: sent.midpoint + Self.trimDuration, version: version)
        if state.withLock({ !$0.paused }) { await setSpeed(rate) }
    }
}
