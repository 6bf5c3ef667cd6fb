import Foundation
import TandemClock
import TandemNet
import TandemWire

// What the relay reports, and what the session does about it.
extension SessionMachine {
    /// What to do after something the relay reported (or a welcome, which summarises it).
    enum EventDirective: Sendable {
        /// Send this participant's signed presence to these recipients.
        case sendPresence(to: Recipients)
        /// Publish who is active.
        case publishActive(Set<Participant>)
        /// Publish who is away.
        case publishAway(Set<Participant>)
        /// Publish the journal's attachments, in the order they were added.
        case publishJournal([JournalEntry])
        /// Publish whether the relay can order the session's changes.
        case publishAvailability(RelayAvailability)
        /// Tell the departure readers that this participant left.
        case announceDeparture(UUID)
        /// Hand a message to the readers of its route (a message type's, or the media stream's).
        case deliver(InboundMessage, route: String)
        /// Hand an ordered record to the coordinator, which reads them.
        case deliverOrdered(OrderedRecord)
        /// Hand a chat line to the chat's readers.
        case chat(ChatMessage)
        /// Show this activity: the group ordered it.
        case showActivity(Activity)
        /// Tell the rejection readers about a body dropped on arrival (already counted).
        case reject(Rejection)
        /// Tell the role readers what a role record did (accepted or refused, alike everywhere).
        case roleEvent(SessionRoleEvent)
        /// Publish the session's roles: they changed.
        case publishRoles(SessionRoles)
        /// Send this role record for ordering (the older epochs' keys, after this participant's
        /// own move to a new epoch was accepted).
        case sendRoleRecord(RoleChange)
        /// Hand the relay the maker's signed statement of an accepted role record: what changed
        /// of who may rekey and remove, or that the session moved to a new epoch
        /// (`RelayAuthority`).
        case announceAuthority(RelayAuthority)
        /// The link resumed, perhaps on another relay: the session clock follows it there.
        case followClock
        /// Tell the divergence readers that a participant holds another chain head than this
        /// one at an order (a held report answered, or a snapshot's head).
        case chainDivergence(OrderedChain.Divergence)
        /// Tell the session-time readers that the relay's time ran ahead of this participant's
        /// own clock by more than it can (`SessionTimeBound`) at this record.
        case sessionTimeAhead(SessionTimeJump)
        /// The session is over here: finish every sequence, with this reason.
        case invalidate(GroupSessionError)
    }

    /// The relay reported `event`. Nothing is decided once the session is over.
    mutating func onRelayEvent(_ event: RelayEvent, at now: LocalInstant) -> [EventDirective] {
        guard !isInvalidated else { return [] }
        switch event {
        case .participantJoined(let record):
            var out: [EventDirective] = []
            guard let participant = verified(record, into: &out) else { return out }
            known[record.id] = participant
            // Tell the newcomer that this participant is in the activity.
            if active.contains(localParticipant.id) { out.append(.sendPresence(to: .only([record.id]))) }
            return out
        case .participantLeft(let id):
            active.remove(id)
            awaySince[id] = nil
            let wasAway = away.remove(id) != nil
            if let gone = known.removeValue(forKey: id) { former[id] = gone }
            var out: [EventDirective] = wasAway ? [.publishAway(awayParticipants)] : []
            out += [.publishActive(activeParticipants), .announceDeparture(id)]
            // The initiator's own `leave()` ends such an activity for everyone; this covers an
            // initiator that went without leaving.
            if initiator == id, lifetimePolicy == .endsWhenInitiatorLeaves {
                let name = former[id]?.displayName ?? "the initiator"
                out += invalidate(GroupSessionError(.ended, "\(name), who started it, left: the activity ends with them"))
            }
            return out
        case .participantAway(let id, let isAway):
            let changed = isAway ? away.insert(id).inserted : away.remove(id) != nil
            awaySince[id] = isAway ? (awaySince[id] ?? now) : nil
            return changed ? [.publishAway(awayParticipants)] : []
        case .ordered(let delivery):
            var out: [EventDirective] = []
            // Live records only, each once: a history's records arrive long after their ordering.
            if lastOrder.map({ delivery.order > $0 }) ?? true,
               let ahead = sessionTimeBound.take(ordered: delivery.orderedInstant, received: now) {
                out.append(.sessionTimeAhead(SessionTimeJump(order: delivery.order, ahead: ahead)))
            }
            return out + ordered(delivery, opened: bodies.open(delivery.body, expecting: Self.expectation(ordered: delivery)))
        case .message(let from, let body, let reliable):
            return message(body, from: from, reliable: reliable)
        case .attachmentAdded(let record):
            return attachmentAdded(record)
        case .attachmentRemoved(let id):
            journal.removeAll { $0.id == id }
            return [.publishJournal(journal)]
        case .ended(let by, let reason):
            let name = known[by]?.displayName ?? "someone"
            return invalidate(GroupSessionError(.ended, reason.isEmpty ? "\(name) ended the session" : reason))
        case .connectionQuiet, .connectionInterrupted:
            // Nothing can be ordered until the relay answers again: people are told at once.
            guard relayAvailability == .available else { return [] }
            relayAvailability = .unavailable(reason: RelayAvailability.reconnecting)
            return [.publishAvailability(relayAvailability)]
        case .connectionResumed:
            resumedAt = now
            guard relayAvailability == .unavailable(reason: RelayAvailability.reconnecting) else { return [.followClock] }
            relayAvailability = .available
            return [.followClock, .publishAvailability(relayAvailability)]
        case .relayAvailability(let available, let reason):
            relayAvailability = available ? .available : .unavailable(reason: reason)
            return [.publishAvailability(relayAvailability)]
        case .failed(let error):
            return invalidate(GroupSessionError.from(error))
        }
    }

