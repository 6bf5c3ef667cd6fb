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
/// (the landing time measured so far, `seekLead`, and a margin), waits for the
/// landing, reads the frame it landed on, and unpauses at the instant the timeline reaches that
/// frame, less mpv's start latency (`startLatency`). A reading just after the start
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
/// ahead of its play), mpv is paused on the frame already, and the start only
/// unpauses it there.
///
/// The corrections: while the group plays, mpv's position is measured against where the
/// timeline says it should be, and `CorrectionPolicy` decides between leaving it, nudging its
/// speed and starting it afresh. A nudge moves mpv's audio clock at once by −`outputLag` × the
/// change (the sound already in the output plays at the old speed), and back when the speed is
/// restored, so a reading taken during a nudge is taken to where mpv will be once the nudge
/// ends; each nudge large enough measures the step, to learn the lag.
extension MpvMachine {
    /// mpv's start latency as the next start counts it: the first unpause starts mpv's sound
    /// output, which is slower.
    var latency: TimeSpan { statistics.starts == 0 ? configuration.firstStartLatency : startLatency }

    /// Where a seek sent now should aim for `start`: the timeline's position once it has landed.
    func aimNow(_ start: Start, _ now: HostInstant) -> ItemTime {
        max(.zero, start.target(at: max(start.host, now + seekLead + configuration.startMargin)))
    }

    /// Begins a start. Far off (the group's lead follows the slowest participant's round trip),
    /// mpv plays on until the start must begin rather than stand still all that time, from where
    /// it is (the timeline it followed, or where a person seeked it, paused for the answer).
    mutating func beginStart(_ start: Start, now: HostInstant) -> [Directive] {
        guard start.rate > 0 else { return [] }
        let begin = start.host - (seekLead + configuration.startMargin)
        var directives: [Directive] = []
        if begin - now > configuration.answerWait {
            if pausedForProposal != nil { directives += unpause(now: now) }
            if !paused {
                replace(with: .waitingToBegin(start, begin: begin))
                return directives
            }
        }
        return directives + lineUp(start, now: now)
    }

    /// Pauses mpv at the start's speed and seeks it where the timeline will be once the seek has
    /// landed; or, paused on a pre-roll's frame that suits the start, unpauses there.
    mutating func lineUp(_ start: Start, now: HostInstant) -> [Directive] {
        var directives = pause(now: now)
        // Pitch correction for the new rate, while paused and before the seek: a frame
        // pre-rolled under the old setting is not started from.
        let pitch = correctPitch(forRate: start.rate)
        if !pitch.isEmpty { prerolled = nil }
        directives += pitch
        directives += setSpeed(start.rate, now: now)
        guard isCurrent(start.version) else {
            replace(with: .none)
            return directives
        }
        if paused, let landed = prerolled, landed.restarts == restarts, !landed.known {
            // The pre-roll's landing is read: the start goes on once its frame is known.
            replace(with: .awaitingPreroll(start))
            return directives
        }
        if let frame = prerolledFrame(for: start, now: now) {
            if item.hasAudio, configuration.rendersAtDisplayTime {
                replace(with: .checkingClock(start, landed: frame, skips: 0, prerolled: true))
                return directives + [read(.audioClock, .audioClock)]
            }
            return directives + lineUp(start, landed: frame, clockless: false, prerolled: true, now: now)
        }
        return directives + sendStartSeek(start, aimed: aimNow(start, now), skips: 0, now: now)
    }

    /// Sets `audio-pitch-correction` for `rate` as the configuration says, unless mpv has that
    /// already (a file without sound needs none).
    mutating func correctPitch(forRate rate: Double) -> [Directive] {
        guard item.hasAudio, let policy = configuration.pitchCorrection else { return [] }
        let wanted = policy.corrects(atRate: rate)
        guard correctsPitch != wanted else { return [] }
        correctsPitch = wanted
        return [.send(.pitchCorrection(wanted))]
    }

    /// Sends a start's seek to `aimed` and waits for it to land.
    mutating func sendStartSeek(_ start: Start, aimed: ItemTime, skips: Int, now: HostInstant) -> [Directive] {
        let (seek, target) = seek(to: aimed, now: now)
        replace(with: .landing(Landing(start: start, aimed: target, sentAt: now, restarts: restarts, skips: skips)))
        return [seek]
    }

