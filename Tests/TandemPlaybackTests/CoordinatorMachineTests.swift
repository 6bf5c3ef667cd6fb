import Foundation
import Testing
import TandemClock
@testable import TandemPlayback

/// The coordinator's decisions as pure input → directive sequences, in virtual time: no relay,
/// no clock read, no sleep. The session clock runs 1000 s ahead of the host clock (at the
/// mapping's rate, 1 unless the case says otherwise).
@Suite struct CoordinatorMachineTests {
    static let second: Int64 = 1_000_000_000
    static let ms: Int64 = 1_000_000
    /// The session instant at host instant 0.
    static let offset: Int64 = 1_000 * second
    let ana = UUID()
    let ben = UUID()

    static func mapping(rate: Double = 1) -> ClockMapping {
        ClockMapping(session: sessionNS(offset), host: .zero, sessionSecondsPerHostSecond: rate)
    }

    /// Ordered at host instant `at` − 50 ms (in session time), effective at host instant `at`.
    func ordered(_ order: UInt64, _ who: UUID, at host: Int64, _ proposal: PlaybackProposal) -> OrderedInput {
        .proposal(OrderedProposal(originator: who, order: order, orderedAt: sessionNS(Self.offset + host - 50 * Self.ms),
                                  effectiveAt: sessionNS(Self.offset + host), proposal: proposal))
    }

    /// A machine for Ana, with the clock known, Ben having chosen the film (announced 60 s long).
    func machine(rate: Double = 1) -> CoordinatorMachine {
        var machine = CoordinatorMachine(localParticipant: ana)
        _ = machine.onClockMapping(Self.mapping(rate: rate), now: .zero)
        _ = machine.onOrdered(ordered(1, ben, at: 0, .state(item: "film", identity: "d=60.000;h=aa", ready: true)), now: .zero)
        _ = machine.onOrdered(ordered(2, ben, at: 0, .transition(item: "film", at: 0)), now: .zero)
        if let flying = machine.inFlight { _ = machine.onCommandCompleted(flying.id, now: .zero) }
        if let flying = machine.inFlight { _ = machine.onCommandCompleted(flying.id, now: .zero) }
        return machine
    }

    static func issued(_ directives: [CoordinatorMachine.OrderedDirective]) -> [CoordinatorMachine.IssuedCommand] {
        directives.compactMap { if case .issue(let issued) = $0 { issued } else { nil } }
    }

    static func issued(_ directives: [CoordinatorMachine.TickDirective]) -> [CoordinatorMachine.IssuedCommand] {
        directives.compactMap { if case .issue(let issued) = $0 { issued } else { nil } }
    }

    static func issued(_ directives: [CoordinatorMachine.CompletionDirective]) -> [CoordinatorMachine.IssuedCommand] {
        directives.compactMap { if case .issue(let issued) = $0 { issued } else { nil } }
    }

    static func issued(_ directives: [CoordinatorMachine.ClockMappingDirective]) -> [CoordinatorMachine.IssuedCommand] {
        directives.compactMap { if case .issue(let issued) = $0 { issued } else { nil } }
    }

    static func issued(_ directives: [CoordinatorMachine.SuspensionDirective]) -> [CoordinatorMachine.IssuedCommand] {
        directives.compactMap { if case .issue(let issued) = $0 { issued } else { nil } }
    }

    @Test func aTimelineWaitsForTheClockMappingAndIsIssuedWhenItArrives() throws {
        var machine = CoordinatorMachine(localParticipant: ana)
        _ = machine.onOrdered(ordered(1, ben, at: 1 * Self.second, .transition(item: "film", at: 0)), now: .zero)
        let played = machine.onOrdered(ordered(2, ben, at: 2 * Self.second, .setRate(1)), now: .zero)
        // No clock yet: no command, and nothing to wake for (no polling).
        #expect(played.allSatisfy { if case .emit = $0 { true } else { false } })
        let mapped = machine.onClockMapping(Self.mapping(), now: hostNS(500 * Self.ms))
        // A jump from wherever the player is: a seek first, due at the play's instant …
        let seek = try #require(Self.issued(mapped).first)
        guard case .seek(let seeking) = seek.command else { Issue.record("not a seek: \(seek.command)"); return }
        #expect(seeking.itemTime == 0 && seeking.shouldBufferInAnticipationOfPlayback && seeking.anticipatedPlaybackRate == 1)
        #expect(seeking.completionDueDate == hostNS(2 * Self.second))
        #expect(seeking.expectedCurrentItemIdentifier == "film" && seeking.originator == nil)
        // … then the play, once the seek is done, at the change's instant in host time.
        let then = Self.issued(machine.onCommandCompleted(seek.id, now: hostNS(600 * Self.ms)))
        guard case .play(let play)? = then.first?.command else { Issue.record("no play: \(then)"); return }
        #expect(play.hostTime == hostNS(2 * Self.second) && play.itemTime == 0 && play.rate == 1 && play.version == 2)
        #expect(play.completionDueDate == hostNS(2 * Self.second) + machine.configuration.commandTimeout)
    }

