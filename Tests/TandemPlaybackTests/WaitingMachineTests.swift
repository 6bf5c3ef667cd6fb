import Foundation
import Testing
import TandemClock
@testable import TandemPlayback

/// Waiting together in the machine: input → directive sequences in virtual time (no relay, no
/// clock read, no sleep). The session clock runs 1000 s ahead of the host clock.
@Suite struct WaitingMachineTests {
    static let second: Int64 = 1_000_000_000
    static let ms: Int64 = 1_000_000
    static let offset: Int64 = 1_000 * second
    let ana = UUID()
    let ben = UUID()

    /// Ordered at host `at` ms − 50 ms (in session time), effective at host `at` ms.
    func ordered(_ order: UInt64, _ who: UUID, at host: Int64, _ proposal: PlaybackProposal) -> OrderedInput {
        .proposal(OrderedProposal(originator: who, order: order, orderedAt: sessionNS(Self.offset + (host - 50) * Self.ms),
                                  effectiveAt: sessionNS(Self.offset + host * Self.ms), proposal: proposal))
    }

    /// Ana's machine, the clock known; `others` and Ana reported the film, Ben chose it.
    func machine(identity: String = "d=60.000;h=aa", others: [UUID]) -> (CoordinatorMachine, UInt64) {
        var machine = CoordinatorMachine(localParticipant: ana, waitsForPreroll: true)
        _ = machine.onClockMapping(ClockMapping(session: sessionNS(Self.offset), host: .zero, sessionSecondsPerHostSecond: 1), now: .zero)
        var order: UInt64 = 0
        for participant in others {
            order += 1
            _ = machine.onOrdered(ordered(order, participant, at: 0, .state(item: "film", identity: "d=60.000;h=aa", ready: true)), now: .zero)
        }
        order += 1
        _ = machine.onOrdered(ordered(order, ana, at: 0, .state(item: "film", identity: identity, ready: true)), now: .zero)
        order += 1
        _ = machine.onOrdered(ordered(order, ben, at: 0, .transition(item: "film", at: 0)), now: .zero)
        while let flying = machine.inFlight { _ = machine.onCommandCompleted(flying.id, now: .zero) }
        return (machine, order)
    }

    static func issued(_ directives: [CoordinatorMachine.OrderedDirective]) -> [PlaybackCommand] {
        directives.compactMap { if case .issue(let issued) = $0 { issued.command } else { nil } }
    }

    static func play(_ command: PlaybackCommand?) -> PlayCommand? {
        if case .play(let play)? = command { play } else { nil }
    }

    static func proposed(_ directives: [CoordinatorMachine.OrderedDirective]) -> [PlaybackProposal] {
        directives.compactMap { if case .propose(let proposal) = $0 { proposal } else { nil } }
    }

    @Test func aGroupOfOneIsIssuedThePlayAtOnceWithoutASeek() throws {
        var machine = CoordinatorMachine(localParticipant: ana, waitsForPreroll: true)
        _ = machine.onClockMapping(ClockMapping(session: sessionNS(Self.offset), host: .zero, sessionSecondsPerHostSecond: 1), now: .zero)
        _ = machine.onOrdered(ordered(1, ana, at: 0, .state(item: "film", identity: "d=60.000;h=aa", ready: true)), now: .zero)
        _ = machine.onOrdered(ordered(2, ana, at: 0, .transition(item: "film", at: 0)), now: .zero)
        while let flying = machine.inFlight { _ = machine.onCommandCompleted(flying.id, now: .zero) }
        let play = machine.onOrdered(ordered(3, ana, at: 1_000, .setRate(1)), now: hostNS(950 * Self.ms))
        let commands = Self.issued(play)
        #expect(commands.count == 1)
        guard case .play(let command)? = commands.first else { Issue.record("no play: \(commands)"); return }
        #expect(command.hostTime == hostNS(1_000 * Self.ms))
    }

    @Test func aGatedPlayIsPrerolledWithASeekReportedThenPlayedAtTheGatesStart() throws {
        var (machine, order) = machine(others: [ben])
        let play = machine.onOrdered(ordered(order + 1, ben, at: 1_000, .setRate(1)), now: hostNS(950 * Self.ms))
        // The seek first (buffering in anticipation), the play at the deadline queued behind it.
        guard case .seek(let seek)? = Self.issued(play).first else { Issue.record("no seek: \(play)"); return }
        #expect(seek.shouldBufferInAnticipationOfPlayback)
        #expect(seek.itemTime == .zero)
        guard case .play(let queued)? = machine.queued else { Issue.record("no play queued"); return }
        #expect(queued.hostTime == hostNS(1_950 * Self.ms))
        // A record that changes nothing but the version does not supersede the seek.
        let seekID = try #require(machine.inFlight?.id)
        #expect(machine.onOrdered(ordered(order + 2, ben, at: 1_010, .prerolled(version: order + 1)), now: hostNS(960 * Self.ms)).isEmpty)
        #expect(machine.inFlight?.id == seekID)
        // The seek completes: the report goes out and the play behind it is issued.
        let completed = machine.onCommandCompleted(seekID, now: hostNS(1_000 * Self.ms))
        #expect(completed.contains(.propose(.prerolled(version: order + 1))))
        #expect(completed.contains { if case .issue(let issued) = $0, case .play = issued.command { true } else { false } })
        // Ana's own report completes the gate (Ben's came first): the play moves to it, no seek again.
        let started = machine.onOrdered(ordered(order + 3, ana, at: 1_100, .prerolled(version: order + 1)), now: hostNS(1_060 * Self.ms))
        let commands = Self.issued(started)
        #expect(commands.count == 1)
        guard case .play(let command)? = commands.first else { Issue.record("no play: \(commands)"); return }
        #expect(command.hostTime == hostNS(1_100 * Self.ms))
        #expect(command.itemTime == .zero)
        #expect(machine.core.waiting.gate == nil)
    }

