import Synchronization

/// What is said as a watch with the picture in the terminal starts: the player chosen, the host's
/// invite, the player's own lines (no sound server…). The picture's first drawing clears the
/// screen, so they are held until the front has begun, then said in order under the picture
/// (`StatusArea`'s kept rows); after that, a line is said at once.
final class OpeningLines: Sendable {
    /// nil once released.
    private let held: Mutex<[String]?>

    /// Lines that `release()` says first (the choice, the invite), then what comes meanwhile.
    init(first: [String]) { held = Mutex(first) }

    /// Says `line`, or holds it until `release()`.
    func say(_ line: String) {
        let said = held.withLock { held -> Bool in
            guard held != nil else { return true }
            held?.append(line)
            return false
        }
        if said { StatusArea.shared.printAbove(line, descriptor: 2) }
    }

    /// Says what was held, in order, and every line from now on at once.
    func release() {
        let lines = held.withLock { held in
            defer { held = nil }
            return held ?? []
        }
        for line in lines { StatusArea.shared.printAbove(line) }
    }
}
