import Foundation
import Testing
import TandemClock
import TandemPlayback

/// The shared queue as a pure value: each operation's effect on the entries and on the current
/// entry, the end of an item, the bounds with their rejections, and that two participants fed the
/// same changes hold the same queue.
@Suite struct PlaybackQueueTests {
    static let a = PlaybackQueue.Entry(id: UUID(), identifier: "a.mp4", identity: "d=10.000;h=aa", duration: .seconds(10))
    static let b = PlaybackQueue.Entry(id: UUID(), identifier: "b.mp4", duration: .seconds(20))
    static let c = PlaybackQueue.Entry(id: UUID(), identifier: "c.mp4")
    static let d = PlaybackQueue.Entry(id: UUID(), identifier: "d.mp4")

    /// a, b, c with a current.
    static var abc: PlaybackQueue { PlaybackQueue(entries: [a, b, c]) }

    static func ids(_ queue: PlaybackQueue) -> [String] { queue.entries.map(\.identifier) }

    @Test func anEmptyQueueHasNoCurrentEntryAndNoItemEnd() {
        let queue = PlaybackQueue()
        #expect(queue.isEmpty)
        #expect(queue.current == nil)
        #expect(queue.itemEnd == nil)
        #expect(queue.actionAtItemEnd == .advance)
        #expect(queue.inconsistency() == nil)
    }

    @Test func appendingToAnEmptyQueueMakesTheEntryCurrentAndLaterAppendsKeepIt() {
        var queue = PlaybackQueue()
        apply(.append(Self.a), to: &queue)
        #expect(queue.currentID == Self.a.id)
        apply(.append(Self.b), to: &queue)
        #expect(Self.ids(queue) == ["a.mp4", "b.mp4"])
        #expect(queue.currentID == Self.a.id)
    }

    @Test func insertAfterNilGoesToTheFrontAndInsertAfterAnEntryJustBehindIt() {
        var queue = Self.abc
        apply(.insert(Self.d, after: nil), to: &queue)
        #expect(Self.ids(queue) == ["d.mp4", "a.mp4", "b.mp4", "c.mp4"])
        #expect(queue.currentID == Self.a.id)

        var other = Self.abc
        apply(.insert(Self.d, after: Self.b.id), to: &other)
        #expect(Self.ids(other) == ["a.mp4", "b.mp4", "d.mp4", "c.mp4"])
        #expect(other.currentID == Self.a.id)
        var last = PlaybackQueue(entries: [Self.a])
        apply(.insert(Self.d, after: Self.a.id), to: &last)
        #expect(Self.ids(last) == ["a.mp4", "d.mp4"])
    }

    @Test func insertingIntoAnEmptyQueueMakesTheEntryCurrent() {
        var queue = PlaybackQueue()
        apply(.insert(Self.c, after: nil), to: &queue)
        #expect(queue.current == Self.c)
    }

    @Test func removingTheCurrentEntryMovesCurrentToTheNextThenThePreviousThenNothing() {
        var queue = PlaybackQueue(entries: [Self.a, Self.b, Self.c], current: Self.b.id)
        #expect(queue.effectOnCurrent(of: .remove(Self.b.id)) == .switches(to: Self.c))
        apply(.remove(Self.b.id), to: &queue)
        #expect(queue.currentID == Self.c.id)
        // The last one removed: back to the previous.
        apply(.remove(Self.c.id), to: &queue)
        #expect(queue.currentID == Self.a.id)
        #expect(queue.effectOnCurrent(of: .remove(Self.a.id)) == .switches(to: nil))
        apply(.remove(Self.a.id), to: &queue)
        #expect(queue.currentID == nil)
        #expect(queue.isEmpty)
        #expect(queue.inconsistency() == nil)
    }

    @Test func removingAnotherEntryKeepsCurrent() {
        var queue = PlaybackQueue(entries: [Self.a, Self.b, Self.c], current: Self.b.id)
        #expect(queue.effectOnCurrent(of: .remove(Self.a.id)) == .unchanged)
        apply(.remove(Self.a.id), to: &queue)
        #expect(queue.currentID == Self.b.id)
        #expect(Self.ids(queue) == ["b.mp4", "c.mp4"])
    }

    @Test func moveReordersAndKeepsCurrent() {
        var queue = PlaybackQueue(entries: [Self.a, Self.b, Self.c], current: Self.b.id)
        apply(.move(Self.a.id, after: Self.c.id), to: &queue)
        #expect(Self.ids(queue) == ["b.mp4", "c.mp4", "a.mp4"])
        #expect(queue.currentID == Self.b.id)
        apply(.move(Self.a.id, after: nil), to: &queue)
        #expect(Self.ids(queue) == ["a.mp4", "b.mp4", "c.mp4"])
        apply(.move(Self.b.id, after: Self.c.id), to: &queue)
        #expect(Self.ids(queue) == ["a.mp4", "c.mp4", "b.mp4"])
        #expect(queue.currentID == Self.b.id)
        #expect(queue.effectOnCurrent(of: .move(Self.b.id, after: nil)) == .unchanged)
    }

