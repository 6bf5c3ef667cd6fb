import TandemClock
import TandemPlayback

/// The player's own transport, AVPlayer's: `play()`, `pause()`, `seek(to:)` and `rate`, which
/// return at once and publish a failure as `error`; their throwing forms `play(rate:)`,
/// `setRate(_:)` and `setPosition(_:)`, which return once the change is made; and
/// `replaceCurrentItem(with:)`.
///
/// Coordinated (`playbackCoordinator.isCoordinating`, after `coordinateWithSession(_:)`), each
/// is proposed to the group, and mpv carries it out when the group's command comes back, at the
/// same instant as every other participant: the call returns once the change is proposed, and
/// the throwing forms throw when the coordinator would not send it (the group would refuse it). A replacement is
/// a transition of the group to the new item's identifier: every participant that holds an
/// item of that identifier (`makeAvailable(_:)`) loads it. Uncoordinated, each is done on mpv at
/// once over its IPC, and the throwing forms return once mpv has done it: mpv answered a pause
/// or a speed, a seek landed, a new file is loaded. Either way the requests are Tandem's own, and
/// never come back as a person's proposals (`MpvRequestLedger`).
///
/// ```swift
/// let player = try await MpvPlayer.launch(item: PlaybackItem(file: "one.mp4"), options: options)
/// player.playbackCoordinator.coordinateWithSession(session)
/// player.play()                                             // every participant plays
/// try await player.replaceCurrentItem(with: PlaybackItem(file: "two.mp4"))
/// ```
extension MpvPlayer {
    /// The rates the transport accepts (the group's: `CoordinationCore.playableRates`, within
    /// mpv's own 0.01 to 100).
    public static var transportRates: ClosedRange<Double> { CoordinationCore.playableRates }

    // MARK: AVPlayer's transport

    /// Plays at rate 1 from the current position, as AVPlayer's `play()`: it returns at once,
    /// and does not throw. Coordinated, the group is asked to before it returns; uncoordinated,
    /// mpv is, after the requests made before it. A failure is published as `error` (and on
    /// `$error.values`), as AVPlayer reports one; `play(rate:)` throws it instead, once mpv has
    /// done it.
    public func play() {
        transport(proposing: { () throws(MpvError) in try proposeRate(1) },
                  { (player: MpvPlayer) async throws(MpvError) in try await player.play(rate: 1) })
    }

    /// Pauses, as AVPlayer's `pause()`: it returns at once and does not throw (a failure is
    /// published as `error`); `setRate(0)` throws it instead, once mpv has paused.
    public func pause() {
        transport(proposing: { () throws(MpvError) in try proposeRate(0) },
                  { (player: MpvPlayer) async throws(MpvError) in try await player.setRate(0) })
    }

    /// Moves to media time `itemTime` (ns), keeping the rate, as AVPlayer's `seek(to:)`: it
    /// returns at once and does not throw (a failure is published as `error`);
    /// `setPosition(_:)` throws it instead, once the seek has landed.
    public func seek(to itemTime: Int64) {
        transport(proposing: { () throws(MpvError) in try proposeSeek(itemTime) },
                  { (player: MpvPlayer) async throws(MpvError) in try await player.setPosition(itemTime) })
    }

    /// The playback rate, as AVPlayer's: 0 while paused. Coordinated, the group's timeline's
    /// rate; uncoordinated, the speed last asked of mpv. Setting it changes the rate (0 pauses)
    /// as `setRate(_:)` does, returning at once; a failure is published as `error`.
    public var rate: Float {
        get {
            if playbackCoordinator.isCoordinating { return Float(playbackCoordinator.timeline.rate) }
            return state.withLock { $0.machine.paused ? 0 : Float($0.machine.requestedSpeed) }
        }
        set {
            let rate = Double(newValue)
            transport(proposing: { () throws(MpvError) in try proposeRate(rate) },
                      { (player: MpvPlayer) async throws(MpvError) in try await player.setRate(rate) })
        }
    }

    /// Carries out a transport request without waiting for it, its failure published as
    /// `error`: coordinated, `proposing` runs before this returns (proposals reach the group in
    /// the caller's order, and never wait on mpv); uncoordinated, `request` runs after the
    /// requests made before it (`transportTail`).
    private func transport(proposing: () throws(MpvError) -> Void,
                           _ request: @escaping @Sendable (MpvPlayer) async throws(MpvError) -> Void) {
        if playbackCoordinator.isCoordinating {
            do { try proposing() } catch { self.error = error }
            refreshTimeControl()
            return
        }
        transportTail.withLock { tail in
            let previous = tail
            tail = Task { [self] in
                await previous?.value
                await self.run(request)
            }
        }
    }

    /// Runs an uncoordinated transport request, publishing its failure as `error`.
    private func run(_ request: @Sendable (MpvPlayer) async throws(MpvError) -> Void) async {
        do { try await request(self) } catch { self.error = error }
        refreshTimeControl()
    }

    // MARK: The throwing forms

    /// Plays at `rate` from the current position; the call returns once the change is
    /// proposed (coordinated) or mpv has done it. Throws what `play()` publishes as `error`.
    public func play(rate: Double) async throws(MpvError) {
        guard rate > 0 else { throw .invalidRequest("play at rate \(rate)", "play needs a rate above 0; use pause()") }
        try await setRate(rate)
    }

