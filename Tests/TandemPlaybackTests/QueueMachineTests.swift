import Foundation
import Testing
import TandemClock
@testable import TandemPlayback

/// The end of an item as the machine carries it out, as pure input → directive sequences: the
/// wake-up ahead of the end, the next item's pre-roll, the play at the end instant, no proposal.
/// The session clock runs 1000 s ahead of the host clock.
@Suite struct QueueMachineTests {
    static let second: Int64 = 1_000_000_000
    static let ms: Int64 = 1_000_000
    static let offset: Int64 = 1_000 * second
    let ana = UUID()
    let ben = UUID()
    let first = PlaybackQueue.Entry(identifier: "first.mp4", duration: .seconds(10))
    let second = PlaybackQueue.Entry(identifier: "second.mp4", duration: .seconds(5))

    func ordered(_ order: UInt64, _ who: UUID, at host: Int64, _ proposal: PlaybackProposal) -> OrderedInput {
        .proposal(OrderedProposal(originator: who, order: order, orderedAt: sessionNS(Self.offset + host - 50 * Self.ms),
                                  effectiveAt: sessionNS(Self.offset + host), proposal: proposal))
    }

    static func issued<D>(_ directives: [D]) -> [CoordinatorMachine.IssuedCommand] {
        directives.compactMap { directive -> CoordinatorMachine.IssuedCommand? in
            switch directive {
            case let d as CoordinatorMachine.OrderedDirective: if case .issue(let i) = d { return i }
            case let d as CoordinatorMachine.TickDirective: if case .issue(let i) = d { return i }
            case let d as CoordinatorMachine.CompletionDirective: if case .issue(let i) = d { return i }
            default: break
            }
            return nil
        }
    }

    static func wakes<D>(_ directives: [D]) -> [HostInstant] {
        directives.compactMap { directive -> HostInstant? in
            switch directive {
            case let d as CoordinatorMachine.OrderedDirective: if case .wake(let w) = d { return w }
            case let d as CoordinatorMachine.TickDirective: if case .wake(let w) = d { return w }
            case let d as CoordinatorMachine.CompletionDirective: if case .wake(let w) = d { return w }
            default: break
            }
            return nil
        }
    }

    /// Ana's machine, the queue `first` (10 s) then `second` (5 s), playing `first` from host 1 s:
    /// `first` ends at host 11 s. Every command completed at once.
    func playing() -> (CoordinatorMachine, lastWake: HostInstant?) {
        var machine = CoordinatorMachine(localParticipant: ana)
        _ = machine.onClockMapping(ClockMapping(session: sessionNS(Self.offset), host: .zero), now: .zero)
        _ = machine.onOrdered(ordered(1, ben, at: 0, .queue(.append(first))), now: .zero)
        _ = machine.onOrdered(ordered(2, ben, at: 0, .queue(.append(second))), now: .zero)
        var wake = Self.wakes(machine.onOrdered(ordered(3, ben, at: 1 * Self.second, .setRate(1)), now: hostNS(900 * Self.ms))).last
        while let flying = machine.inFlight {
            let done = machine.onCommandCompleted(flying.id, now: hostNS(950 * Self.ms))
            wake = Self.wakes(done).last ?? wake
        }
        return (machine, wake)
    }

