import Foundation
import TandemClock
@testable import TandemPlayback
@testable import TandemMpv

/// A pure stand-in for mpv on virtual time, answering `MpvMachine`'s requests the way mpv 0.35
/// does (`MpvMachine+Start.swift`): an exact seek lands after `seekDelay` on the first frame at or
/// after its target (within 5 ms) and reports `playback-restart`; an unpause sets the position
/// moving from the frame shown `startLatency` later; `time-pos` is nil while seeking; `audio-pts`
/// is the exact position while playing, and while paused only on frames `hasAudioClock` says
/// have one; each reply comes `replyDelay` after the request, and is placed at its middle.
struct ScriptedMpv {
    var frameDuration = TimeSpan(nanoseconds: 33_333_333)
    var duration = TimeSpan.seconds(20)
    var seekDelay = TimeSpan.milliseconds(25)
    /// How long a seek stays queued before it runs: until then mpv reads where it was, not seeking.
    var seekQueueDelay = TimeSpan.zero
    var startLatency = TimeSpan.microseconds(300)
    var replyDelay = TimeSpan.microseconds(200)
    var hasAudioClock: @Sendable (ItemTime) -> Bool = { _ in true }
    /// The sound already in the output when the speed changes, which plays at the old speed: the
    /// audio clock (and the pictures timed by it) steps by −lag × the change at once.
    var outputLag = TimeSpan.milliseconds(375)

    private(set) var paused: Bool
    private(set) var speed = 1.0
    private(set) var pausedForCache = false
    /// `audio-pitch-correction` as last set, if it was.
    private(set) var correctsPitch: Bool?
    /// The position at `anchorTime`, moving from then on unless paused, seeking or waiting for its cache.
    private var anchor = ItemTime.zero
    private var anchorTime = HostInstant.zero
    /// The landing of a seek in flight, and when.
    private var landing: (frame: ItemTime, at: HostInstant, runs: HostInstant)?
    /// Every request received, with its instant.
    private(set) var received: [(HostInstant, MpvMachine.Request)] = []

    /// What mpv sends back: a report (a property change, an event) or a reading's answer.
    enum Output: Equatable {
        case report(MpvMachine.Report)
        case reading(UInt64, MpvMachine.Reading)
        case loaded(String)
    }

    init(paused: Bool = true) {
        self.paused = paused
    }

    var isMoving: Bool { !paused && landing == nil && !pausedForCache }

    /// The media time mpv plays at `instant`.
    func position(at instant: HostInstant) -> ItemTime {
        guard isMoving, instant > anchorTime else { return anchor }
        return min(anchor + (instant - anchorTime) * speed, .zero + duration)
    }

    /// Lands a seek in flight whose time has come; its restart report, if it landed.
    mutating func settle(at instant: HostInstant) -> [(HostInstant, Output)] {
        guard let landing, instant >= landing.at else { return [] }
        self.landing = nil
        anchor = landing.frame
        anchorTime = landing.at
        return [(landing.at, .report(.playbackRestart))]
    }

    /// When the seek in flight lands, if one is.
    var landingAt: HostInstant? { landing?.at }

    private mutating func reanchor(at instant: HostInstant) {
        anchor = position(at: instant)
        anchorTime = max(anchorTime, instant)
    }

    /// Carries out `request`, received at `now`; what mpv sends back, and when.
    mutating func receive(_ request: MpvMachine.Request, at now: HostInstant) -> [(HostInstant, Output)] {
        received.append((now, request))
        let reply = now + replyDelay
        switch request {
        case .pause(let value):
            guard value != paused else { return [] }
            reanchor(at: now)
            paused = value
            // Moving again once the sound output starts.
            if !value { anchorTime = max(anchorTime, now + startLatency) }
            return [(reply, .report(.pause(value)))]
        case .speed(let value):
            guard value != speed else { return [] }
            reanchor(at: now)
            if isMoving { anchor = anchor - outputLag * (value - speed) }
            speed = value
            return [(reply, .report(.speed(value)))]
        case .seek(let target):
            reanchor(at: now)
            // The first frame at or after the target (mpv keeps one less than 5 ms before it).
            let frames = ((target - TimeSpan.milliseconds(5)).nanoseconds + frameDuration.nanoseconds - 1) / frameDuration.nanoseconds
            let lastFrame = ItemTime.zero + duration - frameDuration
            let frame = min(ItemTime(nanoseconds: max(0, frames) * frameDuration.nanoseconds), lastFrame)
            landing = (frame, now + seekDelay, now + seekQueueDelay)
            return []
        case .read(let id, let property):
            let at = now + replyDelay / 2
            var value: ItemTime?
            if landing.map({ at < $0.runs }) ?? true {
                let position = position(at: at)
                switch property {
                case .audioClock: value = !paused || hasAudioClock(position) ? position : nil
                case .framePosition: value = ItemTime(nanoseconds: position.nanoseconds / frameDuration.nanoseconds * frameDuration.nanoseconds)
                }
            }
            return [(reply, .reading(id, MpvMachine.Reading(position: value, at: at, roundTrip: replyDelay)))]
        case .load(let identifier):
            anchor = .zero
            anchorTime = now + seekDelay
            return [(now + seekDelay, .loaded(identifier)), (now + seekDelay, .report(.playbackRestart))]
        case .pitchCorrection(let value):
            correctsPitch = value
            return []
        }
    }

