import TandemClock
import TandemPlayback
import TandemPlayerSupport

/// The player's own transport, in the manner of AVPlayer's: `play()`, `pause()`, `seek(to:)`,
/// `setRate(_:)` and `replaceCurrentItem(with:)`.
///
/// Coordinated (`playbackCoordinator.isCoordinating`, after `coordinateWithSession(_:)`), each
/// is proposed to the group, and mpv carries it out when the group's command comes back, at the
/// same instant as every other participant: the call returns once the change is proposed, and
/// throws when the coordinator would not send it (the group would refuse it). A replacement is
/// a transition of the group to the new item's identifier: every participant that holds an
/// item of that identifier (`makeAvailable(_:)`) loads it. Uncoordinated, each is done on mpv at
/// once over its IPC, and the call returns once mpv has done it: mpv answered a pause or a
/// speed, a seek landed, a new file is loaded. Either way the requests are Tandem's own, and
/// never come back as a person's proposals (`MpvRequestLedger`).
///
/// ```swift
/// let player = try await MpvPlayer.launch(item: PlaybackItem(file: "one.mp4"), options: options)
/// player.playbackCoordinator.coordinateWithSession(session)
/// try await player.play()                                   // every participant plays
/// try await player.replaceCurrentItem(with: PlaybackItem(file: "two.mp4"))
/// ```
extension MpvPlayer {
    /// The rates the transport accepts (the group's: `CoordinationCore.playableRates`, within
    /// mpv's own 0.01 to 100).
    public static var transportRates: ClosedRange<Double> { CoordinationCore.playableRates }

    /// Plays at `rate` (by default 1) from the current position.
    public func play(rate: Double = 1) async throws(MpvError) {
        guard rate > 0 else { throw .invalidRequest("play at rate \(rate)", "play needs a rate above 0; use pause()") }
        try await setRate(rate)
    }

    /// Pauses at the current position.
    public func pause() async throws(MpvError) {
        try await setRate(0)
    }

    /// Changes the rate (0 pauses, as AVPlayer's `rate`), keeping the position; a rate that is
    /// neither 0 nor within `transportRates` is refused.
    public func setRate(_ rate: Double) async throws(MpvError) {
        guard rate == 0 || Self.transportRates.contains(rate) else {
            throw .invalidRequest("set the rate to \(rate)", "a rate is 0 (paused) or from \(Self.transportRates.lowerBound) "
                                  + "to \(Self.transportRates.upperBound)")
        }
        if playbackCoordinator.isCoordinating {
            try propose(rate == 0 ? "a pause" : "the rate \(rate)") { try $0.coordinateRateChange(to: rate) }
            return
        }
        if rate > 0 { try await requestSpeed(rate) }
        try await requestPause(rate == 0)
    }

    /// Moves to media time `itemTime` (ns), keeping the rate; a time before the start is refused.
    /// Uncoordinated, mpv seeks exactly (past the end: to the end) and the call returns once it
    /// has landed.
    public func seek(to itemTime: Int64) async throws(MpvError) {
        guard itemTime >= 0 else { throw .invalidRequest("seek to \(itemTime) ns", "a media time is not before the start") }
        if playbackCoordinator.isCoordinating {
            try propose("a seek to \(itemTime) ns") { try $0.coordinateSeek(to: ItemTime(nanoseconds: itemTime)) }
            return
        }
        let itemTime = min(itemTime, duration ?? .max)
        let request = "seek to \(Double(itemTime) / 1e9) s"
        let sent = state.withLock { state in
            let now = MonotonicClock.now()
            state.ledger.requestSeek(to: itemTime, at: now)
            state.settleUntil = now + 2_000_000_000
            return SentSeek(sentAt: now, restarts: state.restarts)
        }
        do {
            try await connection.command(["seek", .number(Double(itemTime) / 1e9), "absolute", "exact"])
        } catch {
            throw Self.mpvError(error, request)
        }
        guard await waitForLanding(sent, learning: false) else { throw .timeout(request, "the seek did not land within 2 s") }
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

    /// Sets mpv's `pause` to `paused` unless mpv is so already, entered in the ledger first.
    private func requestPause(_ paused: Bool) async throws(MpvError) {
        let send = state.withLock { state in
            guard state.paused != paused || state.ledger.paused != paused else { return false }
            state.ledger.requestPause(paused, at: MonotonicClock.now())
            if paused { state.paused = true }
            return true
        }
        guard send else { return }
        do {
            try await connection.set("pause", .bool(paused))
        } catch {
            throw Self.mpvError(error, paused ? "pause" : "play")
        }
        if !paused { state.withLock { $0.paused = false } }
    }

    /// Sets mpv's `speed` to `speed` unless it was last asked for it, entered in the ledger first.
    private func requestSpeed(_ speed: Double) async throws(MpvError) {
        let speed = (speed * 10_000).rounded() / 10_000
        let send = state.withLock { state in
            guard abs(state.requestedSpeed - speed) > 0.000_05 || abs(state.ledger.speed - speed) > 0.000_05 else { return false }
            state.requestedSpeed = speed
            state.ledger.requestSpeed(speed, at: MonotonicClock.now())
            return true
        }
        guard send else { return }
        do {
            try await connection.set("speed", .number(speed))
        } catch {
            throw Self.mpvError(error, "set the speed to \(speed)")
        }
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
