import Foundation
import Tandem
import TandemParty
import TandemPlayback

/// Prints what happens in a watched session: one JSON object a line (`--events json`) or one
/// readable line each.
final class EventPrinter: Sendable {
    let json: Bool

    init(json: Bool) { self.json = json }

    /// Clears the status line first when standard output is a terminal.
    private static let overStatusLine = isatty(1) != 0 ? "\r\u{1B}[K" : ""

    /// Prints `event`: its JSON line (`--events json`) or its readable line, whose names, reasons
    /// and item names (which come from peers) reach the terminal without a control character.
    func emit(_ event: WatchPartyEvent) {
        if json {
            guard let line = event.jsonLine else { return }
            if StatusArea.shared.isActive { StatusArea.shared.printAbove(line) } else { printOutput(line) }
        } else {
            let line = "\(event.name) \(TerminalText.sanitized(event.details))"
            // At a terminal, over the status line (and the chat prompt), which are drawn again after.
            if StatusArea.shared.isActive {
                StatusArea.shared.printAbove(line)
            } else {
                printOutput("\(EventPrinter.overStatusLine)\(line)")
            }
        }
    }

    func report<Activity: GroupActivity>(_ event: PlaybackCoordinator.Event, session: GroupSession<Activity>) {
        func name(_ id: UUID) -> String {
            let active = session.activeParticipants
            return (active.first { $0.id == id } ?? session.participant(identifiedBy: id))?.name(among: active) ?? id.uuidString
        }
        emit(WatchPartyEvent(event, naming: name))
    }

    func followParticipants<Activity: GroupActivity>(_ session: GroupSession<Activity>) async {
        // Bodies dropped on arrival are reported alongside, for as long as participants are followed.
        let rejections = Task { await followRejections(session) }
        let away = Task { await followAway(session) }
        defer {
            rejections.cancel()
            away.cancel()
        }
        var known: Set<Participant> = []
        for await participants in session.$activeParticipants.values {
            // The set empties when this participant's session ends: that is not the others leaving.
            if case .invalidated = session.state { return }
            let others = participants.filter { $0 != session.localParticipant }
            for joined in others.subtracting(known) {
                emit(.participantJoined(.init(name: joined.name(among: participants))))
            }
            for left in known.subtracting(others) {
                emit(.participantLeft(.init(name: left.name(among: known))))
            }
            known = others
        }
    }

    /// `away` when the relay saw another participant's connection closed by its peer (it departs
    /// 3 s later unless it resumes), `back` when it resumed; a departure while away is reported
    /// as `participant-left` alone.
    func followAway<Activity: GroupActivity>(_ session: GroupSession<Activity>) async {
        var known: Set<Participant> = []
        for await away in session.$awayParticipants.values {
            if case .invalidated = session.state { return }
            let active = session.activeParticipants
            for gone in away.subtracting(known) {
                emit(.away(.init(participant: gone.id.uuidString, name: gone.name(among: active))))
            }
            for back in known.subtracting(away) where active.contains(back) {
                emit(.back(.init(participant: back.id.uuidString, name: back.name(among: active))))
            }
            known = away
        }
    }

    /// One `rejected` event for each body the session dropped on arrival: why, its signer or
    /// whom the relay named (an identity), and what it arrived as.
    func followRejections<Activity: GroupActivity>(_ session: GroupSession<Activity>) async {
        for await rejection in session.rejections {
            emit(.bodyRejected(.init(reason: rejection.reason.rawValue, sender: rejection.sender?.uuidString ?? "unknown",
                                     path: rejection.path)))
        }
    }
}
