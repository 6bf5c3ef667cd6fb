import Synchronization
import TandemClock
import Foundation
import Tandem
import TandemMedia
import TandemPlayback

/// The line a person watching at a terminal sees: position, rate, who is there and in what state,
/// the clock's offset and error bound, the measured sync error, and who did what last.
enum StatusLine {
    static func text(player: HeadlessPlayer, coordinator: PlaybackCoordinator, session: GroupSession<WatchTogether>,
                     lastChange: String) -> String {
        let local = coordinator.localClock.map { LocalInstant(nanoseconds: $0.now()) }
        let core = groupCore(coordinator, atLocalTime: local)
        let timeline = core.timeline
        // The timeline runs on past the end of the item; the position shown stops there.
        let end = player.info.duration.map { Int64($0 * 1e9) } ?? .max
        let position = min((coordinator.expectedItemTime(atLocalTime: local) ?? timeline.anchorMediaTime).nanoseconds, end)
        let duration = player.info.duration.map { " / " + clock(seconds: $0) } ?? ""
        let symbol = timeline.rate > 0 ? "▶" : (core.isWaiting ? "⏳" : "⏸")
        var parts = ["\(symbol) \(clock(seconds: Double(max(0, position)) / 1e9))\(duration)", String(format: "%.2fx", timeline.rate)]
        let active = session.activeParticipants
        let away = session.awayParticipants
        let names = active.sorted { $0.displayName < $1.displayName }.map { participant -> String in
            var suspended = core.suspensions.filter { $0.participant == participant.id }.map { TerminalText.sanitized($0.reason.rawValue) }
            if away.contains(participant) { suspended.insert("away", at: 0) }
            // Names are the peers' own choice: shown without their control characters.
            let name = TerminalText.sanitized(participant.name(among: active))
            return suspended.isEmpty ? name : "\(name) (\(suspended.joined(separator: ", ")))"
        }
        parts.append(names.joined(separator: ", "))
        if let local, let status = coordinator.clockStatus(atLocalTime: local) {
            parts.append(String(format: "clock %+.3f s ±%.2f ms", status.offset.seconds, status.errorBound.seconds * 1e3))
            // How far the player's own timeline is from the shared one now: scheduling aside,
            // this is the sync error of this participant.
            if timeline.rate > 0, let expected = coordinator.expectedItemTime(atLocalTime: local),
               let raw = coordinator.localClock?.monotonicTime(atLocal: local.nanoseconds) {
                parts.append(String(format: "sync %.2f ms",
                                    Double(player.mediaTime(atLocalTime: raw).saturatingSubtracting(expected.nanoseconds)) / 1e6))
            }
        }
        if !lastChange.isEmpty { parts.append(TerminalText.sanitized(lastChange)) }
        return parts.joined(separator: "  ")
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
}

/// Who draws the status line, to draw it now: the status loop draws it every 250 ms, and the
/// printer of events when one changes what it shows (a participant came or went), so that the
/// line never names someone a moment after the event said they left. Draws are serialised.
final class StatusRefresh: Sendable {
    private let drawing = Mutex<(@Sendable () -> Void)?>(nil)

    /// From now on `draw` draws the line.
    func start(_ draw: @escaping @Sendable () -> Void) { drawing.withLock { $0 = draw } }

    /// Draws nothing more.
    func stop() { drawing.withLock { $0 = nil } }

    /// Draws the line now, if the loop has started and not stopped.
    func draw() { drawing.withLock { $0?() } }

    /// Draws the line now (an event changed it).
    func refresh() { draw() }
}