    /// Ana's seek completes, then she hears the report that starts the play (effective at 1,100 ms
    /// host) at `heard` ms: the play her player is issued.
    func playHeardLate(at heard: Int64) throws -> PlayCommand? {
        var (machine, order) = machine(others: [ben])
        _ = machine.onOrdered(ordered(order + 1, ben, at: 1_000, .setRate(1)), now: hostNS(950 * Self.ms))
        let seekID = try #require(machine.inFlight?.id)
        _ = machine.onCommandCompleted(seekID, now: hostNS(1_000 * Self.ms))
        while let flying = machine.inFlight { _ = machine.onCommandCompleted(flying.id, now: hostNS(1_000 * Self.ms)) }
        _ = machine.onOrdered(ordered(order + 2, ana, at: 1_050, .prerolled(version: order + 1)), now: hostNS(1_010 * Self.ms))
        let started = machine.onOrdered(ordered(order + 3, ben, at: 1_100, .prerolled(version: order + 1)), now: hostNS(heard * Self.ms))
        #expect(machine.core.waiting.gate == nil)
        guard case .play(let command)? = Self.issued(started).first else { return nil }
        return command
    }

    /// Ana joins a group that plays already: her history (to its end's mark) is assembled at
    /// `joined` ms, her own report comes back 5 ms later, then Ben seeks (without waiting for the
    /// others' pre-roll) at 3,000 ms and she
    /// hears it at `heard` ms. The plays her player is issued for each (her report's: the one in
    /// force after it).
    func joinerHearingALateSeek(joined: Int64, heard: Int64, joinLead: TimeSpan? = nil)
        throws -> (join: PlayCommand, afterReport: PlayCommand, seek: PlayCommand) {
        var machine = CoordinatorMachine(localParticipant: ana, waitsForPreroll: true)
        if let joinLead { machine.configuration.joinLead = joinLead }
        machine.snapshots.noteChannel(expectsHistoryEnd: true, present: nil)
        _ = machine.onClockMapping(ClockMapping(session: sessionNS(Self.offset), host: .zero, sessionSecondsPerHostSecond: 1), now: .zero)
        let now = hostNS(joined * Self.ms)
        _ = machine.onOrdered(ordered(1, ben, at: 0, .state(item: "film", identity: "d=60.000;h=aa", ready: true)), now: now)
        _ = machine.onOrdered(ordered(2, ben, at: 0, .transition(item: "film", at: 0)), now: now)
        _ = machine.onOrdered(ordered(3, ben, at: 1_000, .setRateImmediately(1)), now: now)
        let played = machine.onOrdered(.endOfHistory, now: now)
        let join = try #require(Self.play(machine.queued) ?? Self.play(Self.issued(played).last), "no play: \(played)")
        while let flying = machine.inFlight { _ = machine.onCommandCompleted(flying.id, now: now) }
        let reported = machine.onOrdered(ordered(4, ana, at: joined, .state(item: "film", identity: "d=60.000;h=aa", ready: true)),
                                         now: hostNS((joined + 5) * Self.ms))
        let afterReport = try #require(Self.play(Self.issued(reported).last) ?? Self.play(machine.lastCommand))
        while let flying = machine.inFlight { _ = machine.onCommandCompleted(flying.id, now: now) }
        let sought = machine.onOrdered(ordered(5, ben, at: 3_000, .seekImmediately(to: ItemTime(nanoseconds: 10 * Self.second))), now: hostNS(heard * Self.ms))
        let seek = try #require(Self.play(machine.queued) ?? Self.play(Self.issued(sought).last), "no play: \(sought)")
        return (join, afterReport, seek)
    }

    @Test func aJoinerComesInAJoinLeadAheadAndAPlayerThatFellBehindAPrerollAhead() throws {
        let (join, afterReport, seek) = try joinerHearingALateSeek(joined: 2_000, heard: 3_200)
        // Joining, 1 s into the play: 120 ms ahead, where the group is then.
        #expect(join.hostTime == hostNS(2_120 * Self.ms))
        #expect(join.itemTime == ItemTime(nanoseconds: 1_120 * Self.ms))
        // Her own report changes nothing she sees: she keeps that start (not 300 ms from the report).
        #expect(afterReport.hostTime == join.hostTime)
        #expect(afterReport.itemTime == join.itemTime)
        // Playing already, a seek heard 200 ms after its instant: a pre-roll (300 ms) ahead.
        #expect(seek.hostTime == hostNS(3_500 * Self.ms))
        #expect(seek.itemTime == ItemTime(nanoseconds: 10_500 * Self.ms))
        // A player that seeks slowly (mpv) sets the join lead to the pre-roll: 300 ms ahead.
        let slow = try joinerHearingALateSeek(joined: 2_000, heard: 3_200, joinLead: .milliseconds(300))
        #expect(slow.join.hostTime == hostNS(2_300 * Self.ms))
        #expect(slow.join.itemTime == ItemTime(nanoseconds: 1_300 * Self.ms))
    }

