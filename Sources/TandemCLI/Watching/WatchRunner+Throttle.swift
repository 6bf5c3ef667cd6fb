import TandemParty
import TandemMedia

/// Bench aids of the built-in player: its stalls as events, and a decode throttle for a while.
extension WatchRunner {
    /// Reports the player's own stalls as events `stalled` and `stall-recovered`. Coordinated, the
    /// player suspends this participant for `.stallRecovery` by itself meanwhile (see
    /// `HeadlessPlayer.setStallHandler(_:)`): these events only say when.
    func reportStalls(of player: HeadlessPlayer, events: EventPrinter) {
        player.setStallHandler { stall in
            events.emit(stall == .began ? .stalled : .stallRecovered)
        }
    }

    /// `throttle FACTOR SECONDS` (bench only): the player decodes FACTOR times slower for SECONDS,
    /// then at the `--decode-throttle` factor again; events `throttle` and `throttle-ended`.
    func throttle(player: HeadlessPlayer?, words: [String], events: EventPrinter) throws {
        guard let player else {
            refuse("throttle is the built-in player's (--player builtin)", events: events)
            return
        }
        guard words.count == 3, let factor = Double(words[1]), let seconds = Double(words[2]),
              seconds.isFinite, seconds > 0, seconds <= 86_400 else {
            refuse("throttle wants FACTOR SECONDS (a factor of 1 or more, 0 < SECONDS ≤ 86400)", events: events)
            return
        }
        try player.setDecodeThrottle(factor)
        events.emit(.throttle(.init(factor: factor, seconds: seconds)))
        let normal = options.decodeThrottle
        Task {
            try? await Task.sleep(for: .seconds(seconds))
            try? player.setDecodeThrottle(normal)
            events.emit(.throttleEnded(.init(factor: normal)))
        }
    }
}