    // MARK: Participants

    /// The participant `record` names, with the name its signed presence gives (the relay's
    /// when it gave none); nil (and a rejection) when its identity is not its key's. A presence
    /// that does not verify is rejected and its name not believed: the participant goes by its
    /// identity.
    mutating func verified(_ record: ParticipantRecord, into out: inout [EventDirective]) -> Participant? {
        guard record.isSelfCertified else {
            out.append(reject(Rejection(reason: .forgedIdentity, sender: record.id, path: "participant")))
            return nil
        }
        keys[record.id] = record.publicKey
        var name = record.displayName
        if !record.presence.isEmpty {
            let expectation = BodySealer.Expectation(path: .journal, kinds: [.presence], sender: record.id, attachment: nil,
                                                     checksReplay: false)
            switch bodies.open(record.presence, expecting: expectation) {
            case .success(let body):
                if case .presence(let signed)? = SessionEnvelope(decoding: body.payload) { name = signed }
            case .failure(let reason):
                out.append(reject(Rejection(reason: reason, sender: record.id, path: "presence")))
                name = ""
            }
        }
        return Participant(id: record.id, displayName: name)
    }

    // MARK: Messages

    /// Only what this session's participants signed, for this participant, on this path, once,
    /// and attributed to its signer, is delivered; the rest is counted and reported.
    private mutating func message(_ body: [UInt8], from sender: UUID, reliable: Bool) -> [EventDirective] {
        let expectation = BodySealer.Expectation(
            path: reliable ? .reliable : .unreliable, kinds: reliable ? [.message, .presence, .mediaStream] : [.message],
            sender: sender, attachment: nil, checksReplay: true)
        let signed: SignedBody
        switch bodies.open(body, expecting: expectation) {
        case .success(let opened): signed = opened
        case .failure(let reason): return [reject(Rejection(reason: reason, sender: sender, path: "message"))]
        }
        if roleBook.current.isRemoved(signed.sender) { return [reject(Rejection(reason: .removed, sender: signed.sender, path: "message"))] }
        switch (signed.kind, SessionEnvelope(decoding: signed.payload)) {
        case (.presence, .presence(let name)?):
            // The signed name is the participant's own word; the relay's is replaced by it.
            known[signed.sender] = Participant(id: signed.sender, displayName: name)
            active.insert(signed.sender)
            return [.publishActive(activeParticipants)]
        case (.mediaStream, _):
            // A sender not known is dropped, as for messages.
            guard let source = known[signed.sender] else { return [] }
            return [.deliver(InboundMessage(payload: signed.payload, source: source), route: sessionStreamRoute)]
        case (.message, .message(let type, let payload)?) where type != sessionStreamRoute:
            guard let source = known[signed.sender] else { return [] }
            return [.deliver(InboundMessage(payload: payload, source: source), route: type)]
        default:
            return [reject(Rejection(reason: .wrongKind, sender: signed.sender, path: "message"))]
        }
    }

    // MARK: Ordered records

    /// What an ordered record's body must be.
    static func expectation(ordered delivery: OrderedDelivery) -> BodySealer.Expectation {
        BodySealer.Expectation(path: .ordered, kinds: [.playbackProposal, .playbackSnapshot, .chat, .roles], sender: delivery.sender,
                               attachment: nil, checksReplay: true, retention: delivery.retention)
    }