    // MARK: A person at mpv, or another tool over its IPC

    /// A person pauses or unpauses mpv itself.
    mutating func personSetsPause(_ value: Bool, at now: HostInstant) -> [(HostInstant, Output)] {
        receive(.pause(value), at: now)
    }

    /// A person seeks mpv itself.
    mutating func personSeeks(to target: ItemTime, at now: HostInstant) -> [(HostInstant, Output)] {
        receive(.seek(target), at: now)
    }

    /// Moves mpv's position by `offset` at once (a drift, a hiccup of its output).
    mutating func jump(by offset: TimeSpan, at now: HostInstant) {
        reanchor(at: now)
        anchor = anchor + offset
    }

    /// mpv's cache runs dry (a stream arriving too slowly) or has enough again.
    mutating func cache(waiting: Bool, at now: HostInstant) -> [(HostInstant, Output)] {
        guard waiting != pausedForCache else { return [] }
        reanchor(at: now)
        pausedForCache = waiting
        if !waiting { anchorTime = now }
        return [(now, .report(.pausedForCache(waiting)))]
    }
}

/// The machine and a scripted mpv on one virtual clock: the machine's directives are carried out
/// on the fake as a shell would carry them out on mpv, the fake's answers are handed back at
/// their instants, and the machine's one wake-up is kept. Nothing sleeps.
struct MpvRig {
    var machine: MpvMachine
    var mpv: ScriptedMpv
    private(set) var now: HostInstant
    private var pending: [(at: HostInstant, order: Int, output: ScriptedMpv.Output)] = []
    private var order = 0
    private var wakeAt: HostInstant?
    /// What the machine proposed to the group, in order.
    private(set) var proposals: [MpvMachine.Proposal] = []
    /// The stall suspensions begun (true) and ended (false), in order.
    private(set) var stalls: [Bool] = []
    /// The commands completed, by identity.
    private(set) var completed: [UInt64] = []
    /// The lines shown on mpv's screen.
    private(set) var shown: [[String]] = []
    /// A person's changes forwarded as they are (`MpvMachine.forwardsPersonChanges`).
    private(set) var forwarded: [MpvRequestLedger.UserAction] = []
    /// The program's own seeks ended (`MpvMachine.Directive.seekEnded`), with when.
    private(set) var seeksEnded: [(id: UInt64, landed: Bool, at: HostInstant)] = []
    private var nextCommand: UInt64 = 1
    /// Items the rig's shell loads for the machine.
    var items: [String: MpvMachine.Item] = [:]

    init(item: MpvMachine.Item = MpvMachine.Item(identifier: "a", hasAudio: true, duration: .seconds(20)),
         mpv: ScriptedMpv = ScriptedMpv(), configuration: MpvMachine.Configuration = MpvMachine.Configuration(),
         at start: HostInstant = HostInstant(nanoseconds: 1_000_000_000)) {
        now = start
        self.mpv = mpv
        machine = MpvMachine(configuration: configuration, item: item, paused: mpv.paused, speed: 1, now: start)
        items[item.identifier] = item
    }

    /// Hands `command` to the machine now.
    @discardableResult
    mutating func command(_ command: PlaybackCommand) -> UInt64 {
        let id = nextCommand
        nextCommand += 1
        carryOut(machine.onCommand(command, id: id, now: now))
        return id
    }

    /// Something the fake sent back, to hand over at its instant.
    mutating func schedule(_ outputs: [(HostInstant, ScriptedMpv.Output)]) {
        for (at, output) in outputs {
            pending.append((max(at, now), order, output))
            order += 1
        }
    }

    /// Carries out the machine's directives at `now`.
    mutating func carryOut(_ directives: [MpvMachine.Directive]) {
        for directive in directives {
            switch directive {
            case .send(let request): schedule(mpv.receive(request, at: now))
            case .wake(let at): wakeAt = at
            case .complete(let id): completed.append(id)
            case .propose(let proposal, _): proposals.append(proposal)
            case .beginStall: stalls.append(true)
            case .endStall: stalls.append(false)
            case .show(let lines): shown.append(lines)
            case .forward(let action): forwarded.append(action)
            case .seekEnded(let id, let landed): seeksEnded.append((id, landed, now))
            }
        }
    }

