import Foundation
import Synchronization
import TandemClock
import Tandem
import TandemPlayback

/// Who comes and goes, what the coordinator did, and what the session dropped, as events.
extension WatchParty {
    /// A participant's name, as the status line names everyone (with a fingerprint when two
    /// share a name), even after it left; its identifier when it is not known.
    func name(of id: UUID) -> String {
        let active = session.activeParticipants
        return (active.first { $0.id == id } ?? session.participant(identifiedBy: id))?.name(among: active) ?? id.uuidString
    }

    /// Reports one of the coordinator's events.
    func report(_ event: PlaybackCoordinator.Event) {
        emit(WatchPartyEvent(event, naming: name(of:)))
    }

    /// `participant-joined` and `participant-left` for the others, with `away`, `back`, the
    /// bodies dropped on arrival and the relay's time jumps alongside, for as long as participants
    /// are followed.
    func followParticipants() async {
        await withDiscardingTaskGroup { followers in
            followers.addTask { await self.followRejections() }
            followers.addTask { await self.followAway() }
            followers.addTask { await self.followRelay() }
            followers.addTask { await self.followRoles() }
            followers.addTask { await self.followTimeJumps() }
            var known: Set<Participant> = []
            for await participants in session.$activeParticipants.values {
                // The set empties when this participant's session ends: that is not the others leaving.
                if case .invalidated = session.state { break }
                let others = participants.filter { $0 != session.localParticipant }
                for joined in others.subtracting(known) {
                    emit(.participantJoined(.init(name: joined.name(among: participants))))
                }
                for left in known.subtracting(others) {
                    emit(.participantLeft(.init(name: left.name(among: known))))
                }
                known = others
            }
            followers.cancelAll()
        }
    }

    /// `away` when the relay saw another participant's connection closed by its peer (it departs
    /// 3 s later unless it resumes), `back` when it resumed; a departure while away is reported
    /// as `participant-left` alone.
    private func followAway() async {
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

    /// `relay` with `state` `unavailable` when a relay of a cluster says it cannot order anything
    /// (it lost NATS), or this participant stopped hearing it, `available` when it can again (and
    /// the changes held meanwhile go out, `relayReturned()`).
    private func followRelay() async {
        var last = RelayAvailability.available
        for await availability in session.$relayAvailability.values where availability != last {
            if case .invalidated = session.state { return }
            var reason: String?
            if case .unavailable(let why) = availability { reason = why }
            emit(.relay(.init(state: availability.description, reason: reason)))
            last = availability
            // What a person pressed meanwhile goes out now, if still fresh.
            if availability == .available { relayReturned() }
        }
    }

    /// `rejected` events for the bodies the session dropped on arrival, counted per reason,
    /// signer (or whom the relay named) and path over a second (`RejectionTally`): a flood of
    /// bad records costs a line a second for each kind, not a line a record.
    private func followRejections() async {
        let shared = SharedTally()
        let report: @Sendable ([RejectionTally.Count]) -> Void = { [weak self] counts in
            for count in counts {
                self?.emit(.bodyRejected(.init(reason: count.kind.reason.rawValue, sender: count.kind.sender?.uuidString ?? "unknown",
                                               path: count.kind.path, count: count.count)))
            }
        }
        await withDiscardingTaskGroup { flusher in
            flusher.addTask {
                while !Task.isCancelled {
                    let now = SystemClock().instant()
                    let wait = shared.tally.withLock { $0.nextFlush }.map { max(.milliseconds(1), $0 - now) } ?? RejectionTally.defaultInterval
                    try? await Task.sleep(for: .nanoseconds(wait.nanoseconds))
                    report(shared.tally.withLock { $0.flush(now: SystemClock().instant()) })
                }
            }
            for await rejection in session.rejections {
                report(shared.tally.withLock { $0.record(rejection, now: SystemClock().instant()) })
            }
            flusher.cancelAll()
        }
    }
}

/// The tally that the rejections' reader and its flusher share.
private final class SharedTally: Sendable {
    let tally = Mutex(RejectionTally())
}
