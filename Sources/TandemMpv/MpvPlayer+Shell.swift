import Synchronization
import TandemClock
import TandemNet
import TandemPlayback

/// The shell of `MpvMachine`: on the player's loop, it hands the machine what mpv reports, the
/// readings it asked for, the coordinator's commands and the wake-ups it asked for, with the
/// instant, and carries out the directives that come back, in order. It decides nothing itself:
/// it writes mpv's IPC socket without waiting for a reply (a reading's reply comes back to the
/// loop), keeps one timer for the machine's next wake-up, completes the coordinator's commands,
/// makes the proposals, and begins and ends a stall's suspension.
///
/// The machine is confined to the loop: every input runs there, one at a time, and its state
/// sits in `state`'s lock only so that the player's getters (`statistics`, `isPaused`, `rate`)
/// may read it from elsewhere.
extension MpvPlayer {
    /// Hands the machine an input on the loop, after those queued before it, and carries out
    /// what it decides. Any thread.
    func input(_ body: @escaping @Sendable (inout MpvMachine, HostInstant) -> [MpvMachine.Directive]) {
        loop.execute { [weak self] in self?.run(body) }
    }

    /// Hands the machine an input on the loop, carries out what it decides, and returns then.
    func inputAndWait(_ body: @escaping @Sendable (inout MpvMachine, HostInstant) -> [MpvMachine.Directive]) async {
        await withCheckedContinuation { continuation in
            loop.execute { [weak self] in
                self?.run(body)
                continuation.resume()
            }
        }
    }

    /// Hands the machine an input now and carries out what it decides. Loop only.
    func run(at instant: HostInstant? = nil, _ body: (inout MpvMachine, HostInstant) -> [MpvMachine.Directive]) {
        loop.preconditionInLoop()
        let now = instant ?? HostInstant.now()
        let directives: [MpvMachine.Directive]? = state.withLock { state in
            guard !state.closed else { return nil }
            return body(&state.machine, now)
        }
        guard let directives else { return }
        carryOut(directives)
    }

    /// Runs `body` on the loop against the machine and returns its directives, not carried out:
    /// for the program's own requests, which the caller sends itself and waits for.
    func decide(_ body: @escaping @Sendable (inout MpvMachine, HostInstant) -> [MpvMachine.Directive]) async -> [MpvMachine.Directive] {
        await withCheckedContinuation { continuation in
            loop.execute { [self] in
                let now = HostInstant.now()
                continuation.resume(returning: state.withLock { body(&$0.machine, now) })
            }
        }
    }

    /// Carries out the machine's directives, in order. Loop only.
    func carryOut(_ directives: [MpvMachine.Directive]) {
        for directive in directives {
            switch directive {
            case .send(let request): send(request)
            case .wake(let at): setTimer(at: at)
            case .complete(let id): state.withLock { $0.completions.removeValue(forKey: id) }?()
            case .propose(let proposal, let number): propose(proposal, number: number)
            case .beginStall:
                let suspension = playbackCoordinator.beginSuspension(for: .stallRecovery)
                state.withLock { $0.stallSuspension = suspension }
                refreshTimeControl()
            case .endStall:
                state.withLock { state in
                    defer { state.stallSuspension = nil }
                    return state.stallSuspension
                }?.end()
                refreshTimeControl()
            case .show(let lines): connection.send(Self.showTextCommand(lines, duration: Self.onScreenDuration)) { _ in }
            case .forward(let action): forward(action)
            case .seekEnded(let id, let landed): state.withLock { $0.seekEnds.removeValue(forKey: id) }?(landed)
            }
        }
    }

    /// Replaces the timer with one that wakes the machine at `instant`. Loop only. The loop runs
    /// on the system clock (`SystemClock`), whose local instants are the host's.
    private func setTimer(at instant: HostInstant) {
        let task = loop.schedule(at: LocalInstant(nanoseconds: instant.nanoseconds)) { [weak self] in
            self?.run { machine, now in machine.onWake(now: now) }
        }
        state.withLock { state in
            let previous = state.wake
            state.wake = task
            return previous
        }?.cancel()
    }

