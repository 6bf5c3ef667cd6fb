import Foundation
import TandemWire

extension RelayCore {
    /// A frame from an admitted participant.
    mutating func handle(_ frame: RelayFrame, from key: ParticipantKey, on connection: RelayConnectionID, at now: Int64) -> [RelayDirective] {
        // Only the number is read: a copy of the participant alive here would make every change
        // below copy its outbox or its upload.
        guard let received = sessions[key.session]?.participants[key.participant]?.received else { return [] }
        guard let sequence = frame.sequence else {
            switch frame {
            case let .ack(through):
                guard let sent = sessions[key.session]?.participants[key.participant]?.outbox.nextSequence,
                      through < sent else {
                    limitCounts.forgedAcknowledgements += 1
                    let last = (sessions[key.session]?.participants[key.participant]?.outbox.nextSequence ?? 1) - 1
                    return drop(connection, fault: RelayFault(.protocolViolation, "acknowledged \(through), but the relay sent only \(last)"), at: now)
                }
                let (before, waiting) = (sessions[key.session]?.participants[key.participant]?.outbox.bodyBytes ?? 0,
                                         sessions[key.session]?.participants[key.participant]?.outbox.count ?? 0)
                sessions[key.session]?.participants[key.participant]?.outbox.acknowledge(through: through)
                let after = sessions[key.session]?.participants[key.participant]?.outbox.bodyBytes ?? 0
                account(key.session, after - before)
                if (sessions[key.session]?.participants[key.participant]?.outbox.count ?? 0) < waiting {
                    sessions[key.session]?.participants[key.participant]?.readingAt = now
                }
                return []
            case let .ping(value):
                // What the relay owes this participant rides on the answer, in the same write.
                guard let frame = sessions[key.session]?.participants[key.participant]?.acknowledgementIfOwed(
                    on: connection, at: now, interval: configuration.acknowledgementInterval) else { return [.send(connection, .pong(value))] }
                scheduleTick(key)
                return [.send(connection, .pong(value)), .send(connection, frame)]
            case let .pong(value):
                measure(value, from: key, on: connection, at: now)
                return []
            default:
                return drop(connection, fault: RelayFault(.protocolViolation, "frame \(frame.typeName) after joining"), at: now)
            }
        }
        // Cluster hook: the frame goes through the log.
        if cluster != nil { return clusterHandle(frame, sequence: sequence, from: key, on: connection, at: now) }
        // A frame sent again after a resumption that had already arrived: drop it.
        if sequence <= received { return [] }
        guard sequence == received + 1 else {
            return drop(connection, fault: RelayFault(.protocolViolation, "sequence \(sequence) after \(received)"), at: now)
        }
        sessions[key.session]?.participants[key.participant]?.receive(sequence, bytes: frame.payloadSize, at: now,
                                                                        interval: configuration.acknowledgementInterval)
        scheduleTick(key)
        var directives = route(frame, sequence: sequence, from: key, on: connection, at: now)
        directives += acknowledgeIfPressing(key, on: connection, at: now)
        return directives
    }

    /// An acknowledgement at once when what the relay owes `key`'s participant on `connection`
    /// is pressing (`AcknowledgementSchedule`), so that its link's retransmission buffer stays
    /// small under load; the tick, or a frame going its way, acknowledges the rest.
    mutating func acknowledgeIfPressing(_ key: ParticipantKey, on connection: RelayConnectionID, at now: Int64) -> [RelayDirective] {
        guard let frame = sessions[key.session]?.participants[key.participant]?.acknowledgementIfPressing(
            on: connection, at: now, interval: configuration.acknowledgementInterval) else { return [] }
        return [.send(connection, frame)]
    }

