import Foundation
import Synchronization
import Tandem
import TandemClock
import TandemPlayback

/// The group's health as this participant knows it (`GroupHealth`): what the `h` key shows.
extension WatchParty {
    /// A snapshot of the group's health now; nil before the watch has begun.
    public func health() -> GroupHealth? {
        guard let watching = watching.withLock({ $0 }) else { return nil }
        let coordinator = watching.coordinator
        let local = coordinator.localClock.map { LocalInstant(nanoseconds: $0.instant().nanoseconds) }
        let now = local.flatMap { coordinator.sessionTime(atLocalTime: $0) }
        let core = now.map { coordinator.core(at: $0) } ?? coordinator.core
        let active = session.activeParticipants.union([session.localParticipant])
        let away = session.awayParticipants
        let reports = recentHealthReports()
        let diverged = self.diverged.withLock { $0 }
        let members = active.map { participant in
            GroupHealth.Member(
                name: participant.name(among: active), isLocal: participant == session.localParticipant,
                suspensions: core.suspensions.filter { $0.participant == participant.id }
                    .map { GroupHealth.Suspension(reason: $0.reason.rawValue, holdsGroup: $0.holdsGroup) },
                isAway: away.contains(participant), isMismatched: core.isMismatched(participant.id),
                isPrerolling: core.awaitsPreroll(from: participant.id), hasReported: core.participants[participant.id] != nil,
                report: participant == session.localParticipant ? nil : reports[participant.id],
                hasDiverged: diverged.contains(participant.id))
        }
        let playing = core.timeline.rate > 0
        var syncError: TimeSpan?
        if playing, let local, let expected = coordinator.expectedItemTime(atLocalTime: local) {
            if let player = watching.player, let raw = coordinator.localClock?.hostInstant(atLocal: local) {
                syncError = player.itemTime(atHostTime: raw) - expected
            } else if let mpv = watching.mpv, let last = mpv.statistics.lastError {
                // mpv's clock is read every 250 ms: its last reading against the timeline.
                syncError = TimeSpan(nanoseconds: last)
            }
        }
        let chain = session.orderedChain
        return GroupHealth(members: members, isPlaying: playing, syncError: syncError,
                           clockErrorBound: local.flatMap { coordinator.clockStatus(atLocalTime: $0)?.errorBound },
                           chain: chain.map { GroupHealth.Chain(startOrder: $0.startOrder, isVouched: $0.isVouched) })
    }
}

/// Everyone's health for everyone: each participant sends its own `HealthReport` on the session's
/// unreliable path at `HealthReport.interval(participants:)`, and keeps the others' for the
/// health table, the status line and `health` events.
extension WatchParty {
    /// This participant's report now; nil before the watch has begun.
    public func ownHealthReport() -> HealthReport? {
        guard let watching = watching.withLock({ $0 }) else { return nil }
        let coordinator = watching.coordinator
        let local = coordinator.localClock.map { LocalInstant(nanoseconds: $0.instant().nanoseconds) }
        let now = local.flatMap { coordinator.sessionTime(atLocalTime: $0) }
        let core = now.map { coordinator.core(at: $0) } ?? coordinator.core
        let me = session.localParticipant.id
        let state: HealthReport.State
        var lateness: Int?
        if core.suspensions.contains(where: { $0.participant == me && $0.reason == .stallRecovery }) {
            state = .stalled
        } else if (core.isWaiting && core.intendedRate > 0) || core.awaitsPreroll(from: me) {
            state = .waiting
        } else {
            state = core.timeline.rate > 0 ? .playing : .paused
        }
        if state == .playing {
            if let recent = watching.lateness {
                lateness = recent.median(since: HostInstant.now() - .seconds(1)).map { Int($0.nanoseconds / 1_000) }
            } else if let mpv = watching.mpv, let last = mpv.statistics.lastError {
                // mpv's last reading against the timeline: ahead is early.
                lateness = Int(-last / 1_000)
            }
        }
        let bound = local.flatMap { coordinator.clockStatus(atLocalTime: $0)?.errorBound }
        let chain = session.orderedChain
        var report = HealthReport(pictureLateness: lateness, clockErrorBound: bound.map { Int($0.nanoseconds / 1_000) }, state: state,
                                  player: watching.mpv == nil ? .builtIn : .mpv, latencyOffset: latencyOffset,
                                  order: chain?.order, head: chain?.head)
        report.roundTrip = local.flatMap { coordinator.roundTripToRelay(atLocalTime: $0) }.map { Int($0.nanoseconds / 1_000) }
        if state == .playing, let player = watching.player, player.hasSoundOutput {
            report.soundLateness = player.soundStatistics.lateness.map { Int($0.nanoseconds / 1_000) }
        }
        return report
    }

    /// The others' reports that are recent enough to stand for them.
    func recentHealthReports() -> [UUID: HealthReport] {
        let lifetime = HealthReport.lifetime(participants: session.activeParticipants.count + 1)
        let oldest = ContinuousClock.now - .nanoseconds(lifetime.nanoseconds)
        return healthReports.withLock { reports in
            reports = reports.filter { $0.value.at >= oldest }
            return reports.mapValues(\.report)
        }
    }

    /// The work that sends this participant's report at its interval and hears the others', to
    /// run for as long as the watch lasts.
    func followHealth() -> @Sendable () async -> Void {
        let messenger = GroupSessionMessenger(session: session, deliveryMode: .unreliable)
        let messages = messenger.messages(of: HealthReport.self)
        let divergences = session.orderedChainDivergences()
        // Who has been found shown another history: said once a participant.
        let say = { @Sendable [self] (participant: UUID, order: UInt64) in
            guard self.diverged.withLock({ $0.insert(participant).inserted }) else { return }
            let active = self.session.activeParticipants
            let name = self.session.participant(identifiedBy: participant)?.name(among: active) ?? String(participant.uuidString.prefix(8))
            self.emit(.relayDivergence(.init(with: name, participant: participant.uuidString, order: order)))
        }
        return { [self] in
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    // A head held until this participant reached its order, or a snapshot's.
                    for await divergence in divergences { say(divergence.participant, divergence.order) }
                }
                group.addTask {
                    for await (report, context) in messages {
                        let sender = context.source
                        guard sender != self.session.localParticipant, report.isPlausible else { continue }
                        self.healthReports.withLock { $0[sender.id] = (report, ContinuousClock.now) }
                        let active = self.session.activeParticipants
                        let name = sender.name(among: active)
                        self.emit(.health(.init(from: name, participant: sender.id.uuidString, report: report)))
                        if let order = report.order, let head = report.head,
                           self.session.compareOrderedChain(order: order, head: head, from: sender) == .diverges {
                            say(sender.id, order)
                        }
                    }
                }
                group.addTask {
                    while !Task.isCancelled {
                        if let report = self.ownHealthReport() { try? await messenger.send(report) }
                        let interval = HealthReport.interval(participants: self.session.activeParticipants.count + 1)
                        try? await Task.sleep(for: .nanoseconds(interval.nanoseconds))
                    }
                }
                await group.waitForAll()
            }
        }
    }
}