    @Test func aPrerolledPlayerThatHearsTheStartLateComesInAShortLeadAheadNotAPreroll() throws {
        // 30 ms after the start: picked up 50 ms ahead, on the same timeline (its player holds
        // the frames from 0 on, and 80 ms in is four frames at most at 25 frames/s and up).
        let late = try #require(try playHeardLate(at: 1_130))
        #expect(late.hostTime == hostNS(1_180 * Self.ms))
        #expect(late.itemTime == ItemTime(nanoseconds: 80 * Self.ms))
        // Heard at its start or before: the start itself.
        let onTime = try #require(try playHeardLate(at: 1_090))
        #expect(onTime.hostTime == hostNS(1_100 * Self.ms))
        // 200 ms after it: a pre-roll ahead, as a player that must seek again needs.
        let later = try #require(try playHeardLate(at: 1_300))
        #expect(later.hostTime == hostNS(1_600 * Self.ms))
        #expect(later.itemTime == ItemTime(nanoseconds: 500 * Self.ms))
    }

    @Test func aPlayImmediatelyIsNeverGated() throws {
        var (machine, order) = machine(others: [ben])
        #expect(try machine.onLocalRequest(.rate(1, .playImmediately), now: .zero) == [.propose(.setRateImmediately(1))])
        let play = machine.onOrdered(ordered(order + 1, ana, at: 1_000, .setRateImmediately(1)), now: hostNS(950 * Self.ms))
        guard case .play(let command)? = Self.issued(play).first else { Issue.record("no play: \(play)"); return }
        #expect(command.hostTime == hostNS(1_000 * Self.ms))
    }

    @Test func aMismatchedParticipantSuspendsItselfWithoutHoldingTheGroupAndResumesWhenItMatches() throws {
        var (machine, order) = machine(identity: "d=61.000;h=bb", others: [ben])
        #expect(machine.core.isMismatched(ana))
        #expect(machine.ownSuspensions.values.contains(.coordinatedPlaybackNotPossible))
        let id = try #require(machine.mismatchSuspension)
        // The group plays on: Ana's suspension, once ordered, does not hold it.
        _ = machine.onOrdered(ordered(order + 1, ana, at: 100, .beginSuspension(id: id, reason: .coordinatedPlaybackNotPossible,
                                                                           triggersWaiting: true, waitingLimit: nil)), now: hostNS(60 * Self.ms))
        #expect(!machine.core.isWaiting)
        let play = machine.onOrdered(ordered(order + 2, ben, at: 1_000, .setRate(1)), now: hostNS(950 * Self.ms))
        #expect(Self.issued(play).isEmpty)
        #expect(machine.core.waiting.gate == nil)
        #expect(machine.core.timeline.rate == 1)
        // Ana loads the right file: the suspension ends and the player catches up.
        let fixed = machine.onOrdered(ordered(order + 3, ana, at: 2_000, .state(item: "film", identity: "d=60.000;h=aa", ready: true)),
                                      now: hostNS(1_950 * Self.ms))
        #expect(Self.proposed(fixed) == [.endSuspension(id: id, proposedTime: nil)])
        #expect(machine.mismatchSuspension == nil)
        #expect(!Self.issued(fixed).isEmpty)
    }

    @Test func theMismatchSuspensionIsBegunOnceAndProposedAsANoHoldSuspension() throws {
        var machine = CoordinatorMachine(localParticipant: ana, waitsForPreroll: true)
        _ = machine.onClockMapping(ClockMapping(session: sessionNS(Self.offset), host: .zero, sessionSecondsPerHostSecond: 1), now: .zero)
        _ = machine.onOrdered(ordered(1, ben, at: 0, .state(item: "film", identity: "h=aa", ready: true)), now: .zero)
        _ = machine.onOrdered(ordered(2, ben, at: 0, .transition(item: "film", at: 0)), now: .zero)
        let mine = machine.onOrdered(ordered(3, ana, at: 0, .state(item: "film", identity: "h=bb", ready: true)), now: .zero)
        let proposals = Self.proposed(mine)
        #expect(proposals.count == 1)
        guard case .beginSuspension(_, let reason, _, _)? = proposals.first else { Issue.record("no suspension: \(mine)"); return }
        #expect(reason == .coordinatedPlaybackNotPossible)
        let again = machine.onOrdered(ordered(4, ben, at: 10, .state(item: "film", identity: "h=aa", ready: true)), now: .zero)
        #expect(Self.proposed(again).isEmpty)
    }
}
