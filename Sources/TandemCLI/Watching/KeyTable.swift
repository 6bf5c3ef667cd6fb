import TandemClock

/// The keys at a watching terminal, with mpv's meanings where mpv has the key, as `?` shows them
/// and the README lists them.
enum KeyTable {
    /// The one line shown as watching starts.
    static let hint = "keys: space pause  ←→ seek  [ ] speed  < > item  9 0 m sound  q leave  ? more"

    /// The table `?` prints.
    static let lines = [
        "for everyone:  space or p  play or pause      ← →  seek 5 s (shift: 30 s)",
        "               [ ]  slower, faster (Backspace: 1x)      < >  previous, next item",
        "               e e  end the party (press twice within 3 s)",
        "for you:       9 0  quieter, louder     m  mute     - =  latency offset 10 ms",
        "               Enter  a chat line       h  the group's health",
        "               ?  these keys            q  leave (the others watch on)",
        "operators:     i  the invite to pass on (the new one after kick NAME or rekey)",
    ]
}

/// Ending the party for everyone takes a second `e` within `window`: one press only asks, so that
/// a stray key never ends everyone's evening.
struct EndConfirmation {
    /// How long the first press waits for the second.
    static let window = TimeSpan.seconds(3)
    /// What the first press says.
    static let question = "press e again within 3 s to end the party for everyone (q leaves alone)"

    private var asked: LocalInstant?

    /// A press of `e` at `now`: true when it confirms one made within the window before.
    mutating func press(at now: LocalInstant) -> Bool {
        if let asked, now - asked <= Self.window {
            self.asked = nil
            return true
        }
        asked = now
        return false
    }
}
