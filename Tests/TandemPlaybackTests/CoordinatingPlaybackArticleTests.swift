import Foundation
import Synchronization
import Testing
import Tandem
import TandemClock
import TandemMedia
import TandemPlayback
import TandemTestKit

// The code of the DocC article "Coordinating playback"
// (`Sources/TandemPlayback/TandemPlayback.docc/CoordinatingPlayback.md`), compiled and run here
// on the in-memory relay, so that the article cannot drift from the API. What is between the
// `Article:` marks is the article's code as printed there; change both together.

// MARK: Article: the delegate example ("Writing your own player")

final class ScheduledPlayer: PlaybackCoordinatorDelegate, Sendable {
    /// From host instant `hostTime` on, item time `itemTime`, advancing at `rate`.
    struct Segment: Equatable, Sendable {
        var itemTime: ItemTime
        var hostTime: HostInstant
        var rate: Double
    }

    let currentItemIdentifier: String?
    let currentItemIdentity: String?
    private let segments = Mutex<[Segment]>([])

    init(item: String, identity: String?) {
        currentItemIdentifier = item
        currentItemIdentity = identity
    }

    func playbackCoordinator(_ coordinator: PlaybackCoordinator, didIssue command: PlaybackCommand,
                             completion: @escaping @Sendable () -> Void) {
        // Every command is completed, the stale ones (for another item) without being applied.
        defer { completion() }
        guard command.expectedCurrentItemIdentifier == currentItemIdentifier else { return }
        switch command {
        case .play(let play):
            schedule(Segment(itemTime: play.itemTime, hostTime: play.hostTime, rate: play.rate))
        case .pause(let pause):
            schedule(Segment(itemTime: pause.itemTime, hostTime: pause.hostTime, rate: 0))
        case .seek, .buffer:
            // Open and decode ahead from the command's item time here; the play or pause that
            // says when comes next.
            break
        }
    }

    /// The item time to present at host instant `now`.
    func itemTime(at now: HostInstant) -> ItemTime? {
        segments.withLock { segments in
            segments.last { $0.hostTime <= now }.map { $0.itemTime + (now - $0.hostTime) * $0.rate }
        }
    }

    private func schedule(_ segment: Segment) {
        segments.withLock { segments in
            segments.removeAll { $0.hostTime >= segment.hostTime }
            segments.append(segment)
        }
    }
}

// MARK: Article: the other snippets, each as a function the tests call

enum ArticleSnippets {
    /// "The SharePlay pattern".
    static func sharePlayPattern(file: String, session: GroupSession<WatchTogether>, sinks: [any VideoSink]) throws -> HeadlessPlayer {
        // The article opens "film.mp4" and gives no sinks; the test gives a sample clip and a recorder.
        let player = try HeadlessPlayer(url: file, videoSinks: sinks)
        player.playbackCoordinator.coordinateWithSession(session)   // session: joined
        player.play()                                           // every participant starts playing
        return player
    }

    /// "Writing your own player": connecting it, and playing.
    static func connect(identity: String?, session: GroupSession<WatchTogether>) throws -> (ScheduledPlayer, PlaybackCoordinator) {
        let player = ScheduledPlayer(item: "film.mp4", identity: identity)
        let coordinator = PlaybackCoordinator(delegate: player)
        coordinator.coordinateWithSession(session)   // reports the item and its identity to the group
        coordinator.coordinateRateChange(to: 1)  // everyone plays, this player included
        return (player, coordinator)
    }

    /// "How a change travels": the events.
    static func printTimelineChanges(of coordinator: PlaybackCoordinator) -> Task<Void, Never> {
        Task {
            for await event in coordinator.events {
                if case .timelineChanged(let timeline, let originator, _) = event {
                    print("\(originator) changed the timeline to \(timeline)")
                }
            }
        }
    }

    /// "Waiting together": a stall.
    static func stall(_ coordinator: PlaybackCoordinator) -> PlaybackSuspension {
        let stall = coordinator.beginSuspension(for: .stallRecovery)
        // … the player buffers … (the test ends it: `stall.end()`)
        return stall
    }

    /// "Waiting together": scrubbing.
    static func scrub(_ coordinator: PlaybackCoordinator) {
        let scrub = coordinator.beginSuspension(for: .userIsChangingCurrentTime)
        scrub.end(proposingNewTime: ItemTime(nanoseconds: 42_000_000_000))
    }

