import TandemClock
import TandemPlayback

/// The decisions of the benchmarking baseline (`TimelineFollowing.onReceipt`), a pure core:
/// each new timeline version is applied once, when its command arrives, with no regard for the
/// command's instant, as most watch-together tools apply a peer's "play from here" message.
///
/// - A pause: pause now, showing the command's item time.
/// - A play: play now from the command's item time (seeking when mpv is more than a frame away,
///   and always when the group seeked), at the command's rate.
/// - A timeline already in force when its command arrives (a late joiner's, or mpv rejoining
///   after a person played on at the end): play now from where the group is now, `itemTime −
///   rate × (hostTime − now)`, as if the group had reported its position as the command arrived.
///
/// The coordinator re-issues the current version every second while the group plays, to follow
/// the session clock; the baseline has no clock to follow, and ignores them.
struct ReceiptFollower: Sendable, Equatable {
    /// What to do now.
    enum Directive: Sendable, Equatable {
        /// Pause, showing this media time (ns).
        case pause(at: Int64)
        /// Play at `rate` from `from` (ns): seek there if mpv is more than a frame away from it,
        /// or whatever mpv's position if `seek`.
        case play(from: Int64, rate: Double, seek: Bool)
    }

    /// One frame (ns): how far mpv may be from a command's position and still not seek.
    let frameDuration: Int64
    /// The last command applied.
    private(set) var applied: PlaybackCommand?

    /// A follower that has applied nothing yet.
    init(frameDuration: Int64) {
        self.frameDuration = frameDuration
    }

    /// What to do about `command`, received at host instant `now`; nil for a version already
    /// applied (the coordinator's re-issues) or an older one, and for seek and buffer commands
    /// (the play or pause that follows carries the change). `inForce`: the command's timeline
    /// took effect before the command was issued (its `timeline` anchored at or before its
    /// `issuedAt`, which `receive(_:now:rejoin:)` reads off the command). `rejoin`: the command
    /// re-issues the timeline applied last, to take it up again where the group is now. Rates
    /// are the group's (media seconds per session second): the baseline corrects no drift.
    mutating func receive(_ command: PlaybackCommand, now: HostInstant, inForce: Bool? = nil, rejoin: Bool = false) -> Directive? {
        if let applied, command.version <= applied.version, !rejoin { return nil }
        let inForce = (inForce ?? Self.inForce(command)) || rejoin
        let previous = applied
        switch command {
        case .pause(let pause):
            applied = command
            return .pause(at: pause.itemTime.nanoseconds)
        case .play(let play):
            applied = command
            let rate = play.timeline.rate
            if inForce {
                let position = play.itemTime - (play.hostTime - now) * rate
                return .play(from: max(0, position.nanoseconds), rate: rate, seek: false)
            }
            return .play(from: play.itemTime.nanoseconds, rate: rate, seek: previous.map { jumps(from: $0, to: play) } ?? false)
        case .seek, .buffer:
            return nil
        }
    }

    /// Whether `command`'s timeline had taken effect when the coordinator issued it.
    static func inForce(_ command: PlaybackCommand) -> Bool {
        switch command {
        case .play(let play): play.timeline.anchorSessionTime <= play.issuedAt
        case .pause(let pause): pause.timeline.anchorSessionTime <= pause.issuedAt
        case .seek, .buffer: false
        }
    }

    /// Whether `play` moves the timeline more than a frame away from where `previous` left it
    /// (the group seeked), rather than carrying on from there.
    private func jumps(from previous: PlaybackCommand, to play: PlayCommand) -> Bool {
        let carriedOn: ItemTime
        switch previous {
        case .pause(let pause): carriedOn = pause.itemTime
        case .play(let before): carriedOn = before.itemTime + (play.hostTime - before.hostTime) * before.timeline.rate
        case .seek(let seek): carriedOn = seek.itemTime
        case .buffer(let buffer): carriedOn = buffer.itemTime
        }
        return (play.itemTime - carriedOn).magnitude.nanoseconds > frameDuration
    }
}
