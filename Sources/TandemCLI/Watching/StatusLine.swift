import Synchronization
import TandemClock
import Foundation
import Tandem
import TandemMedia
import TandemPlayback

/// The line a person watching at a terminal sees: play state and position, who did what last,
/// the rate, the sound's level once moved, who is there and in what state, then the queue, the latency offset, the measured
/// sync error and the clock's error bound. Each field has a priority: at a narrow terminal the
/// least useful go first (`TerminalText.fitting`), and the line is cut, never wrapped.
enum StatusLine {
    /// A field and how much it matters when the terminal is narrow.
    typealias Field = (text: String, priority: Int)

    /// The priorities, most useful first.
    enum Priority {
        static let position = 100
        static let relay = 95
        static let lastChange = 90
        static let rate = 85
        static let participants = 80
        static let off = 70
        static let sound = 65
        static let queue = 60
        static let latency = 50
        static let sync = 40
        static let clock = 30
    }

    /// The fields of the line, in the order they are shown.
    static func fields(player: HeadlessPlayer, coordinator: PlaybackCoordinator, session: GroupSession<WatchTogether>,
                       lastChange: String) -> [Field] {
        let local = coordinator.localClock.map { LocalInstant(nanoseconds: $0.instant().nanoseconds) }
        let core = groupCore(coordinator, atLocalTime: local)
        let timeline = core.timeline
        // The timeline runs on past the end of the item; the position shown stops there.
        let end = player.info.duration.map { Int64($0 * 1e9) } ?? .max
        let position = min((coordinator.expectedItemTime(atLocalTime: local) ?? timeline.anchorMediaTime).nanoseconds, end)
        let duration = player.info.duration.map { " / " + clock(seconds: $0) } ?? ""
        let symbol = timeline.rate > 0 ? "▶" : (core.isWaiting ? "⏳" : "⏸")
        var parts: [Field] = [("\(symbol) \(clock(seconds: Double(max(0, position)) / 1e9))\(duration)", Priority.position)]
        if case .unavailable(let reason) = session.relayAvailability {
            // Said before anything else but the position: nothing anyone presses takes effect now.
            let text = reason == RelayAvailability.reconnecting ? "reconnecting…" : "relay unavailable: \(TerminalText.sanitized(reason))"
            parts.append((text, Priority.relay))
        }
        if !lastChange.isEmpty { parts.append((TerminalText.sanitized(lastChange), Priority.lastChange)) }
        parts.append((String(format: "%.2fx", timeline.rate), Priority.rate))
        // The sound's level once a person moved it (9, 0, m), as mpv shows its own.
        if player.isMuted {
            parts.append(("muted", Priority.sound))
        } else if player.volume != HeadlessPlayer.Options().volume {
            parts.append(("vol \(player.volume)%", Priority.sound))
        }
        let active = session.activeParticipants
        let away = session.awayParticipants
        let names = active.sorted { $0.displayName < $1.displayName }.map { participant -> String in
            var suspended = core.suspensions.filter { $0.participant == participant.id }.map(suspensionLabel)
            if away.contains(participant) { suspended.insert("away", at: 0) }
            // Names are the peers' own choice: shown without their control characters.
            // Operators are marked as IRC marks them: "@ana".
            let name = (session.roles.isOperator(participant.id) ? "@" : "") + TerminalText.sanitized(participant.name(among: active))
            return suspended.isEmpty ? name : "\(name) (\(suspended.joined(separator: ", ")))"
        }
        parts.append((names.joined(separator: ", "), Priority.participants))
        if let local, let status = coordinator.clockStatus(atLocalTime: local) {
            // The offset itself is the session clock's epoch, meaningless to a person: its error is not.
            parts.append((String(format: "clock ±%.2f ms", status.errorBound.seconds * 1e3), Priority.clock))
            // How far the player's own timeline is from the shared one now: scheduling aside,
            // this is the sync error of this participant.
            if timeline.rate > 0, let expected = coordinator.expectedItemTime(atLocalTime: local),
               let raw = coordinator.localClock?.hostInstant(atLocal: local) {
                parts.append((String(format: "sync %.2f ms", (player.itemTime(atHostTime: raw) - expected).seconds * 1e3), Priority.sync))
            }
        }
        return parts
    }

    /// A suspension beside its participant's name: its reason, and "not waited for" once it does
    /// not hold the group (its hold expired, or the group plays through it).
    static func suspensionLabel(_ suspension: CoordinationCore.Suspension) -> String {
        let reason = TerminalText.sanitized(suspension.reason.rawValue)
        return suspension.holdsGroup ? reason : "\(reason), not waited for"
    }

    /// The group as it stands now: past the end of an item it has moved on to the next (or
    /// paused at the end), though the replicated core settles that only at its next record.
    static func groupCore(_ coordinator: PlaybackCoordinator, atLocalTime local: LocalInstant?) -> CoordinationCore {
        guard let local, let now = coordinator.sessionTime(atLocalTime: local) else { return coordinator.core }
        return coordinator.core(at: now)
    }

    private static func clock(seconds: Double) -> String {
        let total = Int(seconds)
        return String(format: "%d:%02d.%d", total / 60, total % 60, Int((seconds - Double(total)) * 10))
    }

    /// "Ben off the group", "Ben, Cy off the group": the others whose own health reports say they
    /// are further from the group than `HealthReport.offThreshold`, or stalled; nil for none.
    static func offText(_ names: [String]) -> String? {
        guard !names.isEmpty else { return nil }
        let shown = names.prefix(3).joined(separator: ", ") + (names.count > 3 ? " +\(names.count - 3)" : "")
        return "\(shown) off the group"
    }
}

/// Who draws the status line, to draw it now: the status loop draws it every 250 ms, and the
/// printer of events when one changes what it shows (a participant came or went), so that the
/// line never names someone a moment after the event said they left. Draws are serialised.
final class StatusRefresh: Sendable {
    private let drawing = Mutex<Drawing?>(nil)

    /// From now on `draw` draws the line.
    func start(_ draw: @escaping @Sendable () -> Void) { drawing.withLock { $0 = Drawing(draw: draw) } }

    /// Draws nothing more.
    func stop() { drawing.withLock { $0 = nil } }

    /// Draws the line now, if the loop has started and not stopped.
    func draw() { drawing.withLock { $0?.draw() } }

    /// Who draws the line.
    /// Held in a struct: a bare closure held by the generic `Mutex` is stored in its generic
    /// form, and every access under the lock wraps it in a conversion each way and writes it
    /// back, one closure deeper each time, until a call overflows the stack.
    private struct Drawing: Sendable {
        let draw: @Sendable () -> Void
    }

    /// Draws the line now (an event changed it).
    func refresh() { draw() }
}
