import Synchronization
import TandemPlayback
import TandemClock
import TandemMediaTypes

/// What a player does with its own stalls: a coordinated player suspends its participant for
/// `.stallRecovery` while it stalls, so that no program needs to; every player also hands each
/// change to the handler a program set (`HeadlessPlayer.setStallHandler(_:)`).
///
/// As in AVFoundation, where a player that runs out of data begins waiting on its own
/// (`AVPlayer.timeControlStatus` `.waitingToPlayAtSpecifiedRate`) and its coordinator suspends it
/// (`AVPlaybackCoordinator.beginSuspension(for:)` with `.stallRecovery`): whether the group waits is
/// the coordinator's `suspensionReasonsThatTriggerWaiting`.
final class StallSuspender: Sendable {
    private struct State {
        /// The program's handler, called after the suspension changed.
        var handler: (@Sendable (PlayerStall) -> Void)?
        /// The suspension of the stall in progress, begun by this player.
        var suspension: PlaybackSuspension?
    }

    private let state = Mutex(State())

    /// Replaces the program's handler.
    func setHandler(_ handler: (@Sendable (PlayerStall) -> Void)?) {
        state.withLock { $0.handler = handler }
    }

    /// Whether a stall's suspension is in progress.
    var isSuspended: Bool { state.withLock { $0.suspension != nil } }

    /// A stall began or ended on `player` (called on the player's threads, its lock released).
    ///
    /// Began, coordinated: suspends the participant first (so that no command of the group's
    /// moves the player meanwhile), then holds the player where it is, so that its decoder gets
    /// ahead (a playing timeline would keep it behind). Ended: ends the suspension; the
    /// coordinator then hands the player the group's timeline a pre-roll ahead, as for a late
    /// joiner. Uncoordinated (a program driving the player's transport itself), the player is
    /// left as it is.
    func handle(_ stall: PlayerStall, player: HeadlessPlayer) {
        let coordinator = player.playbackCoordinator
        switch stall {
        case .began:
            if coordinator.isCoordinating, !isSuspended {
                let suspension = coordinator.beginSuspension(for: .stallRecovery)
                state.withLock { $0.suspension = suspension }
                let now = HostInstant.now()
                try? player.setTimeline(.paused(at: player.itemTime(atHostTime: now), from: now))
            }
        case .ended:
            let suspension = state.withLock { state in
                defer { state.suspension = nil }
                return state.suspension
            }
            suspension?.end()
        }
        player.refreshTimeControl()
        let handler = state.withLock { $0.handler }
        handler?(stall)
    }
}

extension HeadlessPlayer {
    /// Changes the decode throttle (`Options.decodeThrottle`) from the next frame on: for
    /// benchmarks, to make a participant slow for a while. Refuses a factor below 1 or not finite.
    public func setDecodeThrottle(_ factor: Double) throws(MediaError) {
        guard factor.isFinite && factor >= 1 else {
            throw MediaError.invalidArgument("decodeThrottle", "\(factor) is not a factor of 1 or more")
        }
        engine.lock.withLock { engine.limits.decodeThrottle = factor }
    }

    /// The decode throttle in force.
    public var decodeThrottle: Double {
        engine.lock.withLock { engine.limits.decodeThrottle }
    }

    /// Whether this player has suspended its participant for a stall in progress (coordinated
    /// only: see `setStallHandler(_:)`).
    public var isSuspendedForStall: Bool { stalls.isSuspended }
}
