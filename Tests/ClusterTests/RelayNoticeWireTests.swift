import Foundation
import TandemNet
import TandemWire
import Testing

/// The relay's notice on the wire (protocol version 7): round trips, limits, a seeded fuzz.
@Suite("Relay notice wire")
struct RelayNoticeWireTests {
    static let corpus: [RelayFrame] = [
        .notice(RelayNotice(.unavailable, "the relay cluster is unavailable (NATS cannot be reached)")),
        .notice(RelayNotice(.available, "")),
        .notice(RelayNotice(RelayNoticeCode(rawValue: 200), "a newer relay's notice 🎬")),
    ]

    @Test("a notice survives a round trip, also when split anywhere; it is outside the sequence")
    func roundTrip() throws {
        var stream: [UInt8] = []
        for frame in Self.corpus {
            let bytes = frame.encoded()
            #expect(bytes[4] == RelayFrame.version && bytes[5] == 0x34)
            #expect(try RelayFrame.decode(bytes[4...]) == frame)
            #expect(frame.sequence == nil)
            stream += bytes
        }
        var random = SeededRandom(seed: 16)
        var reader = RelayFrameReader()
        var decoded: [RelayFrame] = []
        var offset = 0
        while offset < stream.count {
            let step = min(stream.count - offset, 1 + Int(random.next() % 9))
            reader.append(stream[offset..<offset + step])
            while let frame = try reader.next() { decoded.append(frame) }
            offset += step
        }
        #expect(decoded == Self.corpus)
    }

    @Test("a notice cut short, with bytes left over, or with text over its limit is a clear error")
    func malformed() throws {
        let bytes = Array(Self.corpus[0].encoded()[4...])
        for length in 2..<bytes.count {
            #expect(throws: WireError.self) { try RelayFrame.decode(bytes[..<length]) }
        }
        #expect(throws: WireError.self) { try RelayFrame.decode((bytes + [0])[...]) }
        let long = RelayFrame.notice(RelayNotice(.unavailable, String(repeating: "x", count: RelayWireLimits.maximumTextLength + 10)))
        // The writer cuts text to its limit, so what goes out always decodes.
        let written = try RelayFrame.decode(long.encoded()[4...])
        if case let .notice(notice) = written { #expect(notice.text.utf8.count <= RelayWireLimits.maximumTextLength) } else { Issue.record("\(written)") }
        var oversized: [UInt8] = [RelayFrame.version, 0x34, 1]
        let length = UInt16(RelayWireLimits.maximumTextLength + 1)
        oversized += [UInt8(length >> 8), UInt8(length & 0xFF)]
        oversized += [UInt8](repeating: 0x41, count: Int(length))
        #expect(throws: WireError.self) { try RelayFrame.decode(oversized[...]) }
    }

    @Test("fuzz: mutated notices never trap, and decode to a notice or a WireError")
    func fuzz() throws {
        var random = SeededRandom(seed: 1_607)
        let seeds = Self.corpus.map { Array($0.encoded()[4...]) }
        for _ in 0..<20_000 {
            var bytes = seeds[Int(random.next() % UInt64(seeds.count))]
            for _ in 0..<(1 + Int(random.next() % 4)) {
                switch random.next() % 3 {
                case 0 where bytes.count > 2: bytes[2 + Int(random.next() % UInt64(bytes.count - 2))] = UInt8(truncatingIfNeeded: random.next())
                case 1 where bytes.count > 2: bytes.removeLast(Int(random.next() % UInt64(bytes.count - 2)))
                default: bytes.append(UInt8(truncatingIfNeeded: random.next()))
                }
            }
            do {
                let frame = try RelayFrame.decode(bytes[...])
                guard case .notice = frame else { Issue.record("a mutated notice decoded as \(frame)"); return }
            } catch {
                // A WireError, as the decoder's type says.
            }
        }
    }
}