    /// Runs the machine and the fake until `end`.
    mutating func run(until end: HostInstant) {
        // Bounded: every step consumes a pending output, a landing or the wake-up, or stops.
        for _ in 0..<1_000_000 {
            let landing = mpv.landingAt
            let output = pending.min { ($0.at, $0.order) < ($1.at, $1.order) }
            let next = [output?.at, landing, wakeAt].compactMap { $0 }.min()
            guard let next, next <= end else { break }
            now = max(now, next)
            if let landing, landing == next {
                schedule(mpv.settle(at: now))
                continue
            }
            if let output, output.at == next {
                pending.removeAll { $0.order == output.order }
                deliver(output.output)
                continue
            }
            wakeAt = nil
            carryOut(machine.onWake(now: now))
        }
        now = max(now, end)
    }

    /// Runs for `span` more.
    mutating func run(for span: TimeSpan) { run(until: now + span) }

    private mutating func deliver(_ output: ScriptedMpv.Output) {
        switch output {
        case .report(let report): carryOut(machine.onReport(report, now: now))
        case .reading(let id, let reading): carryOut(machine.onReading(id, reading, now: now))
        case .loaded(let identifier):
            guard let item = items[identifier] else {
                carryOut(machine.onItemFailed(identifier, now: now))
                return
            }
            carryOut(machine.onItemLoaded(item, now: now))
        }
    }

    /// A key pressed in mpv's window now.
    mutating func press(_ key: MpvMachine.Key) {
        carryOut(machine.onReport(.key(key), now: now))
    }

    /// A person pauses or unpauses mpv itself now.
    mutating func personSetsPause(_ value: Bool) { schedule(mpv.personSetsPause(value, at: now)) }

    /// A person seeks mpv itself now.
    mutating func personSeeks(to target: ItemTime) { schedule(mpv.personSeeks(to: target, at: now)) }

    /// mpv reports a `playback-restart` now that no seek of this one's caused (an earlier seek's, come late).
    mutating func strayRestart() { schedule([(now, .report(.playbackRestart))]) }

    /// mpv's cache runs dry or fills again now.
    mutating func cache(waiting: Bool) { schedule(mpv.cache(waiting: waiting, at: now)) }

    /// The program's own request, made now (the player's transport, uncoordinated).
    mutating func ownRequest(_ request: MpvMachine.Request) { carryOut(machine.onOwnRequest(request, now: now)) }

    /// The program's own seek to `target`, made now; its identity.
    @discardableResult
    mutating func ownSeek(to target: ItemTime) -> UInt64 {
        let id = nextCommand
        nextCommand += 1
        carryOut(machine.onOwnSeek(to: target, id: id, now: now))
        return id
    }

    /// The group refuses the proposal `number`.
    mutating func refuse(_ number: Int) { carryOut(machine.onProposalRefused(number, now: now)) }

    /// mpv's error against a timeline that is at `itemTime` at `host` at `rate`, now.
    func error(against itemTime: ItemTime, at host: HostInstant, rate: Double = 1) -> TimeSpan {
        mpv.position(at: now) - (itemTime + (now - host) * rate)
    }
}

/// Commands as the coordinator issues them, for the machine's tests.
enum Commands {
    static func play(_ itemTime: ItemTime, at host: HostInstant, rate: Double = 1, version: UInt64, item: String = "a") -> PlaybackCommand {
        let timeline = SharedTimeline(item: item, rate: rate, anchorMediaTime: itemTime, anchorSessionTime: SessionInstant(nanoseconds: host.nanoseconds),
                                      version: version)
        return .play(PlayCommand(expectedCurrentItemIdentifier: item, originator: nil, rate: rate, itemTime: itemTime, hostTime: host,
                                 completionDueDate: host + .seconds(2), version: version, timeline: timeline,
                                 issuedAt: SessionInstant(nanoseconds: host.nanoseconds.saturatingSubtracting(300_000_000))))
    }

    static func pause(_ itemTime: ItemTime, at host: HostInstant, version: UInt64, item: String = "a") -> PlaybackCommand {
        let timeline = SharedTimeline(item: item, rate: 0, anchorMediaTime: itemTime, anchorSessionTime: SessionInstant(nanoseconds: host.nanoseconds),
                                      version: version)
        return .pause(PauseCommand(expectedCurrentItemIdentifier: item, originator: nil, itemTime: itemTime, hostTime: host,
                                   shouldBufferInAnticipationOfPlayback: false, anticipatedPlaybackRate: 0, completionDueDate: host + .seconds(2),
                                   version: version, timeline: timeline, issuedAt: SessionInstant(nanoseconds: host.nanoseconds.saturatingSubtracting(300_000_000))))
    }

    static func seek(_ itemTime: ItemTime, version: UInt64, prerolls: Bool, item: String = "a", due: HostInstant) -> PlaybackCommand {
        .seek(SeekCommand(expectedCurrentItemIdentifier: item, originator: nil, itemTime: itemTime, shouldBufferInAnticipationOfPlayback: prerolls,
                          anticipatedPlaybackRate: prerolls ? 1 : 0, completionDueDate: due, version: version))
    }
}
