import TandemClock
import TandemMpv

/// Lines on mpv's own screen (its OSD): a person watching in mpv's window sees there what a
/// terminal prints, who did what and the chat, as the front gives them (`EventSentence`,
/// `PartyNarrator`: names, never identifiers).
extension WatchParty {
    /// Shows `line` on mpv's screen under the lines shown there in the last few seconds
    /// (`OnScreenLines`), with `--player mpv`; nothing with the built-in player. Returns at once:
    /// mpv is told in order, and of texts that come faster than mpv takes them the newest wins.
    public func showOnScreen(_ line: String) {
        guard configuration.player == .mpv, !over.load(ordering: .relaxed) else { return }
        let now = SystemClock().instant()
        let lines = onScreen.withLock { $0.add(line, at: now) }
        screenSink.yield(lines)
    }

    /// The work that hands the texts `showOnScreen(_:)` gives to `mpv`, to run for as long as the
    /// watch lasts.
    func followOnScreen(mpv: MpvPlayer) -> @Sendable () async -> Void {
        let texts = screenTexts
        let lifetime = onScreen.withLock { $0.lifetime }
        return {
            for await lines in texts { await mpv.showOnScreen(lines, for: lifetime) }
        }
    }
}