    /// Writes `request` to mpv; a reading's reply comes back to the machine on the loop.
    private func send(_ request: MpvMachine.Request) {
        switch request {
        case .pause(let paused): connection.send(["set_property", "pause", .bool(paused)]) { _ in }
        case .speed(let speed): connection.send(["set_property", "speed", .number(speed)]) { _ in }
        case .seek(let target): connection.send(["seek", .number(Double(target.nanoseconds) / 1e9), "absolute", "exact"]) { _ in }
        case .pitchCorrection(let corrects):
            connection.send(["set_property", "audio-pitch-correction", .bool(corrects)]) { [weak self] reply in
                // Not set: the next start sets it again.
                guard case .failure = reply else { return }
                self?.state.withLock { $0.machine.correctsPitch = nil }
            }
        case .read(let id, .audioClock): readAudioClock(id)
        case .read(let id, .framePosition): readFrame(id)
        case .load(let identifier): Task { await self.takeUpItem(identifier) }
        }
    }

    // MARK: Readings

    /// Reads `audio-pts` for the reading `id`: the best of up to three round trips, back to back
    /// (it stops at one under 0.5 ms): on a busy machine one round trip in a few takes
    /// milliseconds. nil once mpv has no audio clock.
    private func readAudioClock(_ id: UInt64, attempt: Int = 1, best: MpvMachine.Reading? = nil) {
        connection.send(["get_property", "audio-pts"]) { [weak self] reply in
            self?.loop.execute { [weak self] in
                guard let self else { return }
                let reading = Self.reading(reply, seconds: { $0.seconds })
                guard reading.position != nil else { return self.deliver(id, best ?? reading) }
                let better = best.map { $0.roundTrip <= reading.roundTrip ? $0 : reading } ?? reading
                if reading.roundTrip < .microseconds(500) || attempt >= 3 { return self.deliver(id, better) }
                self.readAudioClock(id, attempt: attempt + 1, best: better)
            }
        }
    }

    /// Reads the frame shown (`time-pos`) for the reading `id`: nil while mpv seeks. Both
    /// requests go at once, and mpv answers them in order: one round trip.
    private func readFrame(_ id: UInt64) {
        typealias Answer = Result<MpvConnection.Reply, any Error>
        let replies = Mutex<(seeking: Answer?, position: Answer?, delivered: Bool)>((nil, nil, false))
        let answered: @Sendable () -> Void = { [weak self] in
            guard let (seeking, position) = replies.withLock({ state -> (Answer, Answer)? in
                guard let seeking = state.seeking, let position = state.position, !state.delivered else { return nil }
                state.delivered = true
                return (seeking, position)
            }) else { return }
            self?.loop.execute { [weak self] in
                let still = if case .success(let reply) = seeking { reply.value.bool == false } else { false }
                self?.deliver(id, Self.reading(position, seconds: { still ? $0.seconds : nil }))
            }
        }
        connection.send(["get_property", "seeking"]) { reply in
            replies.withLock { $0.seeking = reply }
            answered()
        }
        connection.send(["get_property", "time-pos"]) { reply in
            replies.withLock { $0.position = reply }
            answered()
        }
    }

    /// A reading of what `reply` says, placed at its round trip's middle.
    private static func reading(_ reply: Result<MpvConnection.Reply, any Error>, seconds: (MpvValue) -> Double?) -> MpvMachine.Reading {
        guard case .success(let reply) = reply else {
            return MpvMachine.Reading(position: nil, at: HostInstant.now())
        }
        return MpvMachine.Reading(position: seconds(reply.value).map { ItemTime(nanoseconds: Int64(saturating: $0 * 1e9)) },
                                  at: HostInstant(nanoseconds: reply.midpoint), roundTrip: TimeSpan(nanoseconds: reply.receivedAt - reply.sentAt))
    }

    /// Hands the machine the reading `id`, and writes it to the presentation log. Loop only.
    private func deliver(_ id: UInt64, _ reading: MpvMachine.Reading) {
        if let position = reading.position { record(position.nanoseconds, at: reading.at.nanoseconds) }
        run { machine, now in machine.onReading(id, reading, now: now) }
    }

    // MARK: mpv's events

