import Foundation
import Tandem
import TandemClock
import TandemPlayback

/// The group's health as this participant knows it (`GroupHealth`): what the `h` key shows.
extension WatchParty {
    /// A snapshot of the group's health now; nil before the watch has begun.
    public func health() -> GroupHealth? {
        guard let watching = watching.withLock({ $0 }) else { return nil }
        let coordinator = watching.coordinator
        let local = coordinator.localClock.map { LocalInstant(nanoseconds: $0.now()) }
        let now = local.flatMap { coordinator.sessionTime(atLocalTime: $0) }
        let core = now.map { coordinator.core(at: $0) } ?? coordinator.core
        let active = session.activeParticipants.union([session.localParticipant])
        let away = session.awayParticipants
        let members = active.map { participant in
            GroupHealth.Member(
                name: participant.name(among: active), isLocal: participant == session.localParticipant,
                suspensions: core.suspensions.filter { $0.participant == participant.id }
                    .map { GroupHealth.Suspension(reason: $0.reason.rawValue, holdsGroup: $0.holdsGroup) },
                isAway: away.contains(participant), isMismatched: core.isMismatched(participant.id),
                isPrerolling: core.awaitsPreroll(from: participant.id), hasReported: core.participants[participant.id] != nil)
        }
        let playing = core.timeline.rate > 0
        var syncError: TimeSpan?
        if playing, let local, let expected = coordinator.expectedItemTime(atLocalTime: local) {
            if let player = watching.player, let raw = coordinator.localClock?.monotonicTime(atLocal: local.nanoseconds) {
                syncError = TimeSpan(nanoseconds: player.mediaTime(atLocalTime: raw).saturatingSubtracting(expected.nanoseconds))
            } else if let mpv = watching.mpv, let last = mpv.statistics.lastError {
                // mpv's clock is read every 250 ms: its last reading against the timeline.
                syncError = TimeSpan(nanoseconds: last)
            }
        }
        return GroupHealth(members: members, isPlaying: playing, syncError: syncError,
                           clockErrorBound: local.flatMap { coordinator.clockStatus(atLocalTime: $0)?.errorBound })
    }
}
