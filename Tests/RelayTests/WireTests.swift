import Foundation
import TandemNet
import TandemTestKit
import TandemTestKit
import TandemWire
import Testing

/// The relay's frames and datagrams: round trips, limits, and a seeded fuzz of the decoders.
@Suite("Relay wire")
struct WireTests {
    static let corpus: [RelayFrame] = {
        let id = UUID()
        let key = [UInt8](repeating: 0xA5, count: 32)
        let entry = RelayAttachmentEntry(id: UUID(), owner: id, size: 3, metadata: [1, 2])
        let ordered = RelayOrderedEntry(sender: id, order: 7, orderedAt: -5, effectiveAt: 1_234_567_890, body: [2, 7, 1])
        return [
            .hello(RelayHello(sessionID: UUID(), participant: RelayParticipantEntry(id: id, publicKey: key, displayName: "Zoë 🎬"),
                              create: true, activity: [9, 8, 7], resume: false, received: 0)),
            .challenge(nonce: [UInt8](repeating: 3, count: 32), sessionExists: true),
            .proof(sessionSignature: [UInt8](repeating: 4, count: 64), participantSignature: [UInt8](repeating: 14, count: 64)),
            .claim(verifier: [UInt8](repeating: 5, count: 32), sessionSignature: [UInt8](repeating: 15, count: 64),
                   participantSignature: [UInt8](repeating: 25, count: 64)),
            .welcome(RelayWelcomeFrame(sessionID: UUID(), created: true, resumed: false, received: 0,
                                       token: [UInt8](repeating: 6, count: 16), activity: [1],
                                       participants: [RelayParticipantEntry(id: id, publicKey: key, displayName: "a"),
                                                      RelayParticipantEntry(id: UUID(), publicKey: key, displayName: "gone",
                                                                            presence: [1, 2, 3], departed: true)], attachmentCount: 1,
                                       orderedHistoryCount: 2)),
            .journalEntry(entry),
            .historyEntry(ordered),
            .historyEntry(RelayOrderedEntry(sender: id, order: .max, orderedAt: .min, effectiveAt: .max, body: [])),
            .refusal(RelayFault(.wrongSecret, "no")),
            .refusal(RelayFault(.versionMismatch, "relay speaks protocol v3, this tandem speaks v2")),
            .refusal(RelayFault(.wrongIdentity, "not yours")),
            .message(sequence: 1, recipients: .only([id, UUID()]), reliable: true, body: [1, 2, 3]),
            .message(sequence: 2, recipients: .everyone, reliable: false, body: []),
            .attachmentAdd(sequence: 3, entry: entry),
            .attachmentChunk(sequence: 4, id: entry.id, data: [1, 2, 3][...]),
            .attachmentRemove(sequence: 5, id: entry.id),
            .loadRequest(sequence: 6, id: entry.id),
            .leave(sequence: 7),
            .end(sequence: 8, reason: "bedtime"),
            .proposal(sequence: 9, body: [3, 1, 4]),
            .proposal(sequence: 10, body: []),
            .proposal(sequence: 11, retention: .playback, body: [2]),
            .proposal(sequence: 12, retention: .snapshot(reflecting: 11), body: [1, 1]),
            .proposal(sequence: 13, retention: .snapshot(reflecting: .max), body: []),
            .participantJoined(sequence: 1, participant: RelayParticipantEntry(id: id, publicKey: key, displayName: "b", presence: [UInt8](repeating: 8, count: 40))),
            .participantLeft(sequence: 2, id: id),
            .participantAway(sequence: 2, id: id, away: true),
            .participantAway(sequence: .max, id: id, away: false),
            .delivery(sequence: 3, sender: id, reliable: true, body: [4, 5]),
            .attachmentAdded(sequence: 4, entry: entry),
            .attachmentRemoved(sequence: 5, id: entry.id),
            .loadChunk(sequence: 6, request: 6, data: [7][...]),
            .outcome(sequence: 7, request: 6, fault: nil),
            .outcome(sequence: 8, request: 5, fault: RelayFault(.attachmentNotFound, "gone")),
            .ended(sequence: 9, by: id, reason: "done"),
            .ordered(sequence: 10, entry: ordered),
            .ordered(sequence: 11, entry: RelayOrderedEntry(sender: id, order: 8, orderedAt: 0, effectiveAt: 1, retention: .playback, body: [5])),
            .historyEntry(RelayOrderedEntry(sender: id, order: 1_001, orderedAt: 0, effectiveAt: 1,
                                            retention: .snapshot(reflecting: 1_000), body: [6, 6])),
            .ack(10), .ping(11), .pong(12),
            .error(RelayFault(.flooding, "slow down")),
        ]
    }()

    @Test("every frame survives a round trip, also when split anywhere")
    func roundTrip() throws {
        var stream: [UInt8] = []
        for frame in WireTests.corpus {
            let bytes = frame.encoded()
            #expect(try RelayFrame.decode(bytes[4...]) == frame)
            stream += bytes
        }
        var random = SeededRandom(seed: 4)
        var reader = RelayFrameReader()
        var decoded: [RelayFrame] = []
        var offset = 0
        while offset < stream.count {
            let end = min(stream.count, offset + Int(random.next() % 13) + 1)
            reader.append(stream[offset..<end])
            offset = end
            while let frame = try reader.next() { decoded.append(frame) }
        }
        #expect(decoded == WireTests.corpus)
    }