    /// An event mpv announced: a report for the machine, or a key bound in its window. Loop only.
    func handle(_ event: MpvEvent) {
        let report: MpvMachine.Report
        switch (event.name, event.propertyName) {
        case ("property-change", "pause"?):
            guard let paused = event.propertyValue.bool else { return }
            report = .pause(paused)
        case ("property-change", "speed"?):
            guard let speed = event.propertyValue.double else { return }
            report = .speed(speed)
        case ("property-change", "eof-reached"?):
            report = .endReached(event.propertyValue.bool ?? false)
        case ("property-change", "paused-for-cache"?):
            report = .pausedForCache(event.propertyValue.bool ?? false)
        case ("client-message", _):
            // A key bound in mpv (`bindQueueKeys`): the group moves, as at the terminal.
            guard case .array(let words)? = event.message["args"], words.first?.string == Self.groupKeyTarget,
                  let key = words.dropFirst().first?.string.flatMap(GroupKey.init(rawValue:)) else { return }
            // Proposed from the group's timeline as its coordinator has it now, which the
            // commands reach the machine after: a key pressed again at once steps from there.
            return take(key)
        case ("playback-restart", _):
            report = .playbackRestart
        default:
            return
        }
        run(at: HostInstant(nanoseconds: event.receivedAt)) { machine, now in machine.onReport(report, now: now) }
    }

    /// Seeks mpv to `target` exactly, a request of the program's own, and returns once the
    /// machine finds mpv landed there (`MpvMachine.onOwnSeek(to:id:now:)`); throws mpv's refusal,
    /// or a time-out when it did not land. Any thread.
    func seek(to target: ItemTime, _ name: String) async throws(MpvError) {
        let ended: Result<Bool, MpvError> = await withCheckedContinuation { continuation in
            let once = Mutex<CheckedContinuation<Result<Bool, MpvError>, Never>?>(continuation)
            let resume: @Sendable (Result<Bool, MpvError>) -> Void = { result in once.withLock { $0.take() }?.resume(returning: result) }
            loop.execute { [weak self] in
                guard let self else { return resume(.success(false)) }
                let now = HostInstant.now()
                let directives: [MpvMachine.Directive]? = state.withLock { state in
                    guard !state.closed else { return nil }
                    let id = state.nextCommand
                    state.nextCommand += 1
                    state.seekEnds[id] = { landed in resume(.success(landed)) }
                    return state.machine.onOwnSeek(to: target, id: id, now: now)
                }
                guard let directives else { return resume(.success(false)) }
                for directive in directives {
                    // The seek itself is sent here, for mpv's refusal to reach the caller.
                    guard case .send(.seek(let sent)) = directive else {
                        carryOut([directive])
                        continue
                    }
                    connection.send(["seek", .number(Double(sent.nanoseconds) / 1e9), "absolute", "exact"]) { reply in
                        if case .failure(let error) = reply { resume(.failure(Self.mpvError(error, name))) }
                    }
                }
            }
        }
        switch ended {
        case .success(true): return
        case .success(false): throw .timeout(name, "the seek did not land within 2 s")
        case .failure(let error): throw error
        }
    }

    // MARK: Proposals

    /// Proposes `proposal` to the group through the player's coordinator (through
    /// `Options.proposalGate`, if given); a refusal goes back to the machine. Loop only.
    private func propose(_ proposal: MpvMachine.Proposal, number: Int) {
        let coordinator = playbackCoordinator
        let make: @Sendable () throws -> Void = switch proposal {
        case .rate(let rate): { _ = try coordinator.proposeRateChange(to: rate) }
        case .seek(let target): { _ = try coordinator.proposeSeek(to: target) }
        case .next: { _ = try coordinator.advanceToNextItem() }
        case .previous: { _ = try coordinator.returnToPreviousItem() }
        }
        do {
            if let gate = options.proposalGate { try gate(make) } else { try make() }
        } catch {
            run { machine, now in machine.onProposalRefused(number, now: now) }
        }
    }
}

extension Duration {
    /// The duration in nanoseconds, saturating.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds.multipliedReportingOverflow(by: 1_000_000_000).overflow ? (seconds < 0 ? .min : .max)
            : (seconds * 1_000_000_000).saturatingAdding(attoseconds / 1_000_000_000)
    }
}