    mutating func route(_ frame: RelayFrame, sequence: UInt64, from key: ParticipantKey,
                                on connection: RelayConnectionID, at now: Int64) -> [RelayDirective] {
        // What routing reads of the session is taken out first; no copy of the session lives on
        // while the outboxes in it grow.
        guard let members = sessions[key.session]?.order else { return [] }
        sessions[key.session]?.lastRouted = now
        switch frame {
        case let .message(_, recipients, reliable, body):
            guard let targets = sessions[key.session].map({ recipientIDs(recipients, in: $0, excluding: key.participant) }) else { return [] }
            return broadcast(in: key.session, to: targets, at: now) {
                .delivery(sequence: $0, sender: key.participant, reliable: reliable, body: body)
            }
        case let .attachmentAdd(_, entry):
            return beginUpload(entry, request: sequence, from: key, on: connection, at: now)
        case let .attachmentChunk(_, id, data):
            return continueUpload(id, data, from: key, on: connection, at: now)
        case let .attachmentRemove(_, id):
            guard let entry = sessions[key.session]?.attachments.removeValue(forKey: id)?.entry else {
                return outcome(to: key, request: sequence, RelayFault(.attachmentNotFound, id.uuidString))
            }
            sessions[key.session]?.attachmentOrder.removeAll { $0 == id }
            let held = RelayCore.journalCost(of: entry)
            sessions[key.session]?.journalBytes -= held
            account(key.session, -held)
            return broadcast(in: key.session, to: members) { .attachmentRemoved(sequence: $0, id: id) }
                + outcome(to: key, request: sequence, nil)
        case let .loadRequest(_, id):
            guard let data = sessions[key.session]?.attachments[id]?.data else {
                return outcome(to: key, request: sequence, RelayFault(.attachmentNotFound, id.uuidString))
            }
            // The data is shared with the journal; it goes out a window at a time as the
            // connection drains, never queued whole.
            sessions[key.session]?.participants[key.participant]?.loads.append(
                RelaySessionState.LoadCursor(request: sequence, data: data))
            guard sessions[key.session]?.participants[key.participant]?.loads.count == 1 else { return [] }
            return sendLoads(to: key)
        case .leave:
            // Acknowledge the leave so the participant knows it arrived, then let it go.
            return [.send(connection, .ack(sequence))] + remove(key)
        case let .end(_, reason):
            if let session = sessions[key.session], let fault = endingRefusal(by: key.participant, in: session) {
                return drop(connection, fault: fault, at: now)
            }
            return end(key.session, by: key.participant, reason: reason, at: now)
        case let .proposal(_, retention, body):
            return order(body, retention: retention, from: key, on: connection, at: now)
        case let .authority(_, statement):
            return takeAuthority(statement, from: key, on: connection, at: now)
        case let .authoredProposal(_, statement, body):
            return orderAuthored(body, statement: statement, from: key, on: connection, at: now)
        default:
            return drop(connection, fault: RelayFault(.protocolViolation, "frame \(frame.typeName) is not for the relay"), at: now)
        }
    }

    /// The bytes an attachment holds against the journal and the budget: its data and metadata.
    static func journalCost(of entry: RelayAttachmentEntry) -> Int { entry.size + entry.metadata.count }

    /// The next window of a participant's attachment loads, then a request to hear when its
    /// connection has drained, while any is left. Nothing goes while it is disconnected: the
    /// resumption asks again.
    mutating func sendLoads(to key: ParticipantKey) -> [RelayDirective] {
        guard let connection = sessions[key.session]?.participants[key.participant]?.connection else { return [] }
        var directives: [RelayDirective] = []
        var budget = max(configuration.loadWindowBytes, 1)
        while budget > 0, let cursor = sessions[key.session]?.participants[key.participant]?.loads.first {
            if cursor.offset < cursor.data.count {
                let end = min(cursor.offset + RelayWireLimits.attachmentChunkSize, cursor.data.count)
                // Slices share the journal's buffer: a load costs no copy until the shell writes it.
                let data = cursor.data[cursor.offset..<end]
                sessions[key.session]?.participants[key.participant]?.loads[0].offset = end
                budget -= data.count
                directives += broadcast(in: key.session, to: [key.participant]) { .loadChunk(sequence: $0, request: cursor.request, data: data) }
            } else {
                sessions[key.session]?.participants[key.participant]?.loads.removeFirst()
                directives += outcome(to: key, request: cursor.request, nil)
            }
            // The participant may have been dropped as too far behind.
            guard sessions[key.session]?.participants[key.participant]?.connection == connection else { return directives }
        }
        if sessions[key.session]?.participants[key.participant]?.loads.isEmpty == false {
            directives.append(.notifyWhenDrained(connection))
        }
        return directives
    }

    mutating func outcome(to key: ParticipantKey, request: UInt64, _ fault: RelayFault?) -> [RelayDirective] {
        broadcast(in: key.session, to: [key.participant]) { .outcome(sequence: $0, request: request, fault: fault) }
    }

    private mutating func beginUpload(_ entry: RelayAttachmentEntry, request: UInt64, from key: ParticipantKey,
                                      on connection: RelayConnectionID, at now: Int64) -> [RelayDirective] {
        guard sessions[key.session] != nil else { return [] }
        guard sessions[key.session]?.participants[key.participant]?.upload == nil else {
            return drop(connection, fault: RelayFault(.protocolViolation, "a second attachment before the first was complete"), at: now)
        }
        let cost = RelayCore.journalCost(of: entry)
        let refusal = uploadRefusal(entry, cost: cost, in: key.session, at: now)
        var upload = RelaySessionState.Upload(
            request: request, entry: RelayAttachmentEntry(id: entry.id, owner: key.participant, size: entry.size, metadata: entry.metadata),
            data: [], refusal: refusal)
        if refusal == nil {
            // Reserved now, so that uploads announced together cannot all pass the caps.
            upload.reserved = cost
            upload.data.reserveCapacity(entry.size)
        }
        sessions[key.session]?.journalBytes += upload.reserved
        account(key.session, upload.reserved)
        sessions[key.session]?.participants[key.participant]?.upload = upload
        var directives = pendingShed
        pendingShed = []
        if entry.size == 0 { directives += finishUpload(from: key) }
        return directives
    }

