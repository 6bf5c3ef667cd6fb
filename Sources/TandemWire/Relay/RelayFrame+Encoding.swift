extension RelayFrame {
    /// The whole frame as it goes on the wire: length prefix, version, type, fields.
    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16 + payloadSize)
        encode(appendingTo: &bytes)
        return bytes
    }

    /// Appends the whole frame, as `encoded()` gives it, to the end of `buffer`: what a sender
    /// that coalesces frames into one write uses, so that no frame needs a buffer of its own.
    public func encode(appendingTo buffer: inout [UInt8]) {
        let start = buffer.count
        var writer = ByteWriter(capacity: 0)
        writer.exchange(&buffer)
        writer.uint32(0)
        if case let .versionRefusal(peerVersion, _) = self {
            writer.uint8(peerVersion)
        } else {
            writer.uint8(RelayFrame.version)
        }
        writer.uint8(type.rawValue)
        encodeFields(into: &writer)
        writer.exchange(&buffer)
        let length = UInt32(buffer.count - start - 4)
        for index in 0..<4 { buffer[start + index] = UInt8(truncatingIfNeeded: length >> UInt32(24 - 8 * index)) }
    }

    var type: RelayFrameType {
        switch self {
        case .hello: .hello
        case .challenge: .challenge
        case .proof: .proof
        case .claim: .claim
        case .welcome: .welcome
        case .journalEntry: .journalEntry
        case .refusal, .versionRefusal: .refusal
        case .historyEntry: .historyEntry
        case .message: .message
        case .attachmentAdd: .attachmentAdd
        case .attachmentChunk: .attachmentChunk
        case .attachmentRemove: .attachmentRemove
        case .loadRequest: .loadRequest
        case .leave: .leave
        case .end: .end
        case .proposal: .proposal
        case .authority: .authority
        case .authoredProposal: .authoredProposal
        case .participantJoined: .participantJoined
        case .participantLeft: .participantLeft
        case .participantAway: .participantAway
        case .delivery: .delivery
        case .attachmentAdded: .attachmentAdded
        case .attachmentRemoved: .attachmentRemoved
        case .loadChunk: .loadChunk
        case .outcome: .outcome
        case .ended: .ended
        case .ordered: .ordered
        case .ack: .ack
        case .ping: .ping
        case .pong: .pong
        case .error: .error
        case .notice: .notice
        }
    }

    private func encodeFields(into writer: inout ByteWriter) {
        switch self {
        case let .hello(hello):
            writer.uuid(hello.sessionID)
            writer.participant(hello.participant)
            writer.bool(hello.create)
            writer.bytes(hello.activity)
            writer.bool(hello.resume)
            writer.uint64(hello.received)
            if let proof = hello.creationProof { writer.fixed(proof, count: RelayWireLimits.creationProofLength) }
            if let ticket = hello.ticket { writer.fixed(ticket, count: RelayWireLimits.inviteTicketLength) }
        case let .challenge(nonce, sessionExists):
            writer.fixed(nonce)
            writer.bool(sessionExists)
        case let .proof(sessionSignature, participantSignature):
            writer.fixed(sessionSignature, count: RelayWireLimits.signatureLength)
            writer.fixed(participantSignature, count: RelayWireLimits.signatureLength)
        case let .claim(verifier, sessionSignature, participantSignature):
            writer.fixed(verifier, count: RelayWireLimits.publicKeyLength)
            writer.fixed(sessionSignature, count: RelayWireLimits.signatureLength)
            writer.fixed(participantSignature, count: RelayWireLimits.signatureLength)
        case let .welcome(welcome):
            writer.uuid(welcome.sessionID)
            writer.bool(welcome.created)
            writer.bool(welcome.resumed)
            writer.uint64(welcome.received)
            writer.fixed(welcome.token)
            writer.bytes(welcome.activity)
            let listed = welcome.participants.prefix(RelayWireLimits.maximumParticipants + RelayWireLimits.maximumFormerParticipants)
            writer.uint32(UInt32(listed.count))
            for participant in listed { writer.participant(participant) }
            writer.uint32(UInt32(welcome.attachmentCount))
            writer.uint32(UInt32(welcome.orderedHistoryCount))
            let firstOrders = welcome.firstOrders.sorted { ($0.value, $0.key.uuidString) < ($1.value, $1.key.uuidString) }
                .prefix(RelayWireLimits.maximumParticipants)
            writer.uint32(UInt32(firstOrders.count))
            for (id, order) in firstOrders {
                writer.uuid(id)
                writer.uint64(order)
            }
        case let .journalEntry(entry):
            writer.attachment(entry)
        case let .historyEntry(entry):
            writer.orderedEntry(entry)
        case let .proposal(sequence, retention, body):
            writer.uint64(sequence)
            writer.retention(retention)
            writer.bytes(body)
        case let .ordered(sequence, entry):
            writer.uint64(sequence)
            writer.orderedEntry(entry)
        case let .refusal(fault), let .error(fault), let .versionRefusal(_, fault):
            writer.fault(fault)
        case let .message(sequence, recipients, reliable, body):
            writer.uint64(sequence)
            switch recipients {
            case .everyone:
                writer.uint8(0)
            case let .only(ids):
                writer.uint8(1)
                writer.uint32(UInt32(ids.count))
                for id in ids { writer.uuid(id) }
            }
            writer.bool(reliable)
            writer.bytes(body)
        case let .attachmentAdd(sequence, entry), let .attachmentAdded(sequence, entry):
            writer.uint64(sequence)
            writer.attachment(entry)
        case let .attachmentChunk(sequence, id, data):
            writer.uint64(sequence)
            writer.uuid(id)
            writer.bytes(data)
        case let .attachmentRemove(sequence, id), let .loadRequest(sequence, id),
             let .participantLeft(sequence, id), let .attachmentRemoved(sequence, id):
            writer.uint64(sequence)
            writer.uuid(id)
        case let .participantAway(sequence, id, away):
            writer.uint64(sequence)
            writer.uuid(id)
            writer.bool(away)
        case let .leave(sequence):
            writer.uint64(sequence)
        case let .end(sequence, reason):
            writer.uint64(sequence)
            writer.text(reason, limit: RelayWireLimits.maximumTextLength)
        case let .authority(sequence, statement):
            writer.uint64(sequence)
            statement.write(into: &writer)
        case let .authoredProposal(sequence, statement, body):
            writer.uint64(sequence)
            statement.write(into: &writer)
            writer.bytes(body)
        case let .participantJoined(sequence, participant):
            writer.uint64(sequence)
            writer.participant(participant)
        case let .delivery(sequence, sender, reliable, body):
            writer.uint64(sequence)
            writer.uuid(sender)
            writer.bool(reliable)
            writer.bytes(body)
        case let .loadChunk(sequence, request, data):
            writer.uint64(sequence)
            writer.uint64(request)
            writer.bytes(data)
        case let .outcome(sequence, request, fault):
            writer.uint64(sequence)
            writer.uint64(request)
            if let fault {
                writer.bool(true)
                writer.fault(fault)
            } else {
                writer.bool(false)
            }
        case let .ended(sequence, by, reason):
            writer.uint64(sequence)
            writer.uuid(by)
            writer.text(reason, limit: RelayWireLimits.maximumTextLength)
        case let .ack(value), let .ping(value), let .pong(value):
            writer.uint64(value)
        case let .notice(notice):
            writer.uint8(notice.code.rawValue)
            writer.text(notice.text, limit: RelayWireLimits.maximumTextLength)
        }
    }
}

extension ByteWriter {
    mutating func participant(_ entry: RelayParticipantEntry) {
        uuid(entry.id)
        fixed(entry.publicKey, count: RelayWireLimits.publicKeyLength)
        text(entry.displayName, limit: RelayWireLimits.maximumNameLength)
        bytes(entry.presence.prefix(RelayWireLimits.maximumPresence))
        bool(entry.departed)
    }

    mutating func attachment(_ entry: RelayAttachmentEntry) {
        uuid(entry.id)
        uuid(entry.owner)
        uint64(UInt64(max(entry.size, 0)))
        bytes(entry.metadata)
    }

    mutating func orderedEntry(_ entry: RelayOrderedEntry) {
        uuid(entry.sender)
        uint64(entry.order)
        uint64(UInt64(bitPattern: entry.orderedInstant.nanoseconds))
        uint64(UInt64(bitPattern: entry.effectiveInstant.nanoseconds))
        retention(entry.retention)
        bytes(entry.body)
    }

    mutating func fault(_ fault: RelayFault) {
        uint8(fault.code.rawValue)
        text(fault.text, limit: RelayWireLimits.maximumTextLength)
    }
}

extension RelayFrame {
    /// The frame's type as a word, for error messages.
    public var typeName: String { "\(type)" }
}
