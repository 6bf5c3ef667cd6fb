import Foundation
import TandemClock
import TandemWire
import Testing

/// `Ordered`'s session instants against the bare nanoseconds the wire carries: either form of
/// the record names the same instants and encodes to the same bytes.
@Suite struct OrderedFormsTests {
    static let sender = UUID(uuidString: "00000000-0000-0000-0000-0000000000A1")!

    @Test(arguments: [Int64.min, -1, 0, 1_234_567_890, Int64.max])
    func bothFormsNameTheSameInstantsAndEncodeTheSameBytes(nanoseconds: Int64) throws {
        let effective = nanoseconds == .max ? Int64.max : nanoseconds + 1
        let bare = RelayOrderedEntry(sender: Self.sender, order: 7, orderedAt: nanoseconds, effectiveAt: effective, body: [1, 2, 3])
        let typed = RelayOrderedEntry(sender: Self.sender, order: 7, orderedInstant: SessionInstant(nanoseconds: nanoseconds),
                                      effectiveInstant: SessionInstant(nanoseconds: effective), body: [1, 2, 3])
        #expect(bare == typed)
        #expect(bare.orderedAt == nanoseconds)
        #expect(typed.effectiveAt == effective)
        let bytes = RelayFrame.ordered(sequence: 9, entry: typed).encoded()
        #expect(bytes == RelayFrame.ordered(sequence: 9, entry: bare).encoded())
        guard case let .ordered(sequence, decoded) = try RelayFrame.decode(bytes[4...]) else {
            Issue.record("an ordered frame decodes as another")
            return
        }
        #expect(sequence == 9)
        #expect(decoded.orderedInstant == SessionInstant(nanoseconds: nanoseconds))
        #expect(decoded.effectiveInstant == SessionInstant(nanoseconds: effective))
    }

    @Test func theBareFormsWriteTheInstants() {
        var record = Ordered(sender: Self.sender, order: 1, orderedInstant: .zero, effectiveInstant: .zero, body: "x")
        record.orderedAt = 5
        record.effectiveAt = 8
        #expect(record.orderedInstant == SessionInstant(nanoseconds: 5))
        #expect(record.effectiveInstant == SessionInstant(nanoseconds: 8))
        let mapped = record.map { $0.count }
        #expect(mapped.orderedInstant == record.orderedInstant)
        #expect(mapped.effectiveInstant == record.effectiveInstant)
    }
}
