import Foundation
import Tandem
import TandemMedia
import TandemPlayback

/// The long-lived observer of `WatchTogether.sessions()` that a SharePlay app keeps: it takes
/// each session as it arrives, joins it, tracks who joined and who left, and puts the built-in
/// player under the session's playback coordinator.
@MainActor final class WatchSessionManager {
    /// The clip each participant plays from its own copy.
    let media: String
    /// The session being watched, if any.
    private(set) var session: GroupSession<WatchTogether>?
    /// Its player.
    private(set) var player: HeadlessPlayer?
    /// Everyone watching, this participant included once joined.
    private var participants: Set<Participant> = []
    private var tasks: [Task<Void, Never>] = []
    /// Counts the frames the player presents.
    private let frames = CountingSink()
    /// Told of each session that ends, with the reason.
    private let endings: AsyncStream<GroupSessionError>.Continuation
    /// The reasons sessions ended, in order.
    let ended: AsyncStream<GroupSessionError>

    init(media: String) {
        self.media = media
        (ended, endings) = AsyncStream.makeStream(of: GroupSessionError.self)
    }

    /// Takes sessions as they arrive, for as long as the program runs.
    func observeSessions() async {
        for await session in WatchTogether.sessions() {
            do {
                try configure(session)
            } catch {
                print("cannot watch \(TerminalText.sanitized(session.activity.item)): \(TerminalText.sanitized("\(error)"))")
                session.leave()
            }
        }
    }

    private func configure(_ session: GroupSession<WatchTogether>) throws {
        // A new session replaces the one before.
        self.session?.leave()
        for task in tasks { task.cancel() }
        player?.close()

        // The item carries its identity, so that `coordinateWithSession` reports it by itself (and
        // a session with an empty queue takes the first reported item: no `transitionToItem`).
        let item = PlaybackItem(file: media, identifier: session.activity.item, identity: try? MediaIdentity.of(file: media))
        let player = try HeadlessPlayer(item: item, videoSinks: [frames])
        self.session = session
        self.player = player
        let coordinator = player.playbackCoordinator
        // Read the coordinator's events before it joins, so that a late joiner sees the history.
        let events = coordinator.events
        tasks = [
            Task { for await event in events { self.report(event) } },
            Task { await self.trackParticipants(of: session) },
            Task { await self.follow(session, coordinator: coordinator) },
        ]
        session.join()
    }

    /// Follows the session's state: coordinates playback once joined, reports the end.
    private func follow(_ session: GroupSession<WatchTogether>, coordinator: PlaybackCoordinator) async {
        for await state in session.$state.values {
            switch state {
            case .waiting:
                continue
            case .joined:
                if session.isLocallyInitiated { print(session.invitation.url.absoluteString) }
                print("watching \(TerminalText.sanitized(session.activity.item)) as \(session.localParticipant.printableName)")
                coordinator.coordinateWithSession(session)
            case .invalidated(let reason):
                print("session over: \(TerminalText.sanitized("\(reason)"))")
                player?.close()
                endings.yield(reason)
                return
            }
        }
    }

    /// Prints who joins and who leaves, from the changes of `activeParticipants`.
    private func trackParticipants(of session: GroupSession<WatchTogether>) async {
        for await current in session.$activeParticipants.values {
            // The set empties when this participant's session ends: not the others leaving.
            if case .invalidated = session.state { return }
            let others = current.subtracting([session.localParticipant])
            let known = participants.subtracting([session.localParticipant])
            for joined in others.subtracting(known).sorted(by: { $0.displayName < $1.displayName }) {
                print("joined: \(joined.printableName)")
            }
            for left in known.subtracting(others).sorted(by: { $0.displayName < $1.displayName }) {
                print("left: \(left.printableName)")
            }
            participants = current
        }
    }

    /// One line for each change of the shared timeline, with who made it.
    private func report(_ event: PlaybackCoordinator.Event) {
        switch event {
        case .timelineChanged(let timeline, let originator, let proposal):
            guard let change = describe(proposal) else { return }
            print("timeline v\(timeline.version): \(TerminalText.sanitized(change)) by \(TerminalText.sanitized(name(of: originator))); \(describe(timeline))")
        case .groupWaiting(let timeline, let suspensions):
            let reasons = suspensions.map { "\(name(of: $0.participant)) (\($0.reason))" }.joined(separator: ", ")
            print("waiting for \(TerminalText.sanitized(reasons)); \(describe(timeline))")
        case .groupResumed(let timeline, let originator):
            print("resumed by \(TerminalText.sanitized(name(of: originator))); \(describe(timeline))")
        case .itemMismatch(let item, let identities):
            let names = identities.keys.map { name(of: $0) }.sorted().joined(separator: ", ")
            print("warning: participants play different files as \(TerminalText.sanitized(item)): \(TerminalText.sanitized(names))")
        case .proposalRejected(let rejection, let originator, _):
            print("skipped a change by \(TerminalText.sanitized(name(of: originator))): \(TerminalText.sanitized("\(rejection)"))")
        case .itemEnded(let timeline, let next, _):
            print(next.map { "end of item: on to \(TerminalText.sanitized($0.identifier)); \(describe(timeline))" }
                ?? "end of item: paused; \(describe(timeline))")
        case .commandAbandoned(let command):
            print("the player did not complete a command (timeline v\(command.version)) in time; going on")
        case .snapshotHistory(let note):
            print("history: \(TerminalText.sanitized("\(note)"))")
        }
    }

    private func name(of id: UUID) -> String {
        participants.first { $0.id == id }?.displayName ?? "someone who has left"
    }

    /// A proposal in a few words; nil for the bookkeeping that changes nothing a person sees.
    private func describe(_ proposal: PlaybackProposal) -> String? {
        switch proposal {
        case .setRate(let rate), .setRateImmediately(let rate): rate == 1 ? "play" : "rate \(rate)"
        case .pause: "pause"
        case .seek(let time), .seekImmediately(let time): String(format: "seek to %.3f s", Double(time.nanoseconds) / 1e9)
        case .transition(let item, _): "item \(item)"
        case .beginSuspension(_, let reason, _, _): "suspend (\(reason))"
        case .endSuspension: "end suspension"
        case .state, .departed, .prerolled: nil
        case .queue(let change): "queue \(change)"
        }
    }

    private func describe(_ timeline: SharedTimeline) -> String {
        let position = String(format: "%.3f s", Double(timeline.anchorMediaTime.nanoseconds) / 1e9)
        return timeline.rate == 0 ? "paused at \(position)" : "playing at \(timeline.rate)x from \(position)"
    }

    /// Where the player is and how much it has shown.
    func status() -> String {
        guard let player else { return "not watching" }
        let position = Double(player.mediaTime()) / 1e9
        let rate = player.playbackCoordinator.core.timeline.rate
        return String(format: "position %.3f s, rate %g, %d frames presented", position, rate, frames.counts.frames)
    }
}