    @Test(arguments: [1.0, 1.000_1, 0.999_95])
    func theSessionClocksDriftEntersTheRateAndTheInstantInOnePlace(drift: Double) throws {
        var machine = machine(rate: drift)
        let directives = machine.onOrdered(ordered(3, ben, at: 5 * Self.second, .setRate(1.5)), now: hostNS(4 * Self.second))
        guard case .play(let play)? = Self.issued(directives).first?.command else { Issue.record("no play: \(directives)"); return }
        // Media seconds per host second: the group's rate times session seconds per host second.
        #expect(play.rate == 1.5 * drift)
        // The host instant at which the session clock reads the change's instant.
        #expect(play.hostTime == Self.mapping(rate: drift).hostTime(atSession: sessionNS(Self.offset + 5 * Self.second)))
        #expect(play.originator == ben)
        #expect(play.timeline.rate == 1.5 && play.issuedAt == Self.mapping(rate: drift).sessionTime(atHost: hostNS(4 * Self.second)))
    }

    @Test func aCommandNotCompletedByItsDueDateIsAbandonedAndNeverBlocksTheNext() throws {
        var machine = machine()
        let first = Self.issued(machine.onOrdered(ordered(3, ben, at: 1 * Self.second, .setRate(1)), now: hostNS(900 * Self.ms)))
        let play = try #require(first.first)
        let due = play.command.completionDueDate
        #expect(due == hostNS(3 * Self.second))
        // Before the due date nothing is given up; the wake-up asked for is the due date.
        let early = machine.onTick(now: hostNS(1_500 * Self.ms))
        #expect(!early.contains { if case .abandon = $0 { true } else { false } })
        // At it, the command is abandoned with an event, and the coordinator goes on.
        let late = machine.onTick(now: due)
        #expect(late.contains(.abandon(play)))
        #expect(late.contains(.emit(.commandAbandoned(play.command))))
        #expect(machine.inFlight?.id != play.id)
        // A completion that comes after all changes nothing.
        #expect(machine.onCommandCompleted(play.id, now: due + .seconds(1)).isEmpty)
        // The next change is issued at once.
        let next = Self.issued(machine.onOrdered(ordered(4, ben, at: 4 * Self.second, .pause(at: nil)), now: due + .milliseconds(10)))
        guard case .pause(let pause)? = next.first?.command else { Issue.record("no pause: \(next)"); return }
        #expect(pause.hostTime == hostNS(4 * Self.second) && pause.itemTime == itemNS(3 * Self.second))
    }

    @Test func aSeekThatIsNeverCompletedIsAbandonedAndThePlayBehindItGoesOut() throws {
        var machine = machine()
        _ = Self.issued(machine.onOrdered(ordered(3, ben, at: 1 * Self.second, .setRate(1)), now: hostNS(900 * Self.ms)))
        let jump = Self.issued(machine.onOrdered(ordered(4, ben, at: 2 * Self.second, .seek(to: itemNS(30 * Self.second))),
                                                 now: hostNS(1_950 * Self.ms)))
        guard case .seek(let seek)? = jump.first?.command else { Issue.record("no seek: \(jump)"); return }
        #expect(seek.itemTime == itemNS(30 * Self.second) && seek.originator == ben)
        #expect(machine.queued != nil)
        let tick = machine.onTick(now: seek.completionDueDate)
        #expect(tick.contains { if case .emit(.commandAbandoned(.seek)) = $0 { true } else { false } })
        guard case .play(let play)? = Self.issued(tick).first?.command else { Issue.record("no play: \(tick)"); return }
        #expect(play.itemTime == itemNS(30 * Self.second) && play.hostTime == hostNS(2 * Self.second))
    }