    /// "The queue and the end of an item".
    static func queue(_ coordinator: PlaybackCoordinator) throws {
        try coordinator.appendItem(identifier: "episode-2.mp4", identity: nil, duration: .seconds(1_320))
        try coordinator.advanceToNextItem()          // everyone, at one instant, from the item's start
        try coordinator.setActionAtItemEnd(.pause)   // or .advance, the default
    }

    /// "The machine, for tests on virtual time": returns the play command it printed.
    static func machine(me: UUID, other: UUID) -> PlayCommand? {
        var printed: PlayCommand?
        var machine = CoordinatorMachine(localParticipant: me)
        let start = HostInstant(nanoseconds: 1_000_000_000)
        // The session clock as this participant's host clock sees it: session 5 s at host 1 s.
        _ = machine.onClockMapping(ClockMapping(session: SessionInstant(nanoseconds: 5_000_000_000), host: start), now: start)
        // The relay ordered another participant's play, effective 40 ms later on the session clock.
        let play = OrderedProposal(originator: other, order: 1, orderedAt: SessionInstant(nanoseconds: 5_000_000_000),
                                   effectiveAt: SessionInstant(nanoseconds: 5_040_000_000), proposal: .setRate(1))
        for directive in machine.onOrdered(.proposal(play), now: start) {
            if case .issue(let issued) = directive, case .play(let command) = issued.command {
                print(command.hostTime)   // 1.04 s: the effective instant, in host time
                printed = command
                _ = machine.onCommandCompleted(issued.id, now: start)
            }
        }
        return printed
    }
}

// MARK: The tests