    /// Changes the rate (0 pauses, as AVPlayer's `rate`), keeping the position; a rate that is
    /// neither 0 nor within `transportRates` is refused.
    public func setRate(_ rate: Double) async throws(MpvError) {
        if playbackCoordinator.isCoordinating {
            try proposeRate(rate)
            return
        }
        try Self.checkRate(rate)
        if rate > 0 { try await request(.speed(rate), "set the speed to \(rate)") }
        try await request(.pause(rate == 0), rate == 0 ? "pause" : "play")
    }

    /// Moves to media time `itemTime` (ns), keeping the rate; a time before the start is refused.
    /// Uncoordinated, mpv seeks exactly (past the end: to the end) and the call returns once it
    /// has landed. The throwing form of `seek(to:)`.
    public func setPosition(_ itemTime: Int64) async throws(MpvError) {
        if playbackCoordinator.isCoordinating {
            try proposeSeek(itemTime)
            return
        }
        try Self.checkPosition(itemTime)
        try await seek(to: ItemTime(nanoseconds: itemTime), "seek to \(Double(itemTime) / 1e9) s")
    }

    /// Replaces the current item with `item`, at its start (as AVPlayer's
    /// `replaceCurrentItem(with:)`). A file or an `http(s)` URL, which mpv opens itself, or a
    /// byte source, which `MpvByteServer` serves to mpv; a file that is not there is refused. Coordinated, the group transitions to `item.identifier`, and every participant
    /// that holds an item of that identifier loads it (this one holds `item` from now on; an
    /// item under the identifier mpv has already is loaded here at once).
    /// Uncoordinated, mpv loads the file at once (`loadfile`), paused or playing as it was, and
    /// the call returns once the item is loaded (`currentItem`, `duration` and the rest follow
    /// it); on a failure mpv goes back to the item it had.
    public func replaceCurrentItem(with item: PlaybackItem) async throws(MpvError) {
        if playbackCoordinator.isCoordinating {
            let target = try targets.checkedTarget(of: item, for: "replace the item with")
            let sameIdentifier = items.withLock { state in
                state.available[item.identifier] = item
                state.failed.remove(item.identifier)
                return state.loaded.item.identifier == item.identifier && state.loaded.target != target
            }
            noteAvailable(item.identifier)
            // Another file under the identifier mpv has: the group's commands would not load it.
            if sameIdentifier {
                try await load(item)
                reportItemToGroup()
            }
            try propose("a change to the item \(item.identifier)") { try $0.transitionToItem(identifier: item.identifier) }
            return
        }
        try await load(item)
    }

    // MARK: Uncoordinated requests

    /// Asks mpv for `request` of the program's own (`MpvMachine.onOwnRequest(_:now:)` enters it
    /// in the ledger, or finds mpv was last asked for it) and returns once mpv has answered;
    /// `name` says what was asked, for errors.
    func request(_ request: MpvMachine.Request, _ name: String) async throws(MpvError) {
        let directives = await decide { machine, now in machine.onOwnRequest(request, now: now) }
        for case .send(let sent) in directives {
            let arguments: [MpvValue]
            switch sent {
            case .pause(let paused): arguments = ["set_property", "pause", .bool(paused)]
            case .speed(let speed): arguments = ["set_property", "speed", .number(speed)]
            case .seek(let target): arguments = ["seek", .number(Double(target.nanoseconds) / 1e9), "absolute", "exact"]
            case .pitchCorrection(let corrects): arguments = ["set_property", "audio-pitch-correction", .bool(corrects)]
            case .read, .load: continue
            }
            do {
                try await connection.command(arguments)
            } catch {
                // Not set: the next start sets it again.
                if case .pitchCorrection = sent { state.withLock { $0.machine.correctsPitch = nil } }
                if case .pitchCorrection = sent { continue }
                throw Self.mpvError(error, name)
            }
        }
    }

    /// Refuses a rate that is neither 0 nor within `transportRates`.
    private static func checkRate(_ rate: Double) throws(MpvError) {
        guard rate == 0 || transportRates.contains(rate) else {
            throw .invalidRequest("set the rate to \(rate)", "a rate is 0 (paused) or from \(transportRates.lowerBound) "
                                  + "to \(transportRates.upperBound)")
        }
    }

    /// Refuses a media time before the start.
    private static func checkPosition(_ itemTime: Int64) throws(MpvError) {
        guard itemTime >= 0 else { throw .invalidRequest("seek to \(itemTime) ns", "a media time is not before the start") }
    }

    /// Proposes the rate `rate` to the group, checked first.
    private func proposeRate(_ rate: Double) throws(MpvError) {
        try Self.checkRate(rate)
        try propose(rate == 0 ? "a pause" : "the rate \(rate)") { try $0.proposeRateChange(to: rate) }
    }

    /// Proposes a seek to `itemTime` (ns) to the group, checked first.
    private func proposeSeek(_ itemTime: Int64) throws(MpvError) {
        try Self.checkPosition(itemTime)
        try propose("a seek to \(itemTime) ns") { try $0.proposeSeek(to: ItemTime(nanoseconds: itemTime)) }
    }

    /// Proposes `change` through the coordinator, its refusal as an `MpvError`.
    private func propose(_ change: String, _ body: (PlaybackCoordinator) throws -> Void) throws(MpvError) {
        do {
            try body(playbackCoordinator)
        } catch {
            throw .notProposed(change, "\(error)")
        }
    }

    /// `error` from the connection as an `MpvError` (it is one, from `MpvConnection`).
    static func mpvError(_ error: any Error, _ request: String) -> MpvError {
        error as? MpvError ?? .command(request, "\(error)")
    }
}