    /// Takes an ordered record, opened: an activity change is shown, a chat line goes to the
    /// chat, and every record (a placeholder for one that failed a check) goes on to the
    /// coordinator, or waits in the backlog until it reads. An order at or below the last one
    /// taken is a duplicate: reported, and not passed on.
    mutating func ordered(_ delivery: OrderedDelivery, opened: Result<SignedBody, RejectionReason>) -> [EventDirective] {
        // A history's record after one that ended the session (its participant's removal) changes nothing.
        guard !isInvalidated else { return [] }
        if let lastOrder, delivery.order <= lastOrder {
            return [reject(Rejection(reason: .replayed, sender: delivery.sender, path: "ordered"))]
        }
        // What a removed participant signs holds its order and changes nothing, alike everywhere:
        // the roles in force are those of every record before this one.
        var opened = opened
        if case .success(let signed) = opened, roleBook.current.isRemoved(signed.sender) { opened = .failure(.removed) }
        lastOrder = delivery.order
        var out: [EventDirective] = chain.take(delivery).map { .chainDivergence($0) }
        // A snapshot's state follows its writer's chain head: the head is compared (or chained
        // from), the state goes on.
        if case .success(var signed) = opened, signed.kind == .playbackSnapshot {
            if let (head, state) = SnapshotChainHead.unwrap(signed.payload) {
                if let head, let reflected = delivery.retention.reflectedOrder {
                    out += snapshotHead(head, atOrder: reflected, writer: signed.sender)
                }
                signed.payload = state
                opened = .success(signed)
            } else {
                opened = .failure(.malformed)
            }
        }
        let record: OrderedRecord
        switch opened {
        case .success(let signed):
            if ActivityChange.isChange(signed.payload) { out += activityChanged(signed.payload, by: signed.sender) }
            let plaintext = delivery.map(sender: signed.sender) { _ in signed.payload }
            // A chat line goes to the chat, and on to the coordinator too: it takes an order
            // number, and a late joiner's coordinator assembles its history without gaps.
            if signed.kind == .chat { out += chatReceived(plaintext) }
            noteOrdered(order: delivery.order, signer: signed.sender, isRoleRecord: signed.kind == .roles)
            if signed.kind == .roles { out += roleRecord(signed, order: delivery.order, retention: delivery.retention) }
            record = plaintext.map { .plaintext($0) }
        case .failure(let reason):
            noteOrdered(order: delivery.order, signer: nil, isRoleRecord: false)
            out.append(reject(Rejection(reason: reason, sender: delivery.sender, path: "ordered")))
            record = delivery.map { _ in .placeholder(reason) }
        }
        if hasOrderedReader { out.append(.deliverOrdered(record)) } else { orderedBacklog.append(record) }
        return out
    }

    /// Takes the chain head a snapshot's `writer` sealed for `order`: a disagreement with this
    /// participant's chain is a divergence, as is any held report the chain it starts answers.
    private mutating func snapshotHead(_ head: [UInt8], atOrder order: UInt64, writer: UUID) -> [EventDirective] {
        switch chain.takeSnapshotHead(head, atOrder: order, writer: writer) {
        case .diverges: [.chainDivergence(OrderedChain.Divergence(participant: writer, order: order))]
        case .anchored(let divergences): divergences.map { .chainDivergence($0) }
        case .agrees, .unknown: []
        }
    }

    /// Adopts an activity change that the group ordered (the history's, for a late joiner).
    /// While this participant's own changes are still on their way, they come later in the
    /// order than this one: the newest of them stays shown.
    private mutating func activityChanged(_ body: [UInt8], by sender: UUID) -> [EventDirective] {
        guard let description = ActivityChange.decode(body), description.identifier == Activity.activityIdentifier,
              let activity = try? description.decode(Activity.self) else {
            return [reject(Rejection(reason: .malformed, sender: sender, path: "activity"))]
        }
        if sender == localParticipant.id, pendingActivityChanges > 0 { pendingActivityChanges -= 1 }
        return pendingActivityChanges == 0 ? [.showActivity(activity)] : []
    }

    /// Takes a chat record: kept, and passed to the readers. One that is no chat line (empty,
    /// too long, not UTF-8) or that was signed with another retention is dropped and reported.
    private mutating func chatReceived(_ delivery: OrderedPlaintext) -> [EventDirective] {
        guard case .recent = delivery.retention else {
            return [reject(Rejection(reason: .wrongRetention, sender: delivery.sender, path: "chat"))]
        }
        guard let text = ChatRecord.decode(delivery.body) else {
            return [reject(Rejection(reason: .malformed, sender: delivery.sender, path: "chat"))]
        }
        let message = ChatMessage(sender: delivery.sender, text: text, order: delivery.order, orderedAt: delivery.orderedInstant.nanoseconds)
        chat.append(message)
        if chat.count > ChatMessage.keptCount { chat.removeFirst(chat.count - ChatMessage.keptCount) }
        return [.chat(message)]
    }

    // MARK: The journal

    /// Records an attachment the relay reports, its metadata opened with the session's key; an
    /// attachment already held is replaced in its place.
    mutating func attachmentAdded(_ record: AttachmentRecord) -> [EventDirective] {
        let expectation = BodySealer.Expectation(path: .journal, kinds: [.attachmentMetadata], sender: record.owner,
                                                 attachment: record.id, checksReplay: false)
        let body: SignedBody
        switch bodies.open(record.metadata, expecting: expectation) {
        case .success(let opened): body = opened
        case .failure(let reason): return [reject(Rejection(reason: reason, sender: record.owner, path: "attachment"))]
        }
        guard let metadata = try? JSONDecoder().decode(AttachmentMetadata.self, from: Data(body.payload)) else {
            return [reject(Rejection(reason: .malformed, sender: record.owner, path: "attachment"))]
        }
        let entry = JournalEntry(id: record.id, name: metadata.name, size: metadata.size, owner: record.owner,
                                 contentType: metadata.contentType.flatMap(UTType.init) ?? .data, metadata: metadata.metadata)
        if let index = journal.firstIndex(where: { $0.id == record.id }) { journal[index] = entry } else { journal.append(entry) }
        return [.publishJournal(journal)]
    }
}