    @Test func aNewerDecisionSupersedesTheCommandInFlight() throws {
        var machine = machine()
        let play = try #require(Self.issued(machine.onOrdered(ordered(3, ben, at: 1 * Self.second, .setRate(1)),
                                                              now: hostNS(900 * Self.ms))).first)
        let pause = try #require(Self.issued(machine.onOrdered(ordered(4, ben, at: 1_100 * Self.ms, .pause(at: nil)),
                                                               now: hostNS(950 * Self.ms))).first)
        #expect(machine.inFlight == pause)
        #expect(machine.onCommandCompleted(play.id, now: hostNS(1 * Self.second)).isEmpty)
        #expect(machine.inFlight == pause)
        #expect(machine.onCommandCompleted(pause.id, now: hostNS(1_100 * Self.ms)).allSatisfy { if case .issue = $0 { false } else { true } })
        #expect(machine.inFlight == nil)
    }

    @Test func aPlayingTimelineIsRemappedEverySecondByTheMachinesOwnWakeUps() throws {
        var machine = machine()
        let directives = machine.onOrdered(ordered(3, ben, at: 1 * Self.second, .setRate(1)), now: hostNS(900 * Self.ms))
        let play = try #require(Self.issued(directives).first)
        _ = machine.onCommandCompleted(play.id, now: hostNS(900 * Self.ms))
        #expect(directives.contains(.wake(at: hostNS(1_900 * Self.ms))))
        // Not before the interval.
        #expect(Self.issued(machine.onTick(now: hostNS(1_800 * Self.ms))).isEmpty)
        let remap = machine.onTick(now: hostNS(1_900 * Self.ms))
        guard case .play(let again)? = Self.issued(remap).first?.command else { Issue.record("no re-map: \(remap)"); return }
        // On the same timeline, a re-map lead ahead, by nobody.
        #expect(again.originator == nil && again.version == 3)
        #expect(again.hostTime == hostNS(1_900 * Self.ms) + machine.configuration.remapLead)
        #expect(again.itemTime == itemNS(950 * Self.ms))
        #expect(remap.contains(.wake(at: hostNS(2_900 * Self.ms))))
    }

    @Test func aSuspendedParticipantIsDrivenByNothingAndCatchesUpWithASeekThenAPlay() throws {
        var machine = machine()
        _ = machine.onOrdered(ordered(3, ben, at: 1 * Self.second, .setRate(1)), now: hostNS(900 * Self.ms))
        let stall = UUID()
        let began = machine.onSuspensionBegan(stall, reason: .stallRecovery, now: hostNS(2 * Self.second))
        #expect(began == [.propose(.beginSuspension(id: stall, reason: .stallRecovery, triggersWaiting: true, waitingLimit: nil))])
        #expect(machine.isSuspended)
        // Changes while suspended: the timeline follows the group, the player is told nothing.
        let change = machine.onOrdered(ordered(4, ben, at: 3 * Self.second, .setRate(2)), now: hostNS(2_950 * Self.ms))
        #expect(Self.issued(change).isEmpty && machine.core.timeline.rate == 2)
        #expect(Self.issued(machine.onTick(now: hostNS(5 * Self.second))).isEmpty)
        // Ending it proposes the end, and catches the player up a pre-roll ahead.
        let ended = machine.onSuspensionEnded(stall, proposingNewTime: nil, now: hostNS(5 * Self.second))
        #expect(ended.first == .propose(.endSuspension(id: stall, proposedTime: nil)))
        let seek = try #require(Self.issued(ended).first)
        guard case .seek = seek.command else { Issue.record("not a seek: \(seek.command)"); return }
        guard case .play(let play)? = Self.issued(machine.onCommandCompleted(seek.id, now: hostNS(5_010 * Self.ms))).first?.command else {
            Issue.record("no play after the seek")
            return
        }
        #expect(play.hostTime == hostNS(5 * Self.second) + machine.configuration.prerollLead)
        // 2 s of media at 1, then 2.3 s at 2.
        #expect(play.itemTime == itemNS(2 * Self.second + 4_600 * Self.ms))
        // Ending it again changes nothing.
        #expect(machine.onSuspensionEnded(stall, proposingNewTime: nil, now: hostNS(6 * Self.second)).isEmpty)
    }

    @Test func theParticipantLimitIsApplesAndTheGroupHoldLimitTandemsOwn() {
        var machine = machine()
        for (order, who) in [(UInt64(3), ana), (4, UUID())] {
            _ = machine.onOrdered(ordered(order, who, at: 0, .state(item: "film", identity: nil, ready: true)), now: .zero)
        }
        // Three participants have reported; a limit of 2 means the group no longer waits for this reason.
        machine.configuration.participantLimits[.stallRecovery] = 2
        machine.configuration.groupHoldLimits[.stallRecovery] = 1
        let over = UUID()
        #expect(machine.onSuspensionBegan(over, reason: .stallRecovery, now: .zero)
            == [.propose(.beginSuspension(id: over, reason: .stallRecovery, triggersWaiting: false, waitingLimit: 1))])
        machine.configuration.participantLimits[.stallRecovery] = 3
        let within = UUID()
        #expect(machine.onSuspensionBegan(within, reason: .stallRecovery, now: .zero)
            == [.propose(.beginSuspension(id: within, reason: .stallRecovery, triggersWaiting: true, waitingLimit: 1))])
        // A reason that is not among those that trigger waiting never makes the group wait.
        let scrub = UUID()
        #expect(machine.onSuspensionBegan(scrub, reason: .userIsChangingCurrentTime, now: .zero)
            == [.propose(.beginSuspension(id: scrub, reason: .userIsChangingCurrentTime, triggersWaiting: false, waitingLimit: nil))])
    }

    @Test func whileTheGroupWaitsToPlayThePlayerIsPausedInAnticipationThenBuffered() throws {
        var machine = machine()
        _ = machine.onOrdered(ordered(3, ben, at: 1 * Self.second, .setRate(1)), now: hostNS(900 * Self.ms))
        let waiting = machine.onOrdered(ordered(4, ben, at: 2 * Self.second, .beginSuspension(id: UUID(), reason: .stallRecovery,
                                                                                                 triggersWaiting: true, waitingLimit: nil)),
                                        now: hostNS(1_950 * Self.ms))
        #expect(waiting.contains { if case .emit(.groupWaiting) = $0 { true } else { false } })
        let pause = try #require(Self.issued(waiting).first)
        guard case .pause(let pausing) = pause.command else { Issue.record("not a pause: \(pause.command)"); return }
        #expect(pausing.shouldBufferInAnticipationOfPlayback && pausing.anticipatedPlaybackRate == 1)
        #expect(pausing.hostTime == hostNS(2 * Self.second) && pausing.itemTime == itemNS(1 * Self.second))
        guard case .buffer(let buffer)? = Self.issued(machine.onCommandCompleted(pause.id, now: hostNS(2 * Self.second))).first?.command else {
            Issue.record("no buffering command")
            return
        }
        #expect(buffer.itemTime == itemNS(1 * Self.second) && buffer.anticipatedPlaybackRate == 1 && buffer.originator == ben)
        // A pause for good anticipates nothing.
        var paused = self.machine()
        guard case .pause(let still)? = Self.issued(paused.onOrdered(ordered(3, ben, at: 1 * Self.second, .pause(at: nil)),
                                                                     now: hostNS(900 * Self.ms))).first?.command else {
            Issue.record("no pause")
            return
        }
        #expect(!still.shouldBufferInAnticipationOfPlayback && still.anticipatedPlaybackRate == 0)
    }

    @Test func endProposingANewTimeMovesTheGroupWhetherItWaitedOrNot() {
        var machine = machine()
        _ = machine.onOrdered(ordered(3, ben, at: 1 * Self.second, .setRate(1)), now: hostNS(900 * Self.ms))
        let scrub = UUID()
        _ = machine.onSuspensionBegan(scrub, reason: .userIsChangingCurrentTime, now: hostNS(2 * Self.second))
        _ = machine.onOrdered(ordered(4, ana, at: 2 * Self.second, .beginSuspension(id: scrub, reason: .userIsChangingCurrentTime,
                                                                                      triggersWaiting: false, waitingLimit: nil)),
                              now: hostNS(2 * Self.second))
        #expect(!machine.core.isWaiting && machine.core.timeline.rate == 1)
        let ended = machine.onSuspensionEnded(scrub, proposingNewTime: itemNS(40 * Self.second), now: hostNS(3 * Self.second))
        #expect(ended.first == .propose(.endSuspension(id: scrub, proposedTime: itemNS(40 * Self.second), item: "film")))
        // Past the item's end: within it, so that the end is never refused.
        let late = UUID()
        _ = machine.onSuspensionBegan(late, reason: .userIsChangingCurrentTime, now: hostNS(3 * Self.second))
        #expect(machine.onSuspensionEnded(late, proposingNewTime: .max, now: hostNS(3 * Self.second)).first
            == .propose(.endSuspension(id: late, proposedTime: itemNS(60 * Self.second), item: "film")))
        // The group applies the end: it is at 40 s from the end's instant, playing.
        let moved = machine.onOrdered(ordered(5, ana, at: 3_100 * Self.ms, .endSuspension(id: scrub, proposedTime: itemNS(40 * Self.second))),
                                      now: hostNS(3_050 * Self.ms))
        #expect(machine.core.timeline.anchorMediaTime == itemNS(40 * Self.second) && machine.core.timeline.rate == 1)
        #expect(moved.contains { if case .emit(.timelineChanged) = $0 { true } else { false } })
    }

    @Test func requestsAreValidatedAndAPauseSnapsToWhereThisParticipantIs() throws {
        var machine = machine()
        _ = machine.onOrdered(ordered(3, ben, at: 1 * Self.second, .setRate(1)), now: hostNS(900 * Self.ms))
        #expect(try machine.onLocalRequest(.rate(0, []), now: hostNS(3_500 * Self.ms)) == [.propose(.pause(at: itemNS(2_500 * Self.ms), item: "film"))])
        #expect(try machine.onLocalRequest(.rate(2, []), now: .zero) == [.propose(.setRate(2))])
        #expect(try machine.onLocalRequest(.rate(2, .playImmediately), now: .zero) == [.propose(.setRateImmediately(2))])
        #expect(try machine.onLocalRequest(.seek(itemNS(10 * Self.second), .resumeImmediately), now: .zero)
            == [.propose(.seekImmediately(to: itemNS(10 * Self.second), item: "film"))])
        #expect(throws: ProposalRejection.self) { try machine.onLocalRequest(.rate(.nan, []), now: .zero) }
        #expect(throws: ProposalRejection.self) { try machine.onLocalRequest(.seek(itemNS(61 * Self.second), []), now: .zero) }
        #expect(throws: ProposalRejection.self) { try machine.onLocalRequest(.transition(item: "", at: .zero), now: .zero) }
        do {
            _ = try machine.onLocalRequest(.rate(1e15, []), now: .zero)
        } catch {
            #expect(error.reason == .rateOutOfRange)
        }
    }

    @Test func aDepartureIsProposedOnlyForAParticipantHoldingSuspensions() {
        var machine = machine()
        #expect(machine.onDeparture(ben, now: .zero).isEmpty)
        _ = machine.onOrdered(ordered(3, ben, at: 0, .beginSuspension(id: UUID(), reason: .stallRecovery, triggersWaiting: true,
                                                                         waitingLimit: nil)), now: .zero)
        #expect(machine.onDeparture(ben, now: .zero) == [.propose(.departed(ben))])
    }

    @Test func aReplayedOrUnreadableRecordIsHandledAsTheCoreHandlesIt() {
        var machine = machine()
        #expect(machine.onOrdered(ordered(2, ben, at: 0, .setRate(1)), now: .zero).isEmpty)
        let rejection = ProposalRejection(.unreadable, "no proposal")
        let skipped = machine.onOrdered(.unreadable(originator: ben, order: 3, rejection: rejection), now: .zero)
        #expect(skipped.contains(.emit(.proposalRejected(rejection, originator: ben, order: 3))))
        #expect(machine.core.timeline.version == 3)
    }

    @Test func aStormOfChangesLeavesOneCommandInFlightForTheLastOfThem() {
        var machine = machine()
        var now = hostNS(1 * Self.second)
        for order in UInt64(3)...UInt64(1_002) {
            let proposal: PlaybackProposal = order.isMultiple(of: 2) ? .setRate(1) : .pause(at: nil)
            _ = machine.onOrdered(ordered(order, ben, at: now.nanoseconds + 30 * Self.ms, proposal), now: now)
            now += .milliseconds(1)
        }
        #expect(machine.core.timeline.version == 1_002 && machine.core.timeline.rate == 1)
        guard case .play(let play)? = machine.inFlight?.command else { Issue.record("not playing: \(String(describing: machine.inFlight))"); return }
        #expect(play.version == 1_002)
    }
}
