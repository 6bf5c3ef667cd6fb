import Foundation
import Synchronization
import Testing
import Tandem
import TandemClock
@testable import TandemPlayback

/// A `CoordinatorScheduler` whose time moves only when the test says: work runs in the order of
/// its instants (then of its scheduling), on the test's thread, in `advance(to:)`.
final class VirtualScheduler: CoordinatorScheduler, @unchecked Sendable {
    private struct Entry {
        let at: HostInstant
        let sequence: Int
        let work: @Sendable () -> Void
    }

    private struct State {
        var now: HostInstant
        var entries: [Entry] = []
        var cancelled: Set<Int> = []
        var next = 0
    }

    private struct Token: CoordinatorCancellable {
        let cancelWork: @Sendable () -> Void
        func cancel() { cancelWork() }
    }

    private let state: Mutex<State>

    init(now: HostInstant = .zero) { state = Mutex(State(now: now)) }

    var now: HostInstant { state.withLock { $0.now } }

    func execute(_ work: @escaping @Sendable () -> Void) {
        _ = enqueue(at: nil, work)
    }

    func schedule(at instant: HostInstant, _ work: @escaping @Sendable () -> Void) -> any CoordinatorCancellable {
        let sequence = enqueue(at: instant, work)
        return Token { [weak self] in _ = self?.state.withLock { $0.cancelled.insert(sequence) } }
    }

    private func enqueue(at instant: HostInstant?, _ work: @escaping @Sendable () -> Void) -> Int {
        state.withLock { state in
            let sequence = state.next
            state.next += 1
            state.entries.append(Entry(at: max(instant ?? state.now, state.now), sequence: sequence, work: work))
            return sequence
        }
    }

    /// Runs everything due up to `target` (bounded: at most 100,000 pieces of work), then sets
    /// the time to `target`.
    func advance(to target: HostInstant) {
        for _ in 0..<100_000 {
            let work = state.withLock { state -> (@Sendable () -> Void)? in
                guard let index = state.entries.indices.filter({ state.entries[$0].at <= target })
                    .min(by: { (state.entries[$0].at, state.entries[$0].sequence) < (state.entries[$1].at, state.entries[$1].sequence) })
                else { return nil }
                let entry = state.entries.remove(at: index)
                state.now = max(state.now, entry.at)
                return state.cancelled.remove(entry.sequence) == nil ? entry.work : {}
            }
            guard let work else { break }
            work()
        }
        state.withLock { $0.now = max($0.now, target) }
    }

    /// Runs everything due now.
    func run() { advance(to: now) }

    /// How many pieces of work are waiting (cancelled ones included).
    var pendingCount: Int { state.withLock { $0.entries.count } }

    /// Moves time on by `span`, running what falls due.
    func advance(by span: TimeSpan) { advance(to: now + span) }
}

/// The shell around the machine, in virtual time: a `VirtualScheduler` for its executor and
/// clock, a scripted channel whose clocks are the scheduler's, no relay, no sleep.
@Suite struct CoordinatorShellIOTests {
    static let ms: Int64 = 1_000_000
    static let second: Int64 = 1_000_000_000

    /// The session clock: 1000 s ahead of the local clock, known once `known` is set.
    final class LateClock: SessionClockSource, @unchecked Sendable {
        let known = Mutex(false)
        func sessionTime(atLocal localTime: Int64) -> Int64? { known.withLock { $0 } ? localTime + 1_000 * second : nil }
        func localTime(atSession sessionTime: Int64) -> Int64? { known.withLock { $0 } ? sessionTime - 1_000 * second : nil }
        func errorBound(atLocal localTime: Int64) -> Int64? { 0 }
        func stop() {}
    }

    /// The local clock is the host clock (as the system clock is).
    struct HostClock: MonotonicDerivedClock {
        let scheduler: VirtualScheduler
        func now() -> Int64 { scheduler.now.nanoseconds }
        func monotonicTime(atLocal localTime: Int64) -> Int64 { localTime }
        func localTime(atMonotonic monotonicTime: Int64) -> Int64 { monotonicTime }
    }

    final class Channel: CoordinationChannel, @unchecked Sendable {
        let localParticipant = UUID()
        let sessionClock = LateClock()
        let scheduler: VirtualScheduler
        let proposals = Mutex<[PlaybackProposal]>([])
        init(scheduler: VirtualScheduler) { self.scheduler = scheduler }
        func propose(_ proposal: PlaybackProposal) throws { proposals.withLock { $0.append(proposal) } }
        func deliverOrdered(while wanted: @escaping @Sendable () -> Bool, to receive: @escaping @Sendable (OrderedInput) -> Void) {}
        var clock: (any SessionClockSource)? { sessionClock }
        var localClock: any MonotonicDerivedClock { HostClock(scheduler: scheduler) }
    }

    /// A player that keeps every command and completes those it is told to.
    final class Player: PlaybackCoordinatorDelegate, @unchecked Sendable {
        let commands = Mutex<[PlaybackCommand]>([])
        let completes: Bool
        init(completes: Bool) { self.completes = completes }
        var currentItemIdentifier: String? { "film" }
        func playbackCoordinator(_ coordinator: PlaybackCoordinator, didIssue command: PlaybackCommand,
                                 completion: @escaping @Sendable () -> Void) {
            commands.withLock { $0.append(command) }
            if completes { completion() }
        }
        var all: [PlaybackCommand] { commands.withLock { $0 } }
    }

