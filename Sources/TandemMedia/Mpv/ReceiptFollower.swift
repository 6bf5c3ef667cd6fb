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

    /// What to do about `command`, received when the participant's clock (the clock of the
    /// command's `hostTime`) read `now`; nil for a version already applied (the coordinator's
    /// re-issues) or an older one, and for seek and buffer commands, which are carried out as
    /// they come. `inForce`: the command's timeline took effect before the command arrived (the
    /// player tells, from the session clock). `rejoin`: the command re-issues the timeline
    /// applied last, to take it up again where the group is now.
    mutating func receive(_ command: PlaybackCommand, now: Int64, inForce: Bool = false, rejoin: Bool = false) -> Directive? {
        if let applied, command.version <= applied.version, !rejoin { return nil }
        let inForce = inForce || rejoin
        let previous = applied
        switch command {
        case .pause(let pause):
            applied = command
            return .pause(at: pause.itemTime)
        case .play(let play):
            applied = command
            if inForce {
                let position = play.itemTime.saturatingSubtracting(play.hostTime.saturatingSubtracting(now).saturatingScaled(by: play.rate))
                return .play(from: max(0, position), rate: play.rate, seek: false)
            }
            return .play(from: play.itemTime, rate: play.rate, seek: previous.map { jumps(from: $0, to: play) } ?? false)
        case .seek, .buffer:
            return nil
        }
    }

    /// Whether `play` moves the timeline more than a frame away from where `previous` left it
    /// (the group seeked), rather than carrying on from there.
    private func jumps(from previous: PlaybackCommand, to play: PlayCommand) -> Bool {
        let carriedOn: Int64
        switch previous {
        case .pause(let pause): carriedOn = pause.itemTime
        case .play(let before):
            carriedOn = before.itemTime.saturatingAdding(play.hostTime.saturatingSubtracting(before.hostTime).saturatingScaled(by: before.rate))
        case .seek(let seek): carriedOn = seek.itemTime
        case .buffer(let buffer): carriedOn = buffer.itemTime
        }
        return play.itemTime.saturatingDistance(to: carriedOn) > frameDuration
    }
}