    @Test func aheadOfTheEndThePlayerIsIssuedTheNextItemThenItsPlayAtTheEndInstant() throws {
        var (machine, wake) = playing()
        // Besides the re-map, the machine wakes itself a lead ahead of the end: never later.
        #expect(wake.map { $0 <= hostNS(10 * Self.second) } == true, "\(String(describing: wake))")
        #expect(machine.itemEndWake() == hostNS(11 * Self.second) - CoordinatorMachine.itemEndLead)
        // Before the lead, a tick changes nothing of the item.
        let early = Self.issued(machine.onTick(now: hostNS(5 * Self.second)))
        #expect(early.allSatisfy { $0.command.expectedCurrentItemIdentifier == "first.mp4" })
        // At the lead: a seek for the next item at its start, buffering for the play …
        let tick = machine.onTick(now: hostNS(10 * Self.second))
        let seek = try #require(Self.issued(tick).last)
        guard case .seek(let seeking) = seek.command else { Issue.record("not a seek: \(seek.command)"); return }
        #expect(seeking.expectedCurrentItemIdentifier == "second.mp4" && seeking.itemTime == .zero)
        #expect(seeking.shouldBufferInAnticipationOfPlayback && seeking.anticipatedPlaybackRate == 1)
        #expect(seeking.completionDueDate == hostNS(11 * Self.second))
        // … nothing proposed, and the replicated core is still on the first item.
        #expect(machine.core.timeline.item == "first.mp4")
        #expect(tick.allSatisfy { if case .emit = $0 { false } else { true } })
        // … then the play of the next item at the end instant, from its first frame.
        let then = Self.issued(machine.onCommandCompleted(seek.id, now: hostNS(10_200 * Self.ms)))
        guard case .play(let play)? = then.first?.command else { Issue.record("no play: \(then)"); return }
        #expect(play.expectedCurrentItemIdentifier == "second.mp4" && play.itemTime == .zero)
        #expect(play.hostTime == hostNS(11 * Self.second) && play.rate == 1)
        // A tick at the end itself issues nothing new: the player follows already; the next
        // wake-up is ahead of the second item's end (host 16 s).
        let atEnd = machine.onTick(now: hostNS(11 * Self.second))
        #expect(Self.issued(atEnd).allSatisfy { $0.command.expectedCurrentItemIdentifier == "second.mp4" })
        #expect(Self.wakes(atEnd).last.map { $0 <= hostNS(15 * Self.second) && $0 > hostNS(11 * Self.second) } == true)
        #expect(machine.itemEndWake() == hostNS(15 * Self.second))
        // The end is told at its instant, once: not again when the next record settles it.
        let told = atEnd.filter { if case .emit(.itemEnded(_, let next, 1)) = $0 { next == second } else { false } }
        #expect(told.count == 1, "\(atEnd)")
        let settled = machine.onOrdered(ordered(4, ana, at: 11_500 * Self.ms, .state(item: "second.mp4", identity: nil, ready: true)),
                                        now: hostNS(11_400 * Self.ms))
        #expect(machine.core.timeline.item == "second.mp4")
        #expect(!settled.contains { if case .emit(.itemEnded) = $0 { true } else { false } }, "\(settled)")
    }

    /// A record inside the lead before an end that leaves the timeline as it was (a
    /// participant's report of the next item, which its player loaded for the pre-roll) is
    /// decided on the group as it will be after the end, as a tick is: the player that prepares
    /// the next item is not sent back to the ending one, to be sent on again at the next tick.
    @Test func aRecordAheadOfAnEndKeepsThePlayerOnTheNextItem() throws {
        var (machine, _) = playing()
        _ = machine.onTick(now: hostNS(10 * Self.second))
        while let flying = machine.inFlight { _ = machine.onCommandCompleted(flying.id, now: hostNS(10_100 * Self.ms)) }
        var issued: [CoordinatorMachine.IssuedCommand] = []
        for (order, host) in [(UInt64(4), Int64(10_300)), (5, 10_600)] {
            let report = machine.onOrdered(ordered(order, order == 4 ? ben : ana, at: host * Self.ms,
                                                   .state(item: "second.mp4", identity: nil, ready: true)),
                                           now: hostNS((host - 50) * Self.ms))
            issued += Self.issued(report)
            while let flying = machine.inFlight {
                issued += Self.issued(machine.onCommandCompleted(flying.id, now: hostNS(host * Self.ms)))
            }
            issued += Self.issued(machine.onTick(now: hostNS((host + 100) * Self.ms)))
        }
        #expect(machine.core.timeline.item == "first.mp4", "no record settles the end before it")
        #expect(issued.allSatisfy { $0.command.expectedCurrentItemIdentifier == "second.mp4" }, "\(issued.map(\.command))")
        // What the player is issued plays the next item from its start at the end instant.
        let plays = issued.compactMap { if case .play(let play) = $0.command { play } else { nil } }
        #expect(plays.allSatisfy { $0.itemTime + ($0.hostTime - hostNS(11 * Self.second)) * $0.rate == .zero }, "\(plays)")
    }

