import Foundation

extension RelayFrame {
    /// Decodes one frame from the bytes after its length prefix (version, type, fields).
    ///
    /// Any defect is a `WireError`: an unknown version or type, a field cut short, a length
    /// over its limit (checked before anything is allocated), bytes left over.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> RelayFrame {
        var header = ByteReader(bytes, context: "relay frame")
        let version = try header.uint8()
        guard version == RelayFrame.version else {
            throw WireError(.unsupportedVersion(version), context: "relay frame")
        }
        let typeByte = try header.uint8()
        guard let type = RelayFrameType(rawValue: typeByte) else {
            throw WireError(.unknownType(typeByte), context: "relay frame")
        }
        var reader = ByteReader(bytes.dropFirst(2), context: type.decodingContext)
        let frame = try decodeFields(type, &reader)
        try reader.finish()
        return frame
    }

    private static func decodeFields(_ type: RelayFrameType, _ reader: inout ByteReader) throws(WireError) -> RelayFrame {
        let secret = RelayWireLimits.secretLength
        switch type {
        case .hello:
            var hello = RelayHello(
                sessionID: try reader.uuid(), participant: try reader.participant(), create: try reader.bool(),
                activity: try reader.bytes(limit: RelayWireLimits.maximumMetadata),
                resume: try reader.bool(), received: try reader.uint64())
            // The creation proof, then the invite's ticket, each present only when given: their
            // lengths tell which (any other length left over is a defect).
            let (proof, ticket) = (RelayWireLimits.creationProofLength, RelayWireLimits.inviteTicketLength)
            if reader.remaining == proof || reader.remaining == proof + ticket {
                hello.creationProof = try reader.fixed(proof)
            }
            if reader.remaining == ticket {
                hello.ticket = try reader.fixed(ticket)
            }
            return .hello(hello)
        case .challenge:
            return .challenge(nonce: try reader.fixed(secret), sessionExists: try reader.bool())
        case .proof:
            let signature = RelayWireLimits.signatureLength
            return .proof(sessionSignature: try reader.fixed(signature), participantSignature: try reader.fixed(signature))
        case .claim:
            let signature = RelayWireLimits.signatureLength
            return .claim(verifier: try reader.fixed(RelayWireLimits.publicKeyLength),
                          sessionSignature: try reader.fixed(signature), participantSignature: try reader.fixed(signature))
        case .welcome:
            let sessionID = try reader.uuid()
            let created = try reader.bool()
            let resumed = try reader.bool()
            let received = try reader.uint64()
            let token = try reader.fixed(RelayWireLimits.tokenLength)
            let activity = try reader.bytes(limit: RelayWireLimits.maximumMetadata)
            let count = try reader.count(limit: RelayWireLimits.maximumParticipants + RelayWireLimits.maximumFormerParticipants)
            var participants: [RelayParticipantEntry] = []
            for _ in 0..<count { participants.append(try reader.participant()) }
            let attachmentCount = try reader.count(limit: Int(UInt32.max))
            let orderedHistoryCount = try reader.count(limit: Int(UInt32.max))
            var firstOrders: [UUID: UInt64] = [:]
            for _ in 0..<(try reader.count(limit: RelayWireLimits.maximumParticipants)) {
                let id = try reader.uuid()
                firstOrders[id] = try reader.uint64()
            }
            return .welcome(RelayWelcomeFrame(
                sessionID: sessionID, created: created, resumed: resumed, received: received, token: token,
                activity: activity, participants: participants, attachmentCount: attachmentCount,
                orderedHistoryCount: orderedHistoryCount, firstOrders: firstOrders))
        case .journalEntry:
            return .journalEntry(try reader.attachment())
        case .historyEntry:
            return .historyEntry(try reader.orderedEntry())
        case .proposal:
            return .proposal(sequence: try reader.uint64(), retention: try reader.retention(),
                             body: try reader.bytes(limit: RelayWireLimits.maximumBody))
        case .ordered:
            return .ordered(sequence: try reader.uint64(), entry: try reader.orderedEntry())
        case .refusal:
            return .refusal(try reader.fault())
        case .error:
            return .error(try reader.fault())
        case .message:
            let sequence = try reader.uint64()
            let recipients: RelayRecipientList
            switch try reader.uint8() {
            case 0:
                recipients = .everyone
            case 1:
                let count = try reader.count(limit: RelayWireLimits.maximumRecipients)
                var ids: [UUID] = []
                for _ in 0..<count { ids.append(try reader.uuid()) }
                recipients = .only(ids)
            case let tag:
                throw WireError(.malformed("recipient tag \(tag)"), context: reader.context)
            }
            return .message(sequence: sequence, recipients: recipients, reliable: try reader.bool(),
                            body: try reader.bytes(limit: RelayWireLimits.maximumBody))
        case .attachmentAdd:
            return .attachmentAdd(sequence: try reader.uint64(), entry: try reader.attachment())
        case .attachmentAdded:
            return .attachmentAdded(sequence: try reader.uint64(), entry: try reader.attachment())
        case .attachmentChunk:
            return .attachmentChunk(sequence: try reader.uint64(), id: try reader.uuid(),
                                    data: try reader.bytes(limit: RelayWireLimits.attachmentChunkSize)[...])
        case .attachmentRemove:
            return .attachmentRemove(sequence: try reader.uint64(), id: try reader.uuid())
        case .loadRequest:
            return .loadRequest(sequence: try reader.uint64(), id: try reader.uuid())
        case .participantLeft:
            return .participantLeft(sequence: try reader.uint64(), id: try reader.uuid())
        case .participantAway:
            return .participantAway(sequence: try reader.uint64(), id: try reader.uuid(), away: try reader.bool())
        case .attachmentRemoved:
            return .attachmentRemoved(sequence: try reader.uint64(), id: try reader.uuid())
        case .leave:
            return .leave(sequence: try reader.uint64())
        case .end:
            return .end(sequence: try reader.uint64(), reason: try reader.text(limit: RelayWireLimits.maximumTextLength))
        case .authority:
            return .authority(sequence: try reader.uint64(), try RelayAuthority.read(from: &reader))
        case .authoredProposal:
            return .authoredProposal(sequence: try reader.uint64(), statement: try RelayAuthority.read(from: &reader),
                                     body: try reader.bytes(limit: RelayWireLimits.maximumBody))
        case .participantJoined:
            return .participantJoined(sequence: try reader.uint64(), participant: try reader.participant())
        case .delivery:
            return .delivery(sequence: try reader.uint64(), sender: try reader.uuid(), reliable: try reader.bool(),
                             body: try reader.bytes(limit: RelayWireLimits.maximumBody))
        case .loadChunk:
            return .loadChunk(sequence: try reader.uint64(), request: try reader.uint64(),
                              data: try reader.bytes(limit: RelayWireLimits.attachmentChunkSize)[...])
        case .outcome:
            let sequence = try reader.uint64()
            let request = try reader.uint64()
            let fault = try reader.bool() ? try reader.fault() : nil
            return .outcome(sequence: sequence, request: request, fault: fault)
        case .ended:
            return .ended(sequence: try reader.uint64(), by: try reader.uuid(),
                          reason: try reader.text(limit: RelayWireLimits.maximumTextLength))
        case .ack:
            return .ack(try reader.uint64())
        case .ping:
            return .ping(try reader.uint64())
        case .pong:
            return .pong(try reader.uint64())
        case .notice:
            return .notice(RelayNotice(RelayNoticeCode(rawValue: try reader.uint8()), try reader.text(limit: RelayWireLimits.maximumTextLength)))
        }
    }
}