    @Test func aMoveToWhereTheEntryStandsOrAfterItselfChangesNothing() {
        var queue = Self.abc
        apply(.move(Self.b.id, after: Self.a.id), to: &queue, changes: false)
        apply(.move(Self.a.id, after: nil), to: &queue, changes: false)
        apply(.move(Self.b.id, after: Self.b.id), to: &queue, changes: false)
        #expect(queue == Self.abc)
    }

    @Test func nextAndPreviousWalkTheQueueAndStopAtItsEnds() {
        var queue = Self.abc
        apply(.previous, to: &queue, changes: false)
        #expect(queue.effectOnCurrent(of: .next) == .switches(to: Self.b))
        apply(.next, to: &queue)
        apply(.next, to: &queue)
        #expect(queue.currentID == Self.c.id)
        // At the last entry `next` is the end of the last item: the group pauses there.
        #expect(queue.effectOnCurrent(of: .next) == .pausesAtEnd)
        apply(.next, to: &queue, changes: false)
        #expect(queue.currentID == Self.c.id)
        #expect(queue.effectOnCurrent(of: .previous) == .switches(to: Self.b))
        apply(.previous, to: &queue)
        #expect(queue.currentID == Self.b.id)
    }

    @Test func nextAdvancesWhateverTheActionAtItemEnd() {
        var queue = PlaybackQueue(entries: [Self.a, Self.b], actionAtItemEnd: .pause)
        apply(.next, to: &queue)
        #expect(queue.currentID == Self.b.id)
    }

    @Test func jumpMakesAnEntryCurrentAndAJumpToCurrentChangesNothing() {
        var queue = Self.abc
        #expect(queue.effectOnCurrent(of: .jump(to: Self.c.id)) == .switches(to: Self.c))
        apply(.jump(to: Self.c.id), to: &queue)
        #expect(queue.current == Self.c)
        #expect(queue.effectOnCurrent(of: .jump(to: Self.c.id)) == .unchanged)
        apply(.jump(to: Self.c.id), to: &queue, changes: false)
    }

    @Test func replaceCurrentPutsTheEntryInItsPlaceAndKeepsTheRest() {
        var queue = PlaybackQueue(entries: [Self.a, Self.b, Self.c], current: Self.b.id)
        #expect(queue.effectOnCurrent(of: .replaceCurrent(with: Self.d)) == .switches(to: Self.d))
        apply(.replaceCurrent(with: Self.d), to: &queue)
        #expect(Self.ids(queue) == ["a.mp4", "d.mp4", "c.mp4"])
        #expect(queue.current == Self.d)

        var empty = PlaybackQueue()
        apply(.replaceCurrent(with: Self.a), to: &empty)
        #expect(empty.entries == [Self.a])
        #expect(empty.current == Self.a)
    }

    @Test func theActionAtItemEndDecidesWhatTheEndOfAnItemDoes() {
        var queue = Self.abc
        #expect(queue.itemEnd == .advance(to: Self.b))
        apply(.setActionAtItemEnd(.pause), to: &queue)
        apply(.setActionAtItemEnd(.pause), to: &queue, changes: false)
        #expect(queue.itemEnd == .pauseAtEnd)
        apply(.setActionAtItemEnd(.advance), to: &queue)
        apply(.jump(to: Self.c.id), to: &queue)
        // The end of the last item: a pause on its last frame, whatever the action.
        #expect(queue.itemEnd == .pauseAtEnd)
    }

