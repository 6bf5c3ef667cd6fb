import Foundation
import Tandem
import TandemClock
import TandemMedia
import TandemMpv
import TandemPlayback

/// What a person does in a watch party. Each acts once the watch has begun (before, it throws
/// `WatchPartyError`); the coordinator refuses, saying why, what every participant would skip.
/// A change to the group made while the relay is away is held, and sent on its return if still
/// fresh, or refused with a line (`propose(_:)`, `HeldChanges`).
extension WatchParty {
    /// The coordinator, once the watch has begun.
    public var coordinator: PlaybackCoordinator? { watching.withLock { $0?.coordinator } }

    /// The built-in player, once the watch has begun with it.
    public var player: HeadlessPlayer? { watching.withLock { $0?.player } }

    /// The latency offset now in force (ms).
    public var latencyOffset: Int { watching.withLock { $0?.latency.current } ?? configuration.latencyOffset }

    /// What the watch acts on, or `not watching yet` (`the party is over` once `run()` returned).
    func current() throws(WatchPartyError) -> Watching {
        guard let watching = watching.withLock({ $0 }) else {
            throw .usage(over.load(ordering: .relaxed) ? "the party is over" : "not watching yet")
        }
        return watching
    }

    /// Plays at the rate the group asked for last (1 when it asked for none).
    public func play() throws {
        let coordinator = try current().coordinator
        let rate = coordinator.core.intendedRate > 0 ? coordinator.core.intendedRate : 1
        try propose { try coordinator.proposeRateChange(to: rate) }
    }

    /// Pauses the group.
    public func pause() throws {
        let coordinator = try current().coordinator
        try propose { try coordinator.proposeRateChange(to: 0) }
    }

    /// Pauses when playing, plays at 1 when paused.
    public func togglePlayPause() throws {
        let coordinator = try current().coordinator
        let rate: Double = coordinator.core.intendedRate > 0 ? 0 : 1
        try propose { try coordinator.proposeRateChange(to: rate) }
    }

    /// Plays at `rate` (the coordinator refuses what the group's validation would skip).
    public func setRate(_ rate: Double) throws {
        let coordinator = try current().coordinator
        try propose { try coordinator.proposeRateChange(to: rate) }
    }

    /// The rate changed by `step` (±0.1 by the keys), rounded to a tenth, no lower than 0.25 down, no higher than 4 up.
    public func changeRate(by step: Double) throws {
        let coordinator = try current().coordinator
        let rate = coordinator.core.intendedRate > 0 ? coordinator.core.intendedRate : 1
        // The rule mpv's window's rate keys follow too.
        let changed = MpvPlayer.steppedRate(from: rate, by: step)
        try propose { try coordinator.proposeRateChange(to: changed) }
    }

    /// Seeks to `seconds` within the item: not before its start, nor past its end (converted
    /// to nanoseconds only once clamped, so that no number typed can overflow).
    public func seek(toSeconds seconds: Double) throws {
        let coordinator = try current().coordinator
        let core = coordinator.core
        let end = core.mediaTimeRange(ofItem: core.timeline.item ?? session.activity.item).upperBound.nanoseconds
        let target = ItemTime(nanoseconds: MediaTime.nanoseconds(seconds: min(max(0, seconds), Double(end) / 1e9)).clamped(to: 0...end))
        try propose { try coordinator.proposeSeek(to: target) }
    }

    /// Seeks `step` nanoseconds from where the group is now, within the item (the player's
    /// duration, when it knows one, and the range the group's validation allows).
    public func seek(by step: Int64) throws {
        let watching = try current()
        let coordinator = watching.coordinator
        let now = coordinator.localClock.map { LocalInstant(nanoseconds: $0.instant().nanoseconds) }
        let position = (coordinator.expectedItemTime(atLocalTime: now) ?? coordinator.core.timeline.anchorMediaTime).nanoseconds
        let core = coordinator.core
        let allowed = core.mediaTimeRange(ofItem: core.timeline.item ?? session.activity.item)
        let target = position.saturatingAdding(step).clamped(to: 0...min(watching.duration ?? .max, allowed.upperBound.nanoseconds))
        try propose { try coordinator.proposeSeek(to: ItemTime(nanoseconds: target)) }
    }

    /// Moves the group to the next item of its queue.
    public func next() throws {
        let coordinator = try current().coordinator
        try propose { try coordinator.advanceToNextItem() }
    }

    /// Moves the group to the previous item of its queue.
    public func previous() throws {
        let coordinator = try current().coordinator
        try propose { try coordinator.returnToPreviousItem() }
    }

    /// Appends the file at `path` to the group's queue (checked first: one clear line when it
    /// cannot be played).
    public func addToQueue(_ path: String) throws {
        let coordinator = try current().coordinator
        try Self.checkedMedia(path)
        let entry = Self.entry(for: path)
        try propose { try coordinator.coordinateQueueChange(.append(entry)) }
    }

    /// Sends `text` to the group's chat, verbatim, up to 1,000 bytes.
    public func say(_ text: String) throws(WatchPartyError) {
        guard !text.isEmpty else { throw .usage("say wants TEXT: say hello") }
        do {
            try session.sendChat(text)
        } catch {
            throw .failure("say: \(error)")
        }
    }

    /// Sets the latency offset to `milliseconds`, clamped to `Configuration.latencyOffsets`;
    /// reports it (`latency-offset`) and returns it.
    @discardableResult
    public func setLatencyOffset(_ milliseconds: Int) throws -> Int {
        let value = try current().latency.set(milliseconds)
        emit(.latencyOffset(.init(milliseconds: value)))
        return value
    }

    /// Moves the latency offset by `delta` ms (±10 by the keys); reports it and returns it.
    @discardableResult
    public func moveLatencyOffset(by delta: Int) throws -> Int {
        let latency = try current().latency
        let value = latency.move(by: delta)
        emit(.latencyOffset(.init(milliseconds: value)))
        return value
    }

    /// Sets the built-in player's volume, in percent (clamped to 0...150); returns it. (mpv's
    /// sound is mpv's own.)
    @discardableResult
    public func setVolume(_ percent: Int) throws -> Int {
        guard let player = try current().player else { throw WatchPartyError.usage("volume is the built-in player's (--player builtin)") }
        player.volume = percent
        return player.volume
    }

    /// Moves the built-in player's volume by `delta` percent (±10 by the keys); returns it.
    @discardableResult
    public func moveVolume(by delta: Int) throws -> Int {
        guard let player = try current().player else { throw WatchPartyError.usage("volume is the built-in player's (--player builtin)") }
        player.volume += delta
        return player.volume
    }

    /// Mutes the built-in player's sound, or unmutes it; returns whether it is muted now.
    @discardableResult
    public func toggleMute() throws -> Bool {
        guard let player = try current().player else { throw WatchPartyError.usage("mute is the built-in player's (--player builtin)") }
        player.isMuted.toggle()
        return player.isMuted
    }

    /// Leaves the session; the others watch on.
    public func leave() { session.leave() }

    /// Ends the session for everyone.
    public func end() {
        endedHere.store(true, ordering: .relaxed)
        session.end()
    }
}