    /// The frame a pre-roll left mpv paused on, when `start` can unpause there: no seek landed
    /// since, the frame within `landingTolerance` before the timeline's position at the start's
    /// instant and at most a frame after it, and its unpause at least 2 ms ahead.
    func prerolledFrame(for start: Start, now: HostInstant) -> ItemTime? {
        guard paused, let prerolled, prerolled.restarts == restarts, prerolled.known else { return nil }
        let offset = prerolled.frame - start.itemTime
        guard offset >= -configuration.landingTolerance, offset <= item.frameDuration + .milliseconds(1) else { return nil }
        let unpauseAt = start.host + offset / start.rate - latency
        return unpauseAt - now >= .milliseconds(2) ? prerolled.frame : nil
    }

    /// The start's seek landed on `frame`: mpv's audio clock there is read, or the unpause set.
    mutating func landed(_ landing: Landing, on frame: ItemTime, now: HostInstant) -> [Directive] {
        if item.hasAudio, configuration.rendersAtDisplayTime {
            replace(with: .checkingClock(landing.start, landed: frame, skips: landing.skips, prerolled: false))
            return [read(.audioClock, .audioClock)]
        }
        return lineUp(landing.start, landed: frame, clockless: false, prerolled: false, now: now)
    }

    /// Sets the unpause for `start` lined up on `landed`: when the timeline reaches that frame,
    /// less mpv's start latency (and a frame more where mpv has no audio clock).
    mutating func lineUp(_ start: Start, landed: ItemTime, clockless: Bool, prerolled: Bool, now: HostInstant) -> [Directive] {
        let startAt = Self.startInstant(landed: landed, itemTime: start.itemTime, host: start.host, rate: start.rate)
        let unpauseAt = Self.unpauseInstant(startAt: startAt, latency: latency, clockless: clockless, frameDuration: item.frameDuration)
        replace(with: .awaitingUnpause(start, landed: landed, startAt: startAt, unpauseAt: unpauseAt, clockless: clockless,
                                       prerolled: prerolled))
        return stepOperation(now: now)
    }

    /// The unpause is due: mpv starts, and the corrections leave it alone while it settles.
    mutating func unpauseForStart(_ start: Start, landed: ItemTime, startAt: HostInstant, clockless: Bool, prerolled: Bool,
                                  now: HostInstant) -> [Directive] {
        guard isCurrent(start.version) else {
            replace(with: .none)
            return []
        }
        settleUntil = max(startAt, now) + configuration.startSettling
        policy.reset(correcting: true)
        statistics.starts += 1
        if prerolled { statistics.prerolledStarts += 1 }
        if clockless { statistics.clocklessStarts += 1 }
        followedVersion = start.version
        self.prerolled = nil
        let directives = unpause(now: now)
        if item.hasAudio {
            replace(with: .learning(start, landed: landed, startAt: startAt, unpausedAt: now, readAt: now + configuration.learningDelay,
                                    learns: !clockless))
        } else {
            replace(with: .none)
        }
        return directives
    }

    // MARK: Readings

    /// mpv answered the reading asked under `id` with `reading`.
    public mutating func onReading(_ id: UInt64, _ reading: Reading, now: HostInstant) -> [Directive] {
        guard let (purpose, serial) = reads.removeValue(forKey: id) else { return finish([], now) }
        if case .restart(let at) = purpose { return finish(ownSeeksLanded(reading, restartedAt: at) + restartRead(reading, restartedAt: at, now: now), now) }
        if case .correction = purpose, serial == operationSerial { return finish(correct(by: reading, now: now), now) }
        if case .lagAfterChange(let before, let changedAt, let old, let new) = purpose {
            learnLag(before: before, after: reading, changedAt: changedAt, old: old, new: new)
            return finish([], now)
        }
        guard serial == operationSerial else { return finish([], now) }
        return finish(operationRead(purpose, reading, now: now), now)
    }

