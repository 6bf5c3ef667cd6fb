import TandemClock
import TandemMedia
import TandemPlayback

/// Bench aids of the built-in player: stalls on command, its own stalls as events, and a decode
/// throttle for a while.
extension WatchParty {
    /// Reports the player's own stalls as events `stalled` and `stall-recovered`. Coordinated, the
    /// player suspends this participant for `.stallRecovery` by itself meanwhile (see
    /// `HeadlessPlayer.setStallHandler(_:)`): these events only say when.
    func reportStalls(of player: HeadlessPlayer) {
        player.setStallHandler { [weak self] stall in
            self?.emit(stall == .began ? .stalled : .stallRecovered)
        }
    }

    /// Freezes the built-in player where it is and suspends this participant for
    /// `.stallRecovery`, as a player that ran out of data would (`stall`); the suspension ends
    /// `seconds` later (`stall-ended`). With `waits` false the group does not wait: the others
    /// play on, and this player catches up when it ends.
    public func stall(seconds: Double, waits: Bool) throws {
        let watching = try current()
        guard let player = watching.player else { throw WatchPartyError.usage("stall is the built-in player's (--player builtin)") }
        let coordinator = watching.coordinator
        let suspension = coordinator.beginSuspension(for: .stallRecovery, holdingGroup: waits)
        // Suspended first, so that no command of the group's unfreezes the player.
        let now = HostInstant.now()
        try? player.setTimeline(.paused(at: player.itemTime(atHostTime: now), from: now))
        emit(.stall(.init(seconds: seconds, waits: waits)))
        later { [self] in
            try? await Task.sleep(for: .seconds(seconds))
            // Reported before the suspension ends, so that `stall-ended` always comes before the
            // `resumed` it leads to (the relay may order the end and bring it back before this
            // task runs again); nothing is reported after the session is over for this participant.
            var over = false
            if case .invalidated = session.state { over = true }
            if !over { emit(.stallEnded(.init(seconds: seconds, waits: waits))) }
            suspension.end()
        }
    }

    /// The built-in player decodes `factor` times slower for `seconds` (`throttle`), then at
    /// `Configuration.decodeThrottle` again (`throttle-ended`). Bench only.
    public func throttle(factor: Double, seconds: Double) throws {
        let watching = try current()
        guard let player = watching.player else { throw WatchPartyError.usage("throttle is the built-in player's (--player builtin)") }
        try player.setDecodeThrottle(factor)
        emit(.throttle(.init(factor: factor, seconds: seconds)))
        let normal = configuration.decodeThrottle
        later { [self] in
            try? await Task.sleep(for: .seconds(seconds))
            try? player.setDecodeThrottle(normal)
            emit(.throttleEnded(.init(factor: normal)))
        }
    }
}
