import Foundation
import Tandem
import TandemMedia
import TandemParty
import TandemPlayback

/// The long-lived observer of `WatchTogether.sessions()` that a SharePlay app keeps: it takes
/// each session as it arrives, joins it, and watches it as a `WatchParty` (the library's: the
/// built-in player under the session's playback coordinator, who comes and goes, the queue),
/// printing the party's events as lines a person reads.
@MainActor final class WatchSessionManager {
    /// The clip each participant plays from its own copy.
    let media: String
    /// The session being watched, if any.
    private(set) var session: GroupSession<WatchTogether>?
    /// Its party.
    private(set) var party: WatchParty?
    private var tasks: [Task<Void, Never>] = []
    /// Counts the frames the player presents.
    private let frames = CountingSink()
    /// Told of each session that ends, with the reason, once its party is over.
    private let endings: AsyncStream<GroupSessionError>.Continuation
    /// The reasons sessions ended, in order.
    let ended: AsyncStream<GroupSessionError>
    /// Whether the party's player follows the group (commands act on it from then on).
    private var isWatching = false
    /// Commands waiting for that (or for the session to end first).
    private var watchWaiters: [CheckedContinuation<Void, Never>] = []

    init(media: String) {
        self.media = media
        (ended, endings) = AsyncStream.makeStream(of: GroupSessionError.self)
    }

    /// Takes sessions as they arrive, for as long as the program runs.
    func observeSessions() async {
        for await session in WatchTogether.sessions() {
            configure(session)
        }
    }

    private func configure(_ session: GroupSession<WatchTogether>) {
        // A new session replaces the one before.
        self.session?.leave()
        for task in tasks { task.cancel() }
        // Commands waiting for the old party act on nothing: they return, as at its end.
        releaseWatchWaiters()
        var configuration = WatchParty.Configuration(media: [media], isHost: session.isLocallyInitiated)
        configuration.videoSinks = [frames]
        let party = WatchParty(session: session, configuration: configuration)
        self.session = session
        self.party = party
        isWatching = false
        tasks = [
            Task { for await event in party.events { self.report(event) } },
            Task { await self.follow(session, party: party) },
        ]
        session.join()
    }

    /// Follows the session's state: watches once joined, reports the end.
    private func follow(_ session: GroupSession<WatchTogether>, party: WatchParty) async {
        var watch: Task<Void, Never>?
        for await state in session.$state.values {
            switch state {
            case .waiting:
                continue
            case .joined:
                if session.isLocallyInitiated { print(session.invitation.url.absoluteString) }
                watch = Task {
                    do {
                        // Said once the player follows the group: commands act from then on.
                        _ = try await party.run { await self.began(session) }
                    } catch {
                        print("cannot watch \(TerminalText.sanitized(session.activity.item)): \(TerminalText.sanitized("\(error)"))")
                        session.leave()
                    }
                }
            case .invalidated(let reason):
                print("session over: \(TerminalText.sanitized("\(reason)"))")
                releaseWatchWaiters()
                // Told once the party is over: the player closed, the departure delivered.
                await watch?.value
                endings.yield(reason)
                return
            }
        }
    }

    /// The party watches: says so, and lets waiting commands act.
    private func began(_ session: GroupSession<WatchTogether>) {
        print("watching \(TerminalText.sanitized(session.activity.item)) as \(session.localParticipant.printableName)")
        isWatching = true
        releaseWatchWaiters()
    }

    private func releaseWatchWaiters() {
        for waiter in watchWaiters { waiter.resume() }
        watchWaiters.removeAll()
    }

    /// Returns once the party watches (at once if it does), or once its session is over.
    func untilWatching() async {
        if isWatching || session.map({ if case .invalidated = $0.state { true } else { false } }) == true { return }
        await withCheckedContinuation { watchWaiters.append($0) }
    }

    /// One line for each event a person cares about: who joined and left, each change of the
    /// shared timeline with who made it.
    private func report(_ event: WatchPartyEvent) {
        switch event {
        case .participantJoined(let participant):
            print("joined: \(TerminalText.sanitized(participant.name))")
        case .participantLeft(let participant):
            print("left: \(TerminalText.sanitized(participant.name))")
        case .timeline(let timeline, let change):
            guard let words = describe(change.change) else { return }
            print("timeline v\(timeline.version): \(TerminalText.sanitized(words)) by \(TerminalText.sanitized(change.by)); \(describe(timeline))")
        case .waiting(let timeline, let waiting):
            print("waiting for \(TerminalText.sanitized(waiting.waitingFor.joined(separator: ", "))); \(describe(timeline))")
        case .resumed(let timeline, let resumed):
            print("resumed by \(TerminalText.sanitized(resumed.by)); \(describe(timeline))")
        case .itemMismatch(let mismatch):
            print("warning: participants play different files as \(TerminalText.sanitized(mismatch.item)): "
                + TerminalText.sanitized(mismatch.participants.joined(separator: ", ")))
        case .proposalRejected(let rejected):
            print("skipped a change by \(TerminalText.sanitized(rejected.by)): \(TerminalText.sanitized(rejected.message))")
        case .itemEnded(let timeline, let ended):
            print(ended.index >= 0 ? "end of item: on to \(TerminalText.sanitized(ended.identifier)); \(describe(timeline))"
                : "end of item: paused; \(describe(timeline))")
        case .commandAbandoned(let abandoned):
            print("the player did not complete a command (timeline v\(abandoned.version)) in time; going on")
        case .history(let note):
            print("history: \(TerminalText.sanitized(note.message))")
        default:
            break
        }
    }

    /// A change in a person's words; nil for the bookkeeping that changes nothing a person sees.
    private func describe(_ change: String) -> String? {
        if change == "state" || change == "departed" || change.hasPrefix("pre-rolled") { return nil }
        for prefix in ["seek now ", "seek "] where change.hasPrefix(prefix) { return "seek to \(change.dropFirst(prefix.count)) s" }
        if change.hasPrefix("play now at rate ") {
            let rate = Double(change.dropFirst("play now at rate ".count)) ?? 1
            return rate == 1 ? "play" : "rate \(rate)"
        }
        return change
    }

    private func describe(_ timeline: WatchPartyEvent.Timeline) -> String {
        let position = String(format: "%.3f s", timeline.mediaTime)
        return timeline.rate == 0 ? "paused at \(position)" : "playing at \(timeline.rate)x from \(position)"
    }

    /// Where the player is and how much it has shown.
    func status() -> String {
        guard let player = party?.player else { return "not watching" }
        let position = Double(player.mediaTime()) / 1e9
        let rate = player.playbackCoordinator.core.timeline.rate
        return String(format: "position %.3f s, rate %g, %d frames presented", position, rate, frames.counts.frames)
    }
}