    /// A seek landed and mpv's position read after it: the ledger tells a person's seek from
    /// Tandem's, and a start or a paused seek waiting for it goes on.
    mutating func restartRead(_ reading: Reading, restartedAt: HostInstant, now: HostInstant) -> [Directive] {
        var directives: [Directive] = []
        // The frame a pre-roll landed on, read (unknown: a start seeks).
        if let landed = prerolled, landed.restarts == restarts, !landed.known {
            prerolled = reading.position.map { ($0, restarts, true) }
            if case .awaitingPreroll(let start) = operation { directives += lineUp(start, now: now) }
        }
        if let position = reading.position {
            // Taken back to when playback restarted.
            let since = ledger.paused ? TimeSpan.zero : max(.zero, reading.at - restartedAt) * ledger.speed
            if let action = ledger.observe(.seekLanded(at: (position - since).nanoseconds), at: restartedAt) {
                directives += personChanged(action, now: now)
            }
        }
        switch operation {
        case .landing(var landing) where landing.restarts != restarts:
            if landing.firstRead == nil {
                seekLead = Self.learnedSeekLead(seekLead, took: now - landing.sentAt)
                settleUntil = now + .milliseconds(200)
            }
            return directives + landingRead(&landing, reading, now: now)
        case .seekingPaused(let target, _, let before, let completion, let prerolls) where before != restarts:
            settleUntil = now + .milliseconds(200)
            replace(with: .none)
            if prerolls { prerolled = (reading.position ?? target, restarts, true) }
            return directives + (completion.map { [.complete(command: $0)] } ?? [])
        default:
            return directives
        }
    }

    /// A reading of the frame a start's seek landed on: at or after the target (mpv drops the
    /// frames before it), or read again shortly (it is an earlier seek's landing, or mpv still
    /// seeks), up to `landingReadLimit`.
    mutating func landingRead(_ landing: inout Landing, _ reading: Reading, now: HostInstant) -> [Directive] {
        if landing.firstRead == nil { landing.firstRead = now }
        if let position = reading.position {
            landing.lastFrame = position
            if position >= landing.aimed - configuration.landingTolerance { return landed(landing, on: position, now: now) }
        }
        landing.retryAt = now + configuration.landingReadInterval
        operation = .landing(landing)
        return []
    }

    /// A reading asked for by the operation under way.
    mutating func operationRead(_ purpose: ReadPurpose, _ reading: Reading, now: HostInstant) -> [Directive] {
        switch (purpose, operation) {
        case (.landing, .landing(var landing)):
            return landingRead(&landing, reading, now: now)
        case (.audioClock, .checkingClock(let start, let landed, let skips, let prerolled)):
            let clockless = reading.position == nil
            if clockless, prerolled { return sendStartSeek(start, aimed: aimNow(start, now), skips: 0, now: now) }
            if clockless, skips < configuration.audioClockSkips, isCurrent(start.version) {
                // Seek on, a tenth of a second at a time, to a frame where mpv has its audio clock.
                statistics.audioClockSkips += 1
                return sendStartSeek(start, aimed: max(aimNow(start, now), landed + configuration.audioClockSkip), skips: skips + 1, now: now)
            }
            return lineUp(start, landed: landed, clockless: clockless, prerolled: prerolled, now: now)
        case (.learnStart, .learning(let start, let landed, let startAt, let unpausedAt, _, let learns)):
            replace(with: .none)
            guard let position = reading.position, reading.roundTrip <= configuration.correctionRoundTrip else { return [] }
            let (error, measured) = Self.startMeasurement(position: position, at: reading.at, landed: landed, startAt: startAt,
                                                          unpausedAt: unpausedAt, rate: start.rate)
            if learns, statistics.starts > 1 { startLatency = TimeSpan(nanoseconds: (startLatency.nanoseconds + measured.nanoseconds) / 2) }
            statistics.lastStartError = error.nanoseconds
            if error.magnitude > configuration.trimLimit, start.again {
                var again = start
                again.again = false
                return beginStart(again, now: now)
            }
            return trim(error, rate: start.rate, now: now)
        case (.checkPlay, .checkingPlay(let play)):
            replace(with: .none)
            let host = play.hostTime - latencyOffset
            if let position = framed(reading) {
                // Where mpv will be at the command's instant, going on as it goes.
                let predicted = position + (host - reading.at) * requestedSpeed
                let limit = play.version == followedVersion ? TimeSpan(nanoseconds: policy.seekThreshold) : configuration.trimLimit
                if (predicted - play.itemTime).magnitude <= limit {
                    followedVersion = play.version
                    groupRate = play.rate
                    return []
                }
            }
            groupRate = play.rate
            return beginStart(Start(itemTime: play.itemTime, host: host, rate: play.rate, version: play.version, again: true), now: now)
        case (.checkPosition, .checkingPosition(let target, let tolerance, let completion, let prerolls)):
            if let position = reading.position, (position - target).magnitude <= tolerance {
                replace(with: .none)
                if prerolls { prerolled = (position, restarts, true) }
                return completion.map { [.complete(command: $0)] } ?? []
            }
            let (seek, sent) = seek(to: target, now: now)
            replace(with: .seekingPaused(target: sent, sentAt: now, restarts: restarts, completion: completion, prerolls: prerolls))
            return [seek]
        default:
            return []
        }
    }