    static func ordered(_ order: UInt64, at host: Int64, _ proposal: PlaybackProposal, by who: UUID) -> OrderedInput {
        .proposal(OrderedProposal(originator: who, order: order, orderedAt: sessionNS(1_000 * second + host - 40 * ms),
                                  effectiveAt: sessionNS(1_000 * second + host), proposal: proposal))
    }

    @Test func theShellWaitsForTheClockThenIssuesOnItsSchedulerAndAbandonsWhatIsNeverCompleted() async {
        let scheduler = VirtualScheduler(now: hostNS(10 * Self.second))
        let player = Player(completes: false)
        let coordinator = PlaybackCoordinator(delegate: player, scheduler: scheduler)
        let events = coordinator.events
        let channel = Channel(scheduler: scheduler)
        coordinator.coordinate(over: channel)
        let ben = UUID()
        coordinator.receive(Self.ordered(1, at: 10 * Self.second, .transition(item: "film", at: 0), by: ben))
        coordinator.receive(Self.ordered(2, at: 11 * Self.second, .setRate(1), by: ben))
        scheduler.advance(by: .milliseconds(20))
        // The clock is not known yet: the group's timeline is followed, the player told nothing.
        #expect(coordinator.timeline.rate == 1 && coordinator.timeline.version == 2)
        #expect(player.all.isEmpty)
        // The first estimate: within the shell's watch interval, the player is issued the jump.
        channel.sessionClock.known.withLock { $0 = true }
        scheduler.advance(by: PlaybackCoordinator.clockWatchInterval)
        guard case .seek(let seek)? = player.all.first else { Issue.record("no seek: \(player.all)"); return }
        #expect(seek.completionDueDate == hostNS(11 * Self.second))
        // The player never completes: at the due date the seek is abandoned and the play goes out.
        scheduler.advance(to: hostNS(11 * Self.second))
        guard case .play(let play)? = player.all.last else { Issue.record("no play: \(player.all)"); return }
        #expect(play.hostTime == hostNS(11 * Self.second) && play.itemTime == 0 && play.rate == 1)
        // The play is not completed either: the shell re-maps it every second all the same.
        scheduler.advance(to: hostNS(13 * Self.second))
        #expect(player.all.count >= 4)
        // Three events so far: two changes and the abandoned seek (the stream yields them at once).
        var iterator = events.makeAsyncIterator()
        var seen: [PlaybackCoordinator.Event] = []
        for _ in 0..<3 {
            guard let event = await iterator.next() else { break }
            seen.append(event)
        }
        #expect(seen.last == .commandAbandoned(.seek(seek)), "\(seen)")
    }

    @Test func requestsAreRefusedAtOnceAndSentWhenValid() throws {
        let scheduler = VirtualScheduler()
        let coordinator = PlaybackCoordinator(delegate: Player(completes: true), scheduler: scheduler)
        #expect(throws: CoordinatorError.self) { try coordinator.proposeRateChange(to: 1) }
        let channel = Channel(scheduler: scheduler)
        channel.sessionClock.known.withLock { $0 = true }
        coordinator.coordinate(over: channel)
        scheduler.run()
        #expect(throws: ProposalRejection.self) { try coordinator.proposeRateChange(to: 9) }
        coordinator.coordinateRateChange(to: 1, options: .playImmediately)
        coordinator.coordinateSeek(to: itemNS(5 * Self.second), options: .resumeImmediately)
        #expect(channel.proposals.withLock { $0 } == [.setRateImmediately(1), .seekImmediately(to: itemNS(5 * Self.second))])
        // Scrubbing: a suspension that does not make the group wait, then its end at a new time.
        let scrub = coordinator.beginSuspension(for: .userIsChangingCurrentTime)
        #expect(coordinator.isSuspended)
        scrub.end(proposingNewTime: itemNS(7 * Self.second))
        scrub.end()
        scheduler.run()
        #expect(!coordinator.isSuspended)
        #expect(channel.proposals.withLock { $0 }.suffix(2) == [
            .beginSuspension(id: scrub.id, reason: .userIsChangingCurrentTime, triggersWaiting: false, waitingLimit: nil),
            .endSuspension(id: scrub.id, proposedTime: itemNS(7 * Self.second)),
        ])
        // Apple's participant limit and Tandem's hold limit are separate settings.
        coordinator.setParticipantLimit(1, forWaitingOutSuspensionsWithReason: .stallRecovery)
        coordinator.setGroupHoldLimit(2, forReason: .stallRecovery)
        #expect(coordinator.participantLimitForWaitingOutSuspensions(withReason: .stallRecovery) == 1)
        #expect(coordinator.participantLimitForWaitingOutSuspensions(withReason: .playingInterstitial) == .max)
        #expect(coordinator.groupHoldLimit(forReason: .stallRecovery) == 2)
    }
}
