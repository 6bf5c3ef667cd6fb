import Foundation
import TandemWire

/// The relay-wide memory budget shared fairly between sources and sessions (max-min fairness):
/// at the limit, the largest holder gives way first, and a newcomer holding nothing is never
/// the one refused.
///
/// A source holds what the sessions it created hold (`RelaySessionState.accountedBytes`: the
/// journal with its reservations, the ordered history, the outboxes). Its fair share is the
/// limit divided among the sources holding anything, the asking one included. At the limit:
/// - a create or a join is let in when the asking source, and the session joined, hold less
///   than that share and another holds more (a join costs little; what it then sends is
///   checked as it comes);
/// - an upload that does not fit makes room when the uploading session's source stays within
///   its share with it: the largest holder above its share gives way (`shed(toFit:sparing:at:)`);
/// - over the limit (`onOverBudget(at:)`, once the shell has shed the queues of those who do
///   not read), the largest holder gives way until the budget fits.
///
/// What gives way, in turn, in the largest source's largest session: its uploads in progress
/// (refused, their reservations released), its newest attachments (removed, and everyone in it
/// told), then, when nobody in it has sent anything for `idleSessionAge`, the session itself.
/// Cluster mode sheds nothing: there the journal is decided as the log is applied, alike on every
/// relay, and one relay's budget may not make replicas disagree.
extension RelayCore {
    /// How a source (and a session) stands against its fair share of the memory budget.
    struct FairShare {
        /// The share: the limit divided among the sources holding anything, the asker included.
        var share: Int
        /// What the asking source holds.
        var sourceBytes: Int
        /// What the session asked about holds (0 when none).
        var sessionBytes: Int
        /// What the largest holder holds.
        var largest: Int

        /// Whether the asker may take more at the limit: it and its session hold less than the
        /// share, and someone holds more (who gives way). When nobody does, what fills the
        /// budget is no source's (the shell's queues, the process's own footprint) and
        /// nobody new is let in.
        var admitsMore: Bool { sourceBytes < share && sessionBytes < share && largest > share }
    }

    /// How the source keyed `sourceKey` (nil: none) and `session` stand against their fair share.
    func fairShare(of sourceKey: String?, session: UUID?, adding bytes: Int = 0) -> FairShare {
        let held = bytesHeldBySource
        let key = sourceKey ?? ""
        let holders = held.count + (held[key] == nil ? 1 : 0)
        return FairShare(share: configuration.memoryLimit / max(holders, 1),
                         sourceBytes: held[key, default: 0] + bytes,
                         sessionBytes: (session.flatMap { sessions[$0]?.accountedBytes } ?? 0) + bytes,
                         largest: held.values.max() ?? 0)
    }

    /// The accounted budget is over the limit (the shell asks after each pass that may have
    /// grown it): the largest holders give way until it fits, or until nothing is left that
    /// may be shed (the shell then sheds the output queues of those who do not read).
    public mutating func onOverBudget(at now: Int64) -> [RelayDirective] {
        guard budgetBytes > configuration.memoryLimit else { return [] }
        if let mark = unshedableAt, accountedBytes <= mark { return [] }
        let directives = shed(toFit: 0, sparing: nil, at: now)
        unshedableAt = budgetBytes > configuration.memoryLimit ? accountedBytes : nil
        return directives
    }

    /// Makes room for `bytes` more within the accounted budget by shedding from the largest
    /// holders, never from the source keyed `spared`; returns what tells the members of the
    /// sessions shed from. Stops when it fits or nothing is left to shed. Making room for a
    /// source (`spared` set) sheds only from those above their fair share; over the budget
    /// (`spared` nil) the largest gives way whatever its share, for someone must.
    mutating func shed(toFit bytes: Int, sparing spared: String?, at now: Int64) -> [RelayDirective] {
        guard cluster == nil else { return [] }
        var directives: [RelayDirective] = []
        // Bounded: each step sheds one upload, one attachment or one session.
        for _ in 0..<256 where budgetBytes + bytes > configuration.memoryLimit {
            let held = bytesHeldBySource
            let share = configuration.memoryLimit / max(held.count + (spared.map { held[$0] == nil ? 1 : 0 } ?? 0), 1)
            var shedSomething = false
            for (key, sourceBytes) in held.sorted(by: { $0.value > $1.value }) where key != spared && (spared == nil || sourceBytes > share) {
                // By identity, so that no session is copied to be looked at.
                let candidates = sessions.keys.filter { (sessions[$0]?.creatorAddress ?? "") == key && (sessions[$0]?.accountedBytes ?? 0) > 0 }
                    .sorted { (sessions[$0]?.accountedBytes ?? 0) > (sessions[$1]?.accountedBytes ?? 0) }
                for session in candidates {
                    if let shed = shedOne(from: session, at: now) {
                        directives += shed
                        shedSomething = true
                        break
                    }
                }
                if shedSomething { break }
            }
            if !shedSomething { break }
        }
        return directives
    }

    /// Sheds one thing from `sessionID`: its largest upload in progress, else its newest
    /// attachment, else the session itself when idle; nil when there is nothing to shed.
    private mutating func shedOne(from sessionID: UUID, at now: Int64) -> [RelayDirective]? {
        guard let session = sessions[sessionID] else { return nil }
        let fault = RelayFault(.limitReached, "shed at the relay's memory limit of \(configuration.memoryLimit) bytes: the session holds more than its share")
        if let (uploader, reserved) = session.participants.compactMap({ id, participant in
            participant.upload.flatMap { $0.refusal == nil && $0.reserved > 0 ? (id, $0.reserved) : nil }
        }).max(by: { $0.1 < $1.1 }) {
            // Refused from here on: what arrives is counted and dropped, and the outcome says why.
            // What arrived so far counts as arrived, as for an upload refused from the start.
            let arrived = sessions[sessionID]?.participants[uploader]?.upload?.data.count ?? 0
            sessions[sessionID]?.participants[uploader]?.upload?.refusal = fault
            sessions[sessionID]?.participants[uploader]?.upload?.entry.size -= arrived
            sessions[sessionID]?.participants[uploader]?.upload?.data = []
            sessions[sessionID]?.participants[uploader]?.upload?.reserved = 0
            sessions[sessionID]?.journalBytes -= reserved
            account(sessionID, -reserved)
            limitCounts.shed += 1
            return []
        }
        if let newest = session.attachmentOrder.last, let entry = session.attachments[newest]?.entry {
            sessions[sessionID]?.attachments[newest] = nil
            sessions[sessionID]?.attachmentOrder.removeLast()
            let held = RelayCore.journalCost(of: entry)
            sessions[sessionID]?.journalBytes -= held
            account(sessionID, -held)
            limitCounts.shed += 1
            return broadcast(in: sessionID, to: session.order, at: now) { .attachmentRemoved(sequence: $0, id: newest) }
        }
        if now - session.lastRouted >= configuration.idleSessionAge {
            limitCounts.shed += 1
            let owner = session.order.first ?? UUID()
            return end(sessionID, by: owner, reason: fault.text, at: now)
        }
        return nil
    }
}