    @Test func theCurrentItemEndsWhereItsDurationMeetsTheTimeline() {
        let queue = Self.abc  // a lasts 10 s
        let anchor = SessionInstant(nanoseconds: 100_000_000_000)
        #expect(queue.currentItemEndInstant(anchorItemTime: .zero, anchorInstant: anchor, rate: 1) == anchor + .seconds(10))
        #expect(queue.currentItemEndInstant(anchorItemTime: ItemTime(nanoseconds: 4_000_000_000), anchorInstant: anchor, rate: 2)
                    == anchor + .seconds(3))
        #expect(queue.currentItemEndInstant(anchorItemTime: ItemTime(nanoseconds: 12_000_000_000), anchorInstant: anchor, rate: 1)
                    == anchor)
        #expect(queue.currentItemEndInstant(anchorItemTime: .zero, anchorInstant: anchor, rate: 0) == nil)
        #expect(queue.currentItemEndInstant(anchorItemTime: .zero, anchorInstant: anchor, rate: .nan) == nil)
        var unknown = queue
        unknown.apply(.jump(to: Self.c.id))  // c has no duration
        #expect(unknown.currentItemEndInstant(anchorItemTime: .zero, anchorInstant: anchor, rate: 1) == nil)
        #expect(PlaybackQueue().currentItemEndInstant(anchorItemTime: .zero, anchorInstant: anchor, rate: 1) == nil)
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        let name: String
        let change: PlaybackQueue.Change
        let reason: ProposalRejection.Reason
        var testDescription: String { name }
    }

    static let unknown = UUID()
    static let refusals: [Refusal] = [
        Refusal(name: "append a duplicate id", change: .append(a), reason: .duplicateEntry),
        Refusal(name: "insert a duplicate id", change: .insert(PlaybackQueue.Entry(id: b.id, identifier: "x"), after: nil),
                reason: .duplicateEntry),
        Refusal(name: "replace current with a held id", change: .replaceCurrent(with: c), reason: .duplicateEntry),
        Refusal(name: "replace current with its own id", change: .replaceCurrent(with: a), reason: .duplicateEntry),
        Refusal(name: "insert after an unknown id", change: .insert(d, after: unknown), reason: .unknownEntry),
        Refusal(name: "remove an unknown id", change: .remove(unknown), reason: .unknownEntry),
        Refusal(name: "move an unknown id", change: .move(unknown, after: nil), reason: .unknownEntry),
        Refusal(name: "move after an unknown id", change: .move(a.id, after: unknown), reason: .unknownEntry),
        Refusal(name: "jump to an unknown id", change: .jump(to: unknown), reason: .unknownEntry),
        Refusal(name: "an empty identifier", change: .append(PlaybackQueue.Entry(identifier: "")), reason: .oversized),
        Refusal(name: "an identifier of 1,025 bytes",
                change: .append(PlaybackQueue.Entry(identifier: String(repeating: "x", count: 1025))), reason: .oversized),
        Refusal(name: "an identifier of 513 two-byte characters",
                change: .append(PlaybackQueue.Entry(identifier: String(repeating: "é", count: 513))), reason: .oversized),
        Refusal(name: "an identity of 257 bytes",
                change: .append(PlaybackQueue.Entry(identifier: "x", identity: String(repeating: "h", count: 257))), reason: .oversized),
        Refusal(name: "a negative duration", change: .append(PlaybackQueue.Entry(identifier: "x", duration: TimeSpan(nanoseconds: -1))),
                reason: .durationOutOfRange),
        Refusal(name: "a duration past 24 h",
                change: .append(PlaybackQueue.Entry(identifier: "x", duration: PlaybackQueue.maximumEntryDuration + TimeSpan(nanoseconds: 1))),
                reason: .durationOutOfRange),
        Refusal(name: "a duration of Int64.min",
                change: .insert(PlaybackQueue.Entry(identifier: "x", duration: TimeSpan(nanoseconds: .min)), after: nil),
                reason: .durationOutOfRange),
        Refusal(name: "replace current with an oversized entry",
                change: .replaceCurrent(with: PlaybackQueue.Entry(identifier: String(repeating: "x", count: 2000))), reason: .oversized),
    ]

    @Test(arguments: refusals)
    func aBadChangeIsRefusedWithItsReasonAndChangesNothing(_ refusal: Refusal) {
        var queue = Self.abc
        let rejection = queue.rejection(of: refusal.change)
        #expect(rejection?.reason == refusal.reason)
        #expect(rejection?.detail.isEmpty == false)
        #expect(queue.effectOnCurrent(of: refusal.change) == .unchanged)
        apply(refusal.change, to: &queue, changes: false)
        #expect(queue == Self.abc)
    }

    @Test func theBoundsThemselvesAreAccepted() {
        var queue = Self.abc
        let widest = PlaybackQueue.Entry(identifier: String(repeating: "x", count: 1024), identity: String(repeating: "h", count: 256),
                                         duration: PlaybackQueue.maximumEntryDuration)
        #expect(queue.rejection(of: .append(widest)) == nil)
        apply(.append(widest), to: &queue)
        apply(.append(PlaybackQueue.Entry(identifier: "zero", duration: .zero)), to: &queue)
    }

    @Test func aFullQueueRefusesOneMoreButStillReplacesItsCurrentEntry() {
        let entries = (0..<PlaybackQueue.maximumEntries).map { PlaybackQueue.Entry(identifier: "item \($0)") }
        var queue = PlaybackQueue(entries: entries)
        #expect(queue.inconsistency() == nil)
        #expect(queue.rejection(of: .append(Self.d))?.reason == .tooManyEntries)
        #expect(queue.rejection(of: .insert(Self.d, after: nil))?.reason == .tooManyEntries)
        apply(.replaceCurrent(with: Self.d), to: &queue)
        #expect(queue.entries.count == PlaybackQueue.maximumEntries)
        apply(.remove(Self.d.id), to: &queue)
        apply(.append(Self.d), to: &queue)
        #expect(queue.entries.count == PlaybackQueue.maximumEntries)
    }

    @Test func aQueueFromAPeerIsCheckedBeforeItIsAdopted() throws {
        #expect(Self.abc.inconsistency() == nil)
        #expect(PlaybackQueue(entries: [Self.a, Self.a]).inconsistency()?.reason == .duplicateEntry)
        #expect(PlaybackQueue(entries: [Self.a], current: Self.b.id).inconsistency()?.reason == .unknownEntry)
        #expect(PlaybackQueue(entries: [PlaybackQueue.Entry(identifier: "")]).inconsistency()?.reason == .oversized)
        let tooMany = (0...PlaybackQueue.maximumEntries).map { PlaybackQueue.Entry(identifier: "item \($0)") }
        #expect(PlaybackQueue(entries: tooMany).inconsistency()?.reason == .tooManyEntries)

        // A queue with entries but no current one can only come from a forged encoding.
        let json = #"{"entries":[{"id":"\#(Self.a.id.uuidString)","identifier":"a.mp4"}],"actionAtItemEnd":"pause"}"#
        let forged = try JSONDecoder().decode(PlaybackQueue.self, from: Data(json.utf8))
        #expect(forged.currentID == nil)
        #expect(forged.inconsistency()?.reason == .unknownEntry)
    }

    @Test func aQueueAndItsChangesSurviveEncoding() throws {
        var queue = Self.abc
        queue.apply(.jump(to: Self.b.id))
        queue.apply(.setActionAtItemEnd(.pause))
        let decoded = try JSONDecoder().decode(PlaybackQueue.self, from: JSONEncoder().encode(queue))
        #expect(decoded == queue)

        let changes: [PlaybackQueue.Change] = [
            .append(Self.a), .insert(Self.b, after: Self.a.id), .insert(Self.c, after: nil), .remove(Self.a.id),
            .move(Self.b.id, after: nil), .move(Self.c.id, after: Self.b.id), .next, .previous, .jump(to: Self.c.id),
            .replaceCurrent(with: Self.d), .setActionAtItemEnd(.advance),
        ]
        for change in changes {
            #expect(try JSONDecoder().decode(PlaybackQueue.Change.self, from: JSONEncoder().encode(change)) == change)
        }
    }

    /// Two participants applying one seeded random stream of changes (bad ones included) hold
    /// the same queue after each, and it always passes its own consistency check.
    @Test(arguments: [UInt64(1), 7, 42])
    func participantsFedTheSameChangesHoldTheSameQueue(seed: UInt64) {
        var random = QueueTestRandom(seed: seed)
        var ana = PlaybackQueue()
        var ben = PlaybackQueue()
        var known: [UUID] = []
        for step in 0..<500 {
            let pick = { () -> UUID? in known.isEmpty ? nil : known[Int(random.next() % UInt64(known.count))] }
            let fresh = PlaybackQueue.Entry(id: random.next() % 5 == 0 ? (pick() ?? UUID()) : UUID(), identifier: "item \(step)")
            let change: PlaybackQueue.Change
            switch random.next() % 9 {
            case 0, 1: change = .append(fresh)
            case 2: change = .insert(fresh, after: random.next() % 2 == 0 ? nil : pick())
            case 3: change = .remove(pick() ?? UUID())
            case 4: change = .move(pick() ?? UUID(), after: pick())
            case 5: change = .next
            case 6: change = .previous
            case 7: change = .jump(to: random.next() % 4 == 0 ? UUID() : (pick() ?? UUID()))
            default: change = random.next() % 2 == 0 ? .replaceCurrent(with: fresh) : .setActionAtItemEnd(random.next() % 2 == 0 ? .pause : .advance)
            }
            let refused = ana.rejection(of: change) != nil
            let effect = ana.effectOnCurrent(of: change)
            let before = ana.currentID
            let changedAna = ana.apply(change)
            let changedBen = ben.apply(change)
            #expect(changedAna == changedBen)
            #expect(ana == ben)
            #expect(!(refused && changedAna))
            #expect(ana.inconsistency() == nil)
            switch effect {
            case .unchanged, .pausesAtEnd: #expect(ana.currentID == before)
            case .switches(let entry): #expect(ana.current == entry)
            }
            known = ana.entries.map(\.id)
        }
    }
}

/// Applies `change` to `queue` and expects it to change the queue (or, with `changes: false`,
/// to leave it as it was): `#expect` cannot call a mutating method itself.
func apply(_ change: PlaybackQueue.Change, to queue: inout PlaybackQueue, changes: Bool = true,
           sourceLocation: SourceLocation = #_sourceLocation) {
    let changed = queue.apply(change)
    #expect(changed == changes, sourceLocation: sourceLocation)
}
