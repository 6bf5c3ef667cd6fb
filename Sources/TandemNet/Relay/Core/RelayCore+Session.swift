import Foundation
import TandemWire

extension RelayCore {
    /// A frame from an admitted participant.
    mutating func handle(_ frame: RelayFrame, from key: ParticipantKey, on connection: RelayConnectionID, at now: Int64) -> [RelayDirective] {
        guard let participant = sessions[key.session]?.participants[key.participant] else { return [] }
        guard let sequence = frame.sequence else {
            switch frame {
            case let .ack(through):
                sessions[key.session]?.participants[key.participant]?.outbox.acknowledge(through: through)
                return []
            case let .ping(value):
                return [.send(connection, .pong(value))]
            case let .pong(value):
                measure(value, from: key, on: connection, at: now)
                return []
            default:
                return drop(connection, fault: RelayFault(.protocolViolation, "frame \(frame.typeName) after joining"), at: now)
            }
        }
        // A frame sent again after a resumption that had already arrived: drop it.
        if sequence <= participant.received { return [] }
        guard sequence == participant.received + 1 else {
            return drop(connection, fault: RelayFault(.protocolViolation, "sequence \(sequence) after \(participant.received)"), at: now)
        }
        sessions[key.session]?.participants[key.participant]?.received = sequence
        var directives = route(frame, sequence: sequence, from: key, on: connection, at: now)
        // Acknowledge promptly under load, so that the sender's retransmission buffer stays small;
        // the tick acknowledges the rest.
        if let updated = sessions[key.session]?.participants[key.participant], updated.connection == connection,
           updated.received - updated.acknowledged >= 64 {
            sessions[key.session]?.participants[key.participant]?.acknowledged = updated.received
            directives.append(.send(connection, .ack(updated.received)))
        }
        return directives
    }

    private mutating func route(_ frame: RelayFrame, sequence: UInt64, from key: ParticipantKey,
                                on connection: RelayConnectionID, at now: Int64) -> [RelayDirective] {
        guard let session = sessions[key.session] else { return [] }
        switch frame {
        case let .message(_, recipients, reliable, body):
            let targets = recipientIDs(recipients, in: session, excluding: key.participant)
            return broadcast(in: key.session, to: targets) {
                .delivery(sequence: $0, sender: key.participant, reliable: reliable, body: body)
            }
        case let .attachmentAdd(_, entry):
            return beginUpload(entry, request: sequence, from: key, on: connection, at: now)
        case let .attachmentChunk(_, id, data):
            return continueUpload(id, data, from: key, on: connection, at: now)
        case let .attachmentRemove(_, id):
            guard let attachment = session.attachments[id] else {
                return outcome(to: key, request: sequence, RelayFault(.attachmentNotFound, id.uuidString))
            }
            sessions[key.session]?.attachments[id] = nil
            sessions[key.session]?.attachmentOrder.removeAll { $0 == id }
            sessions[key.session]?.journalBytes -= attachment.entry.size
            return broadcast(in: key.session, to: session.order) { .attachmentRemoved(sequence: $0, id: id) }
                + outcome(to: key, request: sequence, nil)
        case let .loadRequest(_, id):
            guard let attachment = session.attachments[id] else {
                return outcome(to: key, request: sequence, RelayFault(.attachmentNotFound, id.uuidString))
            }
            var directives: [RelayDirective] = []
            var offset = 0
            // Slices share the journal's buffer: a load costs no copy until the shell writes it.
            while offset < attachment.data.count {
                let end = min(offset + RelayWireLimits.attachmentChunkSize, attachment.data.count)
                let data = attachment.data[offset..<end]
                directives += broadcast(in: key.session, to: [key.participant]) { .loadChunk(sequence: $0, request: sequence, data: data) }
                offset = end
            }
            return directives + outcome(to: key, request: sequence, nil)
        case .leave:
            // Acknowledge the leave so the participant knows it arrived, then let it go.
            return [.send(connection, .ack(sequence))] + remove(key)
        case let .end(_, reason):
            return end(key.session, by: key.participant, reason: reason, at: now)
        case let .proposal(_, body):
            return order(body, from: key, at: now)
        default:
            return drop(connection, fault: RelayFault(.protocolViolation, "frame \(frame.typeName) is not for the relay"), at: now)
        }
    }