    @Test("the wire's limits are the contract's")
    func limits() {
        #expect(RelayWireLimits.maximumBody == RelayLimits.maximumMessageBody)
        #expect(RelayWireLimits.maximumAttachment == RelayLimits.maximumAttachment)
        #expect(RelayWireLimits.maximumMetadata == RelayLimits.maximumMetadata)
        // The largest message with the most recipients fits in a frame.
        let largest = RelayFrame.message(sequence: 1, recipients: .only((0..<RelayWireLimits.maximumRecipients).map { _ in UUID() }),
                                         reliable: true, body: [UInt8](repeating: 0, count: RelayWireLimits.maximumBody))
        #expect(largest.encoded().count - 4 <= RelayWireLimits.maximumFrameLength)
        // So do the largest ordered proposal, delivery and history entry.
        let body = [UInt8](repeating: 0, count: RelayWireLimits.maximumBody)
        let entry = RelayOrderedEntry(sender: UUID(), order: 1, orderedAt: 0, effectiveAt: 0, body: body)
        for frame: RelayFrame in [.proposal(sequence: 1, body: body), .ordered(sequence: 1, entry: entry), .historyEntry(entry)] {
            #expect(frame.encoded().count - 4 <= RelayWireLimits.maximumFrameLength)
        }
        // One byte more is refused by the decoder.
        let over = RelayFrame.proposal(sequence: 1, body: body + [0]).encoded()
        #expect { try RelayFrame.decode(over[4...]) } throws: { error in
            guard let error = error as? WireError, case .oversized = error.code else { return false }
            return true
        }
    }

    @Test("an oversized length prefix is refused before its bytes arrive")
    func oversizedPrefix() {
        var reader = RelayFrameReader()
        reader.append([0x7F, 0xFF, 0xFF, 0xFF])
        #expect { try reader.next() } throws: { error in
            guard let error = error as? WireError, case .oversized = error.code else { return false }
            return true
        }
        #expect(reader.buffered == 4, "nothing was allocated for the announced frame")
    }

    @Test("relay datagrams round-trip and time probes are not mistaken for them")
    func datagrams() throws {
        let samples: [RelayDatagram] = [
            .register(token: [UInt8](repeating: 1, count: 16)),
            .registered(token: [UInt8](repeating: 2, count: 16)),
            .cookie(token: [UInt8](repeating: 4, count: 16), cookie: [UInt8](repeating: 5, count: RelayDatagram.cookieLength)),
            .confirm(token: [UInt8](repeating: 4, count: 16), cookie: [UInt8](repeating: 6, count: RelayDatagram.cookieLength)),
            .unreliable(token: [UInt8](repeating: 3, count: 16), recipients: .only([UUID()]), body: [1, 2, 3]),
            .unreliable(token: [UInt8](repeating: 3, count: 16), recipients: .everyone, body: []),
            .delivery(sender: UUID(), body: [UInt8](repeating: 9, count: RelayDatagram.maximumBody)),
        ]
        for datagram in samples {
            let bytes = datagram.encoded()
            #expect(bytes.count <= RelayDatagram.maximumSize)
            #expect(RelayDatagramKind.matches(bytes))
            #expect(try RelayDatagram.decode(bytes[...]) == datagram)
        }
        #expect(!RelayDatagramKind.matches(TimeDatagram.request(.init(sequence: 1, sendTime: 2)).encoded()))
    }

    @Test("fuzz: random and mutated input never traps, every defect is a WireError")
    func fuzz() {
        var random = SeededRandom(seed: 0x7A4D_E3)
        let valid = WireTests.corpus.map { $0.encoded() }
        var decodedFrames = 0
        var defects = 0
        for iteration in 0..<20_000 {
            var bytes: [UInt8]
            if iteration % 5 == 0 {
                bytes = (0..<Int(random.next() % 96)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            } else {
                bytes = valid[Int(random.next() % UInt64(valid.count))]
                for _ in 0..<Int(random.next() % 4) + 1 {
                    switch random.next() % 4 {
                    case 0 where !bytes.isEmpty:
                        bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next())
                    case 1 where !bytes.isEmpty:
                        bytes.removeLast(Int(random.next() % UInt64(bytes.count)))
                    case 2:
                        bytes += (0..<Int(random.next() % 8)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                    default:
                        // Keep the frame, lie about its length.
                        if bytes.count >= 4 { bytes[Int(random.next() % 4)] = UInt8(truncatingIfNeeded: random.next()) }
                    }
                }
            }
            var reader = RelayFrameReader()
            reader.append(bytes)
            do {
                while try reader.next() != nil { decodedFrames += 1 }
            } catch {
                defects += 1
            }
            // The same bytes as a datagram, after a plausible header.
            do {
                _ = try RelayDatagram.decode(([0x54, 0x20 + UInt8(random.next() % UInt64(RelayDatagramKind.allCases.count)), RelayFrame.version, 0] + bytes)[...])
            } catch {
                defects += 1
            }
        }
        #expect(defects > 10_000, "most mutations are caught")
        #expect(decodedFrames > 0, "some mutations still decode (a changed body byte is a valid frame)")
    }
}