    /// The position a reading gives, `time-pos` taken back by `positionLead` while playing.
    func framed(_ reading: Reading) -> ItemTime? {
        item.hasAudio || paused ? reading.position : reading.position.map { $0 - item.positionLead }
    }

    /// The property a position reading reads now: the audio clock while playing a file with
    /// sound, else the frame shown.
    var positionProperty: Property { !paused && item.hasAudio ? .audioClock : .framePosition }

    /// Takes a start's `error` (positive: ahead) out with one pulse of speed for `trimDuration`;
    /// within the deadband there is nothing to trim.
    mutating func trim(_ error: TimeSpan, rate: Double, now: HostInstant) -> [Directive] {
        guard !paused, hold == nil,
              let speed = Self.trimSpeed(error: error, rate: rate, deadband: TimeSpan(nanoseconds: itemPolicy.deadband),
                                         limit: configuration.trimLimit, duration: configuration.trimDuration) else { return [] }
        statistics.nudges += 1
        replace(with: .trimming(rate: rate, until: now + configuration.trimDuration))
        return setSpeed(speed, now: now)
    }

    // MARK: Corrections

    /// Where mpv should be at `instant`: the group's timeline shifted by the latency offset.
    func expected(at instant: HostInstant) -> ItemTime? {
        guard let timeline, timeline.rate > 0 else { return nil }
        return groupPosition(at: instant + latencyOffset)
    }

    /// Decides what to do about mpv's position in `reading` and does it: nothing, a nudge of
    /// speed, or a start afresh. A reading during a nudge is taken to where mpv will be once
    /// the output's sound at the old speed has played (`outputLag`).
    mutating func correct(by reading: Reading, now: HostInstant) -> [Directive] {
        guard case .none = operation, groupRate > 0, !paused, hold == nil, !isStalled, let position = framed(reading),
              reading.roundTrip <= configuration.correctionRoundTrip, let expected = expected(at: reading.at) else { return [] }
        // Past the end, mpv holds the last frame: nothing to correct.
        if let duration = item.duration, expected >= ItemTime.zero + duration - .milliseconds(200) { return [] }
        let settled = Self.settledPosition(position, speed: requestedSpeed, rate: groupRate, outputLag: item.hasAudio ? outputLag : .zero)
        statistics.measurements += 1
        statistics.lastError = (settled - expected).nanoseconds
        switch policy.decide(playerTime: settled.nanoseconds, expectedTime: expected.nanoseconds, rate: groupRate) {
        case .none:
            return changeSpeed(to: groupRate, before: reading, now: now)
        case .nudge(let nudged):
            guard abs(requestedSpeed - nudged) > 0.000_05 else { return [] }
            statistics.nudges += 1
            return changeSpeed(to: nudged, before: reading, now: now)
        case .seek:
            statistics.correctiveSeeks += 1
            guard let position = self.expected(at: now) else { return [] }
            return beginStart(Start(itemTime: position, host: now, rate: groupRate, version: latestVersion, again: true), now: now)
        }
    }

    /// Changes the speed while playing and, for a change large enough, reads mpv again to learn
    /// the step its audio clock takes (`outputLag`).
    mutating func changeSpeed(to new: Double, before: Reading, now: HostInstant) -> [Directive] {
        let old = requestedSpeed
        let directives = setSpeed(new, now: now)
        guard !directives.isEmpty, item.hasAudio, abs(new - old) >= configuration.lagLearningChange * new else { return directives }
        return directives + [read(.audioClock, .lagAfterChange(before: before, changedAt: now, old: old, new: new))]
    }

    /// Learns `outputLag` from the step between a reading before a change of speed and one after.
    mutating func learnLag(before: Reading, after: Reading, changedAt: HostInstant, old: Double, new: Double) {
        guard let start = before.position, let end = after.position, after.roundTrip <= configuration.correctionRoundTrip,
              let lag = Self.learnedLag(before: start, at: before.at, after: end, at: after.at, changedAt: changedAt, old: old, new: new)
        else { return }
        outputLag = TimeSpan(nanoseconds: (outputLag.nanoseconds + lag.nanoseconds) / 2)
    }
}