    private mutating func outcome(to key: ParticipantKey, request: UInt64, _ fault: RelayFault?) -> [RelayDirective] {
        broadcast(in: key.session, to: [key.participant]) { .outcome(sequence: $0, request: request, fault: fault) }
    }

    private mutating func beginUpload(_ entry: RelayAttachmentEntry, request: UInt64, from key: ParticipantKey,
                                      on connection: RelayConnectionID, at now: Int64) -> [RelayDirective] {
        guard let session = sessions[key.session] else { return [] }
        guard session.participants[key.participant]?.upload == nil else {
            return drop(connection, fault: RelayFault(.protocolViolation, "a second attachment before the first was complete"), at: now)
        }
        var refusal: RelayFault?
        if entry.size > RelayLimits.maximumAttachment {
            refusal = RelayFault(.tooLarge, "attachment of \(entry.size) bytes is over the limit of \(RelayLimits.maximumAttachment) bytes")
        } else if entry.metadata.count > RelayLimits.maximumMetadata {
            refusal = RelayFault(.tooLarge, "attachment metadata of \(entry.metadata.count) bytes")
        } else if session.attachments[entry.id] != nil {
            refusal = RelayFault(.protocolViolation, "attachment \(entry.id.uuidString) already exists")
        } else if session.journalBytes + entry.size > configuration.maximumJournalBytes {
            refusal = RelayFault(.limitReached, "the journal holds \(configuration.maximumJournalBytes) bytes")
        }
        var upload = RelaySessionState.Upload(
            request: request, entry: RelayAttachmentEntry(id: entry.id, owner: key.participant, size: entry.size, metadata: entry.metadata),
            data: [], refusal: refusal)
        if refusal == nil { upload.data.reserveCapacity(entry.size) }
        sessions[key.session]?.participants[key.participant]?.upload = upload
        return entry.size == 0 ? finishUpload(from: key) : []
    }

    private mutating func continueUpload(_ id: UUID, _ data: ArraySlice<UInt8>, from key: ParticipantKey,
                                         on connection: RelayConnectionID, at now: Int64) -> [RelayDirective] {
        guard var upload = sessions[key.session]?.participants[key.participant]?.upload, upload.entry.id == id,
              upload.data.count + data.count <= upload.entry.size else {
            return drop(connection, fault: RelayFault(.protocolViolation, "attachment data that no add announced"), at: now)
        }
        // Count what arrives even when refused, so the end is found; keep nothing then.
        if upload.refusal == nil {
            upload.data.append(contentsOf: data)
        } else {
            upload.entry.size -= data.count
        }
        sessions[key.session]?.participants[key.participant]?.upload = upload
        return upload.data.count == upload.entry.size ? finishUpload(from: key) : []
    }

    private mutating func finishUpload(from key: ParticipantKey) -> [RelayDirective] {
        guard let upload = sessions[key.session]?.participants[key.participant]?.upload,
              let order = sessions[key.session]?.order else { return [] }
        sessions[key.session]?.participants[key.participant]?.upload = nil
        if let refusal = upload.refusal {
            return outcome(to: key, request: upload.request, refusal)
        }
        sessions[key.session]?.attachments[upload.entry.id] = RelaySessionState.Attachment(entry: upload.entry, data: upload.data)
        sessions[key.session]?.attachmentOrder.append(upload.entry.id)
        sessions[key.session]?.journalBytes += upload.entry.size
        return broadcast(in: key.session, to: order) { .attachmentAdded(sequence: $0, entry: upload.entry) }
            + outcome(to: key, request: upload.request, nil)
    }

    /// Ends a session: everyone hears why, every connection closes, the session is gone.
    mutating func end(_ sessionID: UUID, by participant: UUID, reason: String, at now: Int64) -> [RelayDirective] {
        guard let session = sessions[sessionID] else { return [] }
        var directives = broadcast(in: sessionID, to: session.order) { .ended(sequence: $0, by: participant, reason: reason) }
        for member in session.participants.values {
            tokens[member.token] = nil
            directives.append(.forgetToken(member.token))
            if let connection = member.connection {
                connections[connection]?.phase = .closing
                directives.append(.close(connection))
            }
        }
        sessions[sessionID] = nil
        endedSessions[sessionID] = EndedSession(by: participant, reason: reason, at: now)
        return directives
    }
}