/// The article's examples end to end on the in-memory relay: the SharePlay pattern with the
/// built-in player, the delegate example through play, seek, pause, a stale item and a
/// completion never called, a late joiner, waiting together, scrubbing and the queue; and the
/// machine snippet on its own. Commands and events are awaited as they come (no polls); the
/// suite's time limit bounds a wait for one that never comes.
@Suite(.serialized, .timeLimit(.minutes(1))) struct CoordinatingPlaybackArticleIOTests {
    static let identity = "d=600.000;article-test"
    static let thirtySeconds = ItemTime(nanoseconds: 30_000_000_000)
    /// How far apart two participants' instants for one change may be: both read one session
    /// clock directly (`.derived`) on one host clock, so only rounding separates them.
    static let sameInstant = TimeSpan.microseconds(20)

    /// The article's player, and what its coordinator issued it, for the test to await.
    final class Observed: PlaybackCoordinatorDelegate, Sendable {
        let player: ScheduledPlayer
        let commands: AsyncStream<PlaybackCommand>
        private let continuation: AsyncStream<PlaybackCommand>.Continuation
        /// Whether the next seek command's completion is dropped ("never called").
        let withholdsNextSeek = Mutex(false)

        init(_ player: ScheduledPlayer) {
            self.player = player
            (commands, continuation) = AsyncStream.makeStream(of: PlaybackCommand.self)
        }

        var currentItemIdentifier: String? { player.currentItemIdentifier }
        var currentItemIdentity: String? { player.currentItemIdentity }

        func playbackCoordinator(_ coordinator: PlaybackCoordinator, didIssue command: PlaybackCommand,
                                 completion: @escaping @Sendable () -> Void) {
            let drop = withholdsNextSeek.withLock { withholds in
                guard withholds, case .seek = command else { return false }
                withholds = false
                return true
            }
            player.playbackCoordinator(coordinator, didIssue: command) { if !drop { completion() } }
            continuation.yield(command)
        }
    }

    /// A participant of the test's session, joined.
    static func joined(_ name: String, relay: TestRelay, invitation: Invitation?) async throws -> GroupSession<WatchTogether> {
        let center = ActivityCenter()
        center.displayName = name
        center.configure(relay: relay.connector, host: relay.host, port: relay.port, sessionClock: .derived(from: SystemClock()))
        var sessions = center.sessions(for: WatchTogether.self).makeAsyncIterator()
        if let invitation {
            try await center.accept(invitation)
        } else {
            try await center.start(WatchTogether(item: "film.mp4"))
        }
        let session = try #require(await sessions.next())
        var states = session.$state.values.makeAsyncIterator()
        session.join()
        while let state = await states.next() {
            if case .joined = state { return session }
            if case .invalidated(let reason) = state { throw reason }
        }
        throw ArticleTestError("\(name)'s session state stream ended before it joined")
    }

    struct ArticleTestError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The next command `matching`, skipping the others.
    static func next(_ commands: inout AsyncStream<PlaybackCommand>.Iterator,
                     _ matching: (PlaybackCommand) -> Bool) async throws -> PlaybackCommand {
        while let command = await commands.next() {
            if matching(command) { return command }
        }
        throw ArticleTestError("the command stream ended")
    }

    static func play(_ command: PlaybackCommand) -> PlayCommand? { if case .play(let play) = command { play } else { nil } }
    static func pause(_ command: PlaybackCommand) -> PauseCommand? { if case .pause(let pause) = command { pause } else { nil } }
    static func seek(_ command: PlaybackCommand) -> SeekCommand? { if case .seek(let seek) = command { seek } else { nil } }

    /// The next play command, whatever its timeline (a re-issue, a late joiner's first play:
    /// no gate is open for them).
    static func nextPlay(_ commands: inout AsyncStream<PlaybackCommand>.Iterator) async throws -> PlayCommand {
        try #require(play(try await next(&commands) { play($0) != nil }))
    }

    /// The timeline in force on `coordinator` once one is `matching`. With the pre-roll gate
    /// (`PrerollGate`, on by default) a play is first published anchored at the gate's deadline,
    /// then, once every participant it waits for has reported its pre-roll, at the gate's start,
    /// earlier on the same position; whether a gate opens at all depends on whether the others'
    /// reports were ordered before the play. So the play in force is the timeline whose gate is
    /// closed, or waits only for `silent` (participants whose players never complete the seek
    /// ahead of it: it starts at the deadline). The core is read as a whole at each change of
    /// the published timeline (the machine is updated before each publication), so that a
    /// timeline and its gate are read together.
    static func inForce(_ coordinator: PlaybackCoordinator, silent: Set<UUID> = [],
                        _ matching: (SharedTimeline) -> Bool) async throws -> SharedTimeline {
        for await _ in coordinator.$timeline.values {
            let core = coordinator.core
            guard matching(core.timeline) else { continue }
            if core.waiting.gate.map({ $0.pending.isSubset(of: silent) }) ?? true { return core.timeline }
        }
        throw ArticleTestError("the timeline stream ended")
    }

    /// The play command of the play in force on `coordinator` (`inForce(_:silent:_:)`), skipping
    /// the provisional one a gate issues first: the same anchor, whatever its version (a
    /// participant's report re-versions the timeline and moves nothing).
    static func playInForce(_ commands: inout AsyncStream<PlaybackCommand>.Iterator, of coordinator: PlaybackCoordinator,
                            silent: Set<UUID> = [], _ matching: (SharedTimeline) -> Bool) async throws -> PlayCommand {
        let timeline = try await inForce(coordinator, silent: silent, matching)
        let command = try await next(&commands) { command in play(command).map { sameAnchor($0.timeline, timeline) } ?? false }
        return try #require(play(command))
    }

    /// Whether two play commands put their players on one timeline: the same item time at the
    /// same host instant, or, when one reached its player late (and so starts later, further
    /// into the item), item times as far apart as their instants are.
    static func onOneTimeline(_ a: PlayCommand, _ b: PlayCommand) -> Bool {
        a.timeline == b.timeline && ((a.itemTime - b.itemTime) - (a.hostTime - b.hostTime) * a.rate).magnitude <= sameInstant
    }

    /// The same timeline, whatever its version (a report of what someone loaded moves nothing else).
    static func sameAnchor(_ a: SharedTimeline, _ b: SharedTimeline) -> Bool {
        a.item == b.item && a.rate == b.rate && a.anchorMediaTime == b.anchorMediaTime && a.anchorSessionTime == b.anchorSessionTime
    }

    @Test func theSharePlayPatternPlaysEveryoneTogether() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let host = try await Self.joined("host", relay: relay, invitation: nil)
        let ana = try await Self.joined("ana", relay: relay, invitation: host.invitation)
        let clip = SampleClip.h264
        let anaFrames = FirstFrames(count: 10)
        let hostFrames = FirstFrames(count: 10)
        // Ana connects her player first, then the host does and plays: both start together.
        let anaPlayer = try HeadlessPlayer(url: clip.path, videoSinks: [anaFrames])
        anaPlayer.playbackCoordinator.coordinateWithSession(ana)
        let hostPlayer = try ArticleSnippets.sharePlayPattern(file: clip.path, session: host, sinks: [hostFrames])
        defer {
            hostPlayer.close()
            anaPlayer.close()
        }
        let hostScheduled = await hostFrames.collected()
        let anaScheduled = await anaFrames.collected()
        #expect(hostPlayer.playbackCoordinator.timeline.rate == 1)
        let common = Set(hostScheduled.keys).intersection(anaScheduled.keys)
        #expect(common.count >= 5, "frames both presented: \(common.sorted())")
        for pts in common {
            let apart = abs(hostScheduled[pts]! - anaScheduled[pts]!)
            #expect(apart <= Self.sameInstant.nanoseconds, "frame at \(pts) ns scheduled \(apart) ns apart")
        }
    }

    @Test func theArticlesPlayerPlaysSeeksAndPausesWithTheGroup() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let hostSession = try await Self.joined("host", relay: relay, invitation: nil)
        let anaSession = try await Self.joined("ana", relay: relay, invitation: hostSession.invitation)
        let host = Observed(ScheduledPlayer(item: "film.mp4", identity: Self.identity))
        let ana = Observed(ScheduledPlayer(item: "film.mp4", identity: Self.identity))
        let anaCoordinator = PlaybackCoordinator(delegate: ana)
        let anaEvents = anaCoordinator.events
        anaCoordinator.coordinateWithSession(anaSession)
        let hostCoordinator = PlaybackCoordinator(delegate: host)
        hostCoordinator.coordinateWithSession(hostSession)
        let printing = ArticleSnippets.printTimelineChanges(of: anaCoordinator)
        defer { printing.cancel() }
        var hostCommands = host.commands.makeAsyncIterator()
        var anaCommands = ana.commands.makeAsyncIterator()

        // Play: everyone at one instant, on one timeline, at the same item time.
        hostCoordinator.coordinateRateChange(to: 1)
        let hostPlay = try await Self.playInForce(&hostCommands, of: hostCoordinator) { $0.rate > 0 }
        let anaPlay = try await Self.playInForce(&anaCommands, of: anaCoordinator) { $0.rate > 0 }
        #expect(Self.onOneTimeline(hostPlay, anaPlay), "\(hostPlay) against \(anaPlay)")
        #expect(hostPlay.timeline.item == "film.mp4")
        #expect(hostPlay.expectedCurrentItemIdentifier == "film.mp4")
        #expect(abs(hostPlay.rate - 1) < 1e-6)
        // The article's player maps host time to item time from the command's anchor.
        let later = hostPlay.hostTime + .milliseconds(500)
        let expected = hostPlay.itemTime + .milliseconds(500) * hostPlay.rate
        #expect(try #require(host.player.itemTime(at: later)).nanoseconds.distance(to: expected.nanoseconds).magnitude <= 1_000_000)

        // Seek (Ana's): a seek command first, then the play from there. Ana's player never
        // completes that seek (the article's "never called"): it is abandoned at the play's
        // instant, and her play comes all the same. The play's pre-roll gate waits for her report
        // in vain: the play starts at the gate's deadline.
        ana.withholdsNextSeek.withLock { $0 = true }
        anaCoordinator.coordinateSeek(to: Self.thirtySeconds)
        let hostSeek = try #require(Self.seek(try await Self.next(&hostCommands) { Self.seek($0) != nil }))
        #expect(hostSeek.anticipatedPlaybackRate == 1)
        let silent: Set = [anaSession.localParticipant.id]
        let atThirty = { (timeline: SharedTimeline) in timeline.rate > 0 && timeline.anchorMediaTime == Self.thirtySeconds }
        let hostResumed = try await Self.playInForce(&hostCommands, of: hostCoordinator, silent: silent, atThirty)
        let anaResumed = try await Self.playInForce(&anaCommands, of: anaCoordinator, silent: silent, atThirty)
        #expect(hostSeek.itemTime == hostResumed.itemTime)
        #expect(hostResumed.itemTime >= Self.thirtySeconds)
        #expect(Self.onOneTimeline(hostResumed, anaResumed), "\(hostResumed) against \(anaResumed)")
        #expect(hostSeek.completionDueDate >= hostResumed.hostTime)
        var events = anaEvents.makeAsyncIterator()
        var abandoned: PlaybackCommand?
        while abandoned == nil, let event = await events.next() {
            if case .commandAbandoned(let command) = event { abandoned = command }
        }
        #expect(Self.seek(try #require(abandoned))?.itemTime == Self.thirtySeconds)
        #expect(ana.player.itemTime(at: anaResumed.hostTime) == anaResumed.itemTime)

        // Pause (the host's): both at the same item time, frozen there.
        hostCoordinator.coordinateRateChange(to: 0)
        let hostPause = try #require(Self.pause(try await Self.next(&hostCommands) { Self.pause($0) != nil }))
        let anaPause = try #require(Self.pause(try await Self.next(&anaCommands) { Self.pause($0) != nil }))
        #expect(hostPause.itemTime == anaPause.itemTime)
        #expect(hostPause.timeline == anaPause.timeline)
        #expect(hostPause.itemTime >= Self.thirtySeconds)
        #expect(ana.player.itemTime(at: anaPause.hostTime + .seconds(5)) == anaPause.itemTime)

        // A command for another item is stale to this player: completed, not applied.
        try hostCoordinator.transitionToItem(identifier: "another.mp4")
        let stale = try await Self.next(&anaCommands) { $0.expectedCurrentItemIdentifier == "another.mp4" }
        #expect(stale.expectedCurrentItemIdentifier != ana.player.currentItemIdentifier)
        #expect(ana.player.itemTime(at: anaPause.hostTime + .seconds(60)) == anaPause.itemTime)
        #expect(anaCoordinator.timeline.item == "another.mp4")
    }

    /// Returns once the work `scheduler` has been given so far has run: the coordinator's steps
    /// (and the commands they issue) are done by then.
    static func drained(_ scheduler: any CoordinatorScheduler) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in scheduler.execute { done.resume() } }
    }

    @Test func theArticlesConnectionPlaysItsPlayerWithTheGroup() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let hostSession = try await Self.joined("host", relay: relay, invitation: nil)
        let anaSession = try await Self.joined("ana", relay: relay, invitation: hostSession.invitation)
        let ana = Observed(ScheduledPlayer(item: "film.mp4", identity: Self.identity))
        let anaCoordinator = PlaybackCoordinator(delegate: ana)
        anaCoordinator.coordinateWithSession(anaSession)
        var anaCommands = ana.commands.makeAsyncIterator()
        // The host connects its player as the article does, and plays.
        let (player, coordinator) = try ArticleSnippets.connect(identity: Self.identity, session: hostSession)
        let anaPlay = try await Self.playInForce(&anaCommands, of: anaCoordinator) { $0.rate > 0 }
        #expect(anaPlay.timeline.item == "film.mp4")
        #expect(anaPlay.originator == hostSession.localParticipant.id)
        let hostTimeline = try await Self.inForce(coordinator) { $0.rate > 0 }
        #expect(Self.sameAnchor(hostTimeline, anaPlay.timeline))
        await Self.drained(coordinator.scheduler)
        // The host's player follows the same timeline from the same instant.
        let later = anaPlay.hostTime + .milliseconds(500)
        let there = try #require(player.itemTime(at: later))
        #expect(there.nanoseconds.distance(to: (anaPlay.itemTime + .milliseconds(500)).nanoseconds).magnitude <= 1_000_000)
        #expect(Self.sameAnchor(coordinator.timeline, anaPlay.timeline))
    }

    @Test func aLateJoinerIsIssuedTheGroupsTimelineAJoinLeadAhead() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let hostSession = try await Self.joined("host", relay: relay, invitation: nil)
        let host = Observed(ScheduledPlayer(item: "film.mp4", identity: Self.identity))
        let hostCoordinator = PlaybackCoordinator(delegate: host)
        hostCoordinator.coordinateWithSession(hostSession)
        var hostCommands = host.commands.makeAsyncIterator()
        hostCoordinator.coordinateRateChange(to: 1)
        _ = try await Self.playInForce(&hostCommands, of: hostCoordinator) { $0.rate > 0 }
        hostCoordinator.coordinateSeek(to: Self.thirtySeconds)
        let playing = try await Self.playInForce(&hostCommands, of: hostCoordinator) {
            $0.rate > 0 && $0.anchorMediaTime == Self.thirtySeconds
        }
        // A playing timeline is re-issued every second, by the coordinator itself (no originator);
        // by then the seek is in force, and Ben joins a group already playing.
        let remapped = try await Self.nextPlay(&hostCommands)
        #expect(remapped.originator == nil)
        #expect(remapped.timeline == playing.timeline)
        #expect(remapped.hostTime > playing.hostTime)

        // Ben joins now; his player (no identity: he reports nothing) is told where the group is.
        let benSession = try await Self.joined("ben", relay: relay, invitation: hostSession.invitation)
        let ben = Observed(ScheduledPlayer(item: "film.mp4", identity: nil))
        let benCoordinator = PlaybackCoordinator(delegate: ben)
        let joinedAt = benCoordinator.scheduler.now
        benCoordinator.coordinateWithSession(benSession)
        var benCommands = ben.commands.makeAsyncIterator()
        let first = try #require(await benCommands.next())
        let seek = try #require(Self.seek(first), "a late joiner's first command is a seek: \(first)")
        let play = try await Self.nextPlay(&benCommands)
        #expect(seek.itemTime == play.itemTime)
        #expect(play.timeline == playing.timeline)
        // The timeline is in force already: Ben, who joins, is told to come in a join lead from
        // now (his player has only opened the item), not a whole pre-roll.
        #expect(play.hostTime >= joinedAt + benCoordinator.joinLead)
        // On the group's timeline: where the host's player is at that instant.
        let hostThere = try #require(host.player.itemTime(at: play.hostTime))
        #expect(hostThere.nanoseconds.distance(to: play.itemTime.nanoseconds).magnitude <= 1_000_000)
        #expect(hostCoordinator.timeline.version == benCoordinator.timeline.version)
    }

    @Test func theGroupWaitsForAStallAndMovesWhereAScrubEnds() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let hostSession = try await Self.joined("host", relay: relay, invitation: nil)
        let anaSession = try await Self.joined("ana", relay: relay, invitation: hostSession.invitation)
        let host = Observed(ScheduledPlayer(item: "film.mp4", identity: Self.identity))
        let ana = Observed(ScheduledPlayer(item: "film.mp4", identity: Self.identity))
        let hostCoordinator = PlaybackCoordinator(delegate: host)
        let hostEvents = hostCoordinator.events
        hostCoordinator.coordinateWithSession(hostSession)
        let anaCoordinator = PlaybackCoordinator(delegate: ana)
        anaCoordinator.coordinateWithSession(anaSession)
        var hostCommands = host.commands.makeAsyncIterator()
        hostCoordinator.coordinateRateChange(to: 1)
        _ = try await Self.playInForce(&hostCommands, of: hostCoordinator) { $0.rate > 0 }

        // Ana stalls: the host's player is paused, buffering in anticipation of playback.
        let stall = ArticleSnippets.stall(anaCoordinator)
        let waiting = try #require(Self.pause(try await Self.next(&hostCommands) { Self.pause($0) != nil }))
        #expect(waiting.shouldBufferInAnticipationOfPlayback)
        #expect(waiting.anticipatedPlaybackRate == 1)
        var events = hostEvents.makeAsyncIterator()
        var sawWaiting = false
        while !sawWaiting, let event = await events.next() {
            if case .groupWaiting(_, let suspensions) = event {
                sawWaiting = suspensions.contains { $0.reason == .stallRecovery && $0.holdsGroup }
            }
        }
        #expect(sawWaiting)
        #expect(hostCoordinator.core.isWaiting)
        stall.end()
        let resumed = try await Self.playInForce(&hostCommands, of: hostCoordinator) {
            $0.rate > 0 && $0.anchorMediaTime == waiting.itemTime
        }
        #expect(resumed.timeline.anchorMediaTime == waiting.itemTime)
        #expect(resumed.timeline.rate == 1)
        var resumedBy: UUID?
        while resumedBy == nil, let event = await events.next() {
            if case .groupResumed(_, let originator) = event { resumedBy = originator }
        }
        #expect(resumedBy == anaSession.localParticipant.id)

        // Ana scrubs to 42 s: the group moves there.
        ArticleSnippets.scrub(anaCoordinator)
        let scrubbed = try await Self.playInForce(&hostCommands, of: hostCoordinator) {
            $0.rate > 0 && $0.anchorMediaTime == ItemTime(nanoseconds: 42_000_000_000)
        }
        #expect(scrubbed.itemTime >= ItemTime(nanoseconds: 42_000_000_000))
        #expect(scrubbed.timeline.rate == 1)
    }

    @Test func theQueueSnippetMovesTheGroupToTheNextItem() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let hostSession = try await Self.joined("host", relay: relay, invitation: nil)
        let anaSession = try await Self.joined("ana", relay: relay, invitation: hostSession.invitation)
        let host = Observed(ScheduledPlayer(item: "film.mp4", identity: Self.identity))
        let ana = Observed(ScheduledPlayer(item: "film.mp4", identity: Self.identity))
        let hostCoordinator = PlaybackCoordinator(delegate: host)
        hostCoordinator.coordinateWithSession(hostSession)
        let anaCoordinator = PlaybackCoordinator(delegate: ana)
        anaCoordinator.coordinateWithSession(anaSession)
        var anaCommands = ana.commands.makeAsyncIterator()
        // The first report made the host's item the queue's first entry.
        _ = try await Self.next(&anaCommands) { $0.expectedCurrentItemIdentifier == "film.mp4" }

        try ArticleSnippets.queue(hostCoordinator)
        let next = try await Self.next(&anaCommands) { $0.expectedCurrentItemIdentifier == "episode-2.mp4" }
        #expect(next.expectedCurrentItemIdentifier == "episode-2.mp4")
        for await _ in anaCoordinator.$timeline.values where anaCoordinator.queue.actionAtItemEnd == .pause { break }
        let queue = anaCoordinator.queue
        #expect(queue.entries.map(\.identifier) == ["film.mp4", "episode-2.mp4"])
        #expect(queue.current?.identifier == "episode-2.mp4")
        #expect(queue.current?.duration == .seconds(1_320))
        #expect(queue.actionAtItemEnd == .pause)
        #expect(anaCoordinator.timeline.item == "episode-2.mp4")
        // The host holds the same queue once it has applied the same records.
        for await _ in hostCoordinator.$timeline.values where hostCoordinator.queue.actionAtItemEnd == .pause { break }
        #expect(hostCoordinator.queue == queue)
    }

    @Test func theMachineSnippetIssuesThePlayAtTheEffectiveInstantInHostTime() throws {
        let me = UUID()
        let other = UUID()
        let play = try #require(ArticleSnippets.machine(me: me, other: other))
        #expect(play.hostTime == HostInstant(nanoseconds: 1_040_000_000))
        #expect(play.itemTime == .zero)
        #expect(play.rate == 1)
        #expect(play.originator == other)
        #expect(play.timeline.anchorSessionTime == SessionInstant(nanoseconds: 5_040_000_000))
        #expect(play.version == 1)
    }
}

/// A sink that records when the first `count` frames were scheduled (raw monotonic ns, by
/// media time), and hands them over once it has them.
final class FirstFrames: VideoSink, @unchecked Sendable {
    private let count: Int
    private let frames = Mutex<[Int64: Int64]>([:])
    private let done: AsyncStream<[Int64: Int64]>
    private let continuation: AsyncStream<[Int64: Int64]>.Continuation

    init(count: Int) {
        self.count = count
        (done, continuation) = AsyncStream.makeStream(of: [Int64: Int64].self, bufferingPolicy: .bufferingNewest(1))
    }

    func present(_ frame: VideoFrame, _ presentation: Presentation) {
        guard !presentation.isStill else { return }
        let full = frames.withLock { frames -> [Int64: Int64]? in
            guard frames.count < count else { return nil }
            frames[frame.presentationTime] = presentation.scheduled
            return frames.count == count ? frames : nil
        }
        if let full {
            continuation.yield(full)
            continuation.finish()
        }
    }

    /// The frames, once `count` were presented.
    func collected() async -> [Int64: Int64] {
        for await frames in done { return frames }
        return frames.withLock { $0 }
    }
}