extension ByteReader {
    /// A 32-bit count of items, at most `limit`: a list's loop is bounded before it starts.
    mutating func count(limit: Int) throws(WireError) -> Int {
        let count = Int(try uint32())
        guard count <= limit else { throw WireError(.oversized(length: count, limit: limit), context: context) }
        return count
    }

    mutating func participant() throws(WireError) -> RelayParticipantEntry {
        RelayParticipantEntry(id: try uuid(), publicKey: try fixed(RelayWireLimits.publicKeyLength),
                              displayName: try text(limit: RelayWireLimits.maximumNameLength),
                              presence: try bytes(limit: RelayWireLimits.maximumPresence), departed: try bool())
    }

    mutating func attachment() throws(WireError) -> RelayAttachmentEntry {
        let id = try uuid()
        let owner = try uuid()
        let size = try uint64()
        guard size <= UInt64(RelayWireLimits.maximumAttachment) else {
            throw WireError(.oversized(length: Int(clamping: size), limit: RelayWireLimits.maximumAttachment), context: context)
        }
        return RelayAttachmentEntry(id: id, owner: owner, size: Int(size),
                                    metadata: try bytes(limit: RelayWireLimits.maximumMetadata))
    }

    mutating func orderedEntry() throws(WireError) -> RelayOrderedEntry {
        RelayOrderedEntry(sender: try uuid(), order: try uint64(), orderedAt: Int64(bitPattern: try uint64()),
                          effectiveAt: Int64(bitPattern: try uint64()), retention: try retention(),
                          body: try bytes(limit: RelayWireLimits.maximumBody))
    }

    mutating func fault() throws(WireError) -> RelayFault {
        RelayFault(RelayFaultCode(rawValue: try uint8()), try text(limit: RelayWireLimits.maximumTextLength))
    }
}
