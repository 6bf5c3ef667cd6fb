import Foundation
import TandemWire

/// Cluster mode's availability: a relay that lost NATS (for `clusterLossHoldOff`), or
/// whose session's log takes none of its entries for `clusterStallTimeout`, tells the session's
/// participants connected to it (`RelayNotice.unavailable`), and tells them again when it is back. Nothing else
/// changes meanwhile: admissions are refused as unavailable, and frames already taken stay on
/// their way to the log (retried for 15 s), so that proposals take effect late, in order.
extension RelayCore {
    /// How long NATS may be lost before the participants hear of it: a failover to another node
    /// of the NATS cluster takes milliseconds, and is not worth a word.
    public static let clusterLossHoldOff: Int64 = 500_000_000

    /// NATS went away (`false`) or came back: while away, nobody new is admitted, with the
    /// fault `unavailable`; once it has been away for `clusterLossHoldOff` (the next tick), every
    /// participant connected here is told (`RelayNotice`), and told again when it is back (but
    /// for sessions with entries of this relay's on their way: they are told once their log
    /// takes one).
    /// Back, every relay's silence is counted from `now`: while this relay was cut off it could
    /// not hear them.
    public mutating func setClusterAvailable(_ available: Bool, at now: Int64) -> [RelayDirective] {
        guard let was = cluster?.available, was != available else { return [] }
        cluster?.available = available
        guard available else {
            cluster?.lostAt = now
            return []
        }
        cluster?.lostAt = nil
        // A session with entries on their way is available once its log takes one (its stream
        // may still be electing a leader), not at once.
        if cluster?.lossTold == true, let outstanding = cluster?.outstanding.keys {
            for session in outstanding { cluster?.stalled.insert(session) }
        }
        cluster?.lossTold = false
        if let heard = cluster?.relaysHeard {
            for relay in heard.keys { cluster?.relaysHeard[relay] = now }
        }
        return clusterReconcileAll()
    }

    /// Whether `session`'s participants here are told the relay cannot order anything now.
    public func isClusterUnavailable(for session: UUID) -> Bool {
        guard let cluster else { return false }
        return cluster.lossTold || cluster.stalled.contains(session)
    }

    /// Tells every session whose participants' view is out of date.
    private mutating func clusterReconcileAll() -> [RelayDirective] {
        var directives: [RelayDirective] = []
        for session in sessions.keys { directives += clusterReconcile(session) }
        return directives
    }

    /// Tells `session`'s participants here whether the relay can order its frames, if that
    /// changed since they were last told.
    mutating func clusterReconcile(_ session: UUID) -> [RelayDirective] {
        guard let cluster else { return [] }
        let unavailable = isClusterUnavailable(for: session)
        guard unavailable != cluster.told.contains(session) else { return [] }
        if unavailable {
            self.cluster?.told.insert(session)
        } else {
            self.cluster?.told.remove(session)
        }
        let seconds = Double(RelayCore.clusterStallTimeout) / 1e9
        let text = !unavailable ? "the relay cluster is back"
            : cluster.lossTold ? "the relay cluster is unavailable (NATS cannot be reached)"
            : "the relay cluster is unavailable (the session's log has taken nothing for \(seconds) s)"
        return clusterNotice(session, available: !unavailable, text)
    }

    /// The notice to every participant of `session` connected here.
    func clusterNotice(_ session: UUID, available: Bool, _ text: String) -> [RelayDirective] {
        guard let participants = sessions[session]?.participants else { return [] }
        let notice = RelayNotice(available ? .available : .unavailable, text)
        return participants.values.compactMap { participant in
            guard let connection = participant.connection, case .joined? = connections[connection]?.phase else { return nil }
            return .send(connection, .notice(notice))
        }
    }

    /// This relay's entry of `session` was applied: progress. A stalled session whose log takes
    /// entries again is available once more.
    mutating func clusterProgress(_ session: UUID, at now: Int64) -> [RelayDirective] {
        guard let outstanding = cluster?.outstanding[session] else { return [] }
        if outstanding <= 1 {
            cluster?.outstanding[session] = nil
            cluster?.progressAt[session] = nil
        } else {
            cluster?.outstanding[session] = outstanding - 1
            cluster?.progressAt[session] = now
        }
        guard cluster?.stalled.remove(session) != nil else { return [] }
        return clusterReconcile(session)
    }

    /// NATS lost for `clusterLossHoldOff`, and sessions whose log has taken none of this relay's
    /// entries for `clusterStallTimeout`: their participants here are told (every tick).
    mutating func clusterStalls(at now: Int64) -> [RelayDirective] {
        var directives: [RelayDirective] = []
        if cluster?.lossTold == false, let lost = cluster?.lostAt, now - lost >= RelayCore.clusterLossHoldOff {
            cluster?.lossTold = true
            directives += clusterReconcileAll()
        }
        guard let progress = cluster?.progressAt, !progress.isEmpty else { return directives }
        for (session, since) in progress {
            guard let since else {
                cluster?.progressAt[session] = now
                continue
            }
            guard now - since >= RelayCore.clusterStallTimeout, cluster?.stalled.insert(session).inserted == true else { continue }
            directives += clusterReconcile(session)
        }
        return directives
    }
}
