import Foundation
import TandemWire

/// Cluster mode's pacing: a local participant's outbox goes to its connection a window at a
/// time when much waits (a journal load, a resumption), as the single relay sends loads, so
/// that nothing is queued whole at the relay's output cap. The outbox holds every frame, numbered
/// alike on every relay; what is paced is only what this relay writes.
extension RelayCore {
    /// Paces `key`'s frames to `connection` from `sequence` on: those within a window
    /// (`loadWindowBytes`) go now (the caller sends them), the rest wait for the connection to
    /// drain. Returns the request to hear of the drain when some wait.
    mutating func clusterMarkBacklog(_ key: ParticipantKey, on connection: RelayConnectionID, from sequence: UInt64) -> [RelayDirective] {
        guard let pending = sessions[key.session]?.participants[key.participant]?.outbox.pending else { return [] }
        var budget = max(configuration.loadWindowBytes, 1)
        var next: UInt64?
        for frame in pending {
            guard let number = frame.sequence, number >= sequence else { continue }
            if budget <= 0 {
                next = number
                break
            }
            budget -= max(frame.payloadSize, 1)
        }
        cluster?.backlog[key] = next
        return next == nil ? [] : [.notifyWhenDrained(connection)]
    }

    /// Drops the frames `directives` send to paced connections beyond what they have been sent:
    /// they wait in the outbox, and go in order as the connection drains.
    func clusterPaced(_ directives: [RelayDirective]) -> [RelayDirective] {
        guard let backlog = cluster?.backlog, !backlog.isEmpty else { return directives }
        return directives.filter { directive in
            guard case let .send(connection, frame) = directive, let number = frame.sequence,
                  case let .joined(session, participant)? = connections[connection]?.phase,
                  let next = backlog[ParticipantKey(session: session, participant: participant)] else { return true }
            return number < next
        }
    }

    /// `connection` drained below the low-water mark: the next window of its participant's
    /// paced frames.
    mutating func clusterDrained(_ connection: RelayConnectionID) -> [RelayDirective] {
        guard case let .joined(session, participant)? = connections[connection]?.phase else { return [] }
        let key = ParticipantKey(session: session, participant: participant)
        guard let from = cluster?.backlog[key], sessions[session]?.participants[participant]?.connection == connection,
              let pending = sessions[session]?.participants[participant]?.outbox.pending else { return [] }
        let more = clusterMarkBacklog(key, on: connection, from: from)
        let until = cluster?.backlog[key] ?? .max
        let window: [RelayDirective] = pending.compactMap { frame in
            guard let number = frame.sequence, number >= from, number < until else { return nil }
            return .send(connection, frame)
        }
        return window + more
    }

    /// A load in cluster mode goes into the outbox whole when applied, on every relay alike, so
    /// that the participant's sequence numbers stay the same everywhere (not paced by its
    /// connection's draining, which only its own relay sees). Its own relay sends it a window
    /// at a time, as the single relay does (`clusterMarkBacklog`): never queued whole.
    mutating func clusterLoad(_ id: UUID, request: UInt64, for key: ParticipantKey) -> [RelayDirective] {
        guard let data = sessions[key.session]?.attachments[id]?.data else {
            return outcome(to: key, request: request, RelayFault(.attachmentNotFound, id.uuidString))
        }
        let first = sessions[key.session]?.participants[key.participant]?.outbox.nextSequence ?? 1
        var directives: [RelayDirective] = []
        var offset = 0
        while offset < data.count {
            let end = min(offset + RelayWireLimits.attachmentChunkSize, data.count)
            let piece = data[offset..<end]
            directives += broadcast(in: key.session, to: [key.participant]) { .loadChunk(sequence: $0, request: request, data: piece) }
            offset = end
        }
        directives += outcome(to: key, request: request, nil)
        // Already paced (an earlier load still draining): it follows that one.
        guard let local = sessions[key.session]?.participants[key.participant]?.connection, cluster?.backlog[key] == nil,
              data.count > configuration.loadWindowBytes else { return directives }
        return directives + clusterMarkBacklog(key, on: local, from: first)
    }
}