    /// Why an upload of `entry` (reserving `cost`) into `sessionID` must be refused, or nil.
    /// Its look at the session ends when it returns, before anything is broadcast: a copy of the
    /// session alive then would make each outbox append copy the whole outbox.
    private mutating func uploadRefusal(_ entry: RelayAttachmentEntry, cost: Int, in sessionID: UUID, at now: Int64) -> RelayFault? {
        guard let session = sessions[sessionID] else { return nil }
        let uploading = session.participants.values.count { $0.upload?.refusal == nil && $0.upload != nil }
        if entry.size > RelayLimits.maximumAttachment {
            return RelayFault(.tooLarge, "attachment of \(entry.size) bytes is over the limit of \(RelayLimits.maximumAttachment) bytes")
        } else if entry.metadata.count > RelayLimits.maximumMetadata {
            return RelayFault(.tooLarge, "attachment metadata of \(entry.metadata.count) bytes")
        } else if session.attachments[entry.id] != nil {
            return RelayFault(.protocolViolation, "attachment \(entry.id.uuidString) already exists")
        } else if session.attachments.count + uploading >= configuration.maximumAttachments {
            limitCounts.journal += 1
            return RelayFault(.limitReached, "the journal holds \(configuration.maximumAttachments) attachments")
        } else if session.journalBytes + cost > configuration.maximumJournalBytes {
            limitCounts.journal += 1
            return RelayFault(.limitReached, "the journal holds \(configuration.maximumJournalBytes) bytes")
        } else if cluster == nil, !budgetFits(cost), !madeRoom(for: cost, in: sessionID, at: now) {
            // Cluster hook: not in cluster mode, where this runs as the log is applied and must
            // decide alike on every relay; the relay-wide budget is each relay's own.
            limitCounts.memory += 1
            return RelayFault(.limitReached, "the relay is at its memory limit of \(configuration.memoryLimit) bytes")
        }
        return nil
    }

    /// Whether room for `cost` more bytes of `sessionID`'s journal was made within the accounted
    /// budget: only for a session whose source, with it, stays within its fair share, and only
    /// by shedding from the largest holders above theirs (`shed(toFit:sparing:at:)`). What the
    /// shedding tells the members of the sessions shed from is queued in `pendingShed`.
    private mutating func madeRoom(for cost: Int, in sessionID: UUID, at now: Int64) -> Bool {
        let source = sessions[sessionID]?.creatorAddress
        guard fairShare(of: source, session: sessionID, adding: cost).admitsMore else { return false }
        pendingShed += shed(toFit: cost, sparing: source ?? "", at: now)
        return accountedBudgetFits(cost)
    }

    private mutating func continueUpload(_ id: UUID, _ data: ArraySlice<UInt8>, from key: ParticipantKey,
                                         on connection: RelayConnectionID, at now: Int64) -> [RelayDirective] {
        guard let upload = sessions[key.session]?.participants[key.participant]?.upload.map({ ($0.entry.id, $0.entry.size, $0.data.count, $0.refusal == nil) }),
              upload.0 == id, upload.2 + data.count <= upload.1 else {
            return drop(connection, fault: RelayFault(.protocolViolation, "attachment data that no add announced"), at: now)
        }
        // Appended in place (the table holds the only reference), so that a chunk costs its own
        // size, not the upload's. Count what arrives even when refused, so the end is found;
        // keep nothing then.
        if upload.3 {
            sessions[key.session]?.participants[key.participant]?.upload?.data.append(contentsOf: data)
        } else {
            sessions[key.session]?.participants[key.participant]?.upload?.entry.size -= data.count
        }
        guard let state = sessions[key.session]?.participants[key.participant]?.upload.map({ ($0.data.count, $0.entry.size) }) else { return [] }
        return state.0 == state.1 ? finishUpload(from: key) : []
    }

    private mutating func finishUpload(from key: ParticipantKey) -> [RelayDirective] {
        guard let upload = sessions[key.session]?.participants[key.participant]?.upload,
              let order = sessions[key.session]?.order else { return [] }
        sessions[key.session]?.participants[key.participant]?.upload = nil
        if let refusal = upload.refusal {
            return outcome(to: key, request: upload.request, refusal)
        }
        // The reservation made at the announcement now holds the attachment.
        sessions[key.session]?.attachments[upload.entry.id] = RelaySessionState.Attachment(entry: upload.entry, data: upload.data)
        sessions[key.session]?.attachmentOrder.append(upload.entry.id)
        return broadcast(in: key.session, to: order) { .attachmentAdded(sequence: $0, entry: upload.entry) }
            + outcome(to: key, request: upload.request, nil)
    }

    /// Ends a session: everyone hears why, every connection closes, the session is gone.
    mutating func end(_ sessionID: UUID, by participant: UUID, reason: String, at now: Int64) -> [RelayDirective] {
        guard let order = sessions[sessionID]?.order else { return [] }
        var directives = broadcast(in: sessionID, to: order) { .ended(sequence: $0, by: participant, reason: reason) }
        for member in sessions[sessionID]?.participants.values ?? [:].values {
            tokens[member.token] = nil
            directives.append(.forgetToken(member.token))
            if let connection = member.connection {
                connections[connection]?.phase = .closing
                directives.append(.close(connection))
            }
        }
        discardSession(sessionID)
        rememberEnded(sessionID, by: participant, reason: reason, at: now)
        return directives
    }
}
