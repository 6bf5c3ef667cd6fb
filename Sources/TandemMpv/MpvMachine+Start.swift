import TandemClock
import TandemPlayback

/// The machine's starts, readings and corrections (what mpv does, and why a start goes so:
/// `MpvPlayer+Start.swift` and `MpvPlayer+Correction.swift`).
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
        directives += setSpeed(start.rate, now: now)
        guard isCurrent(start.version) else {
            replace(with: .none)
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
        guard paused, let prerolled, prerolled.restarts == restarts else { return nil }
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
        if case .restart(let at) = purpose { return finish(restartRead(reading, restartedAt: at, now: now), now) }
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
        if let position = reading.position {
            // Taken back to when playback restarted.
            let since = ledger.paused ? TimeSpan.zero : max(.zero, reading.at - restartedAt) * ledger.speed
            if let action = ledger.observe(.seekLanded(at: (position - since).nanoseconds), at: restartedAt.nanoseconds) {
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