    @Test func theNextRecordSettlesTheEndAndTheLastItemPausesOnItsLastFrame() throws {
        var (machine, _) = playing()
        _ = machine.onTick(now: hostNS(10 * Self.second))
        while let flying = machine.inFlight { _ = machine.onCommandCompleted(flying.id, now: hostNS(10_100 * Self.ms)) }
        // A record after the end: the replicated core settles the end first, and the player is not
        // sent back to the first item.
        let report = machine.onOrdered(ordered(4, ana, at: 12 * Self.second, .state(item: "second.mp4", identity: nil, ready: true)),
                                       now: hostNS(11_950 * Self.ms))
        #expect(machine.core.timeline.item == "second.mp4" && machine.core.timeline.anchorSessionTime == sessionNS(Self.offset + 11 * Self.second))
        #expect(Self.issued(report).allSatisfy { $0.command.expectedCurrentItemIdentifier == "second.mp4" })
        let ended = report.contains { if case .emit(.itemEnded(_, let next, 1)) = $0 { next == second } else { false } }
        #expect(ended, "\(report)")
        while let flying = machine.inFlight { _ = machine.onCommandCompleted(flying.id, now: hostNS(12 * Self.second)) }
        // Ahead of the last item's end (host 16 s): a pause on its last frame at that instant.
        let tick = machine.onTick(now: hostNS(15_500 * Self.ms))
        let pauses = Self.issued(tick).compactMap { if case .pause(let p) = $0.command { p } else { nil } }
        let pause = try #require(pauses.last, "\(tick)")
        #expect(pause.expectedCurrentItemIdentifier == "second.mp4" && pause.itemTime == itemNS(5 * Self.second))
        #expect(pause.hostTime == hostNS(16 * Self.second))
        // Nothing more to pre-roll; one wake-up left, to tell the end at its instant.
        #expect(machine.itemEndWake() == hostNS(16 * Self.second))
        let told = machine.onTick(now: hostNS(16 * Self.second))
        #expect(told.contains { if case .emit(.itemEnded(_, nil, nil)) = $0 { true } else { false } }, "\(told)")
        #expect(machine.itemEndWake() == nil)
    }

    /// A pause after an item's end, before any record has settled it in the replicated core:
    /// made against the group as it stands (the next item, 1 s in), not the ended item's
    /// timeline run on past its end. The queue scenario's pause after its last transition read
    /// 20 s, the first item's length, on a 3 s clip.
    @Test func aPauseJustAfterAnEndPausesTheNextItemWhereItIs() throws {
        var (machine, _) = playing()
        _ = machine.onTick(now: hostNS(10 * Self.second))
        while let flying = machine.inFlight { _ = machine.onCommandCompleted(flying.id, now: hostNS(10_100 * Self.ms)) }
        #expect(machine.core.timeline.item == "first.mp4", "no record has settled the end yet")
        #expect(machine.expectedItemTime(atHost: hostNS(12 * Self.second)) == itemNS(1 * Self.second))
        #expect(try machine.onLocalRequest(.rate(0, []), now: hostNS(12 * Self.second)) == [.propose(.pause(at: itemNS(1 * Self.second), item: "second.mp4"))])
        // Before the end, on the first item as ever.
        #expect(try machine.onLocalRequest(.rate(0, []), now: hostNS(4 * Self.second)) == [.propose(.pause(at: itemNS(3 * Self.second), item: "first.mp4"))])
    }

    @Test func aQueueRequestIsProposedOrRefusedAsEveryoneWouldSkipIt() throws {
        let (machine, _) = playing()
        #expect(try machine.onLocalRequest(.queue(.next), now: hostNS(2 * Self.second)) == [.propose(.queue(.next))])
        #expect(throws: ProposalRejection.self) { try machine.onLocalRequest(.queue(.jump(to: UUID())), now: hostNS(2 * Self.second)) }
    }
}
