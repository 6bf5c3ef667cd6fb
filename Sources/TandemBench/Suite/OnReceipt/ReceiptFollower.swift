import TandemClock
import TandemPlayback

/// The decisions of the benchmarks' baseline, "apply on receipt", a pure core: what most
/// watch-together tools do, with no scheduling and no clock synchronisation, every change of
/// the group's timeline applied when its command arrives, on this participant's own clock.
/// `OnReceiptFollower` feeds it the coordinator's commands and carries its directives out on a
/// player's own, uncoordinated transport (`ImmediateTransport`).
///
/// - Each change is applied once, when its first command arrives; the commands the coordinator
///   re-issues for the same timeline (every second while playing; the relay also numbers a new
///   version for proposals that leave it as it is) are ignored, except a play command while the
///   player is paused (the catch-up after a suspension of this participant's own, during which
///   the player was frozen). A change is where and how fast the timeline plays (its item,
///   anchors and rate), not its version. A timeline of the same item, anchor media time and
///   rate whose anchor only moved earlier is the same change: the pre-roll gate's completion of
///   a play it first issued provisionally, anchored at the gate's deadline.
/// - A fresh change (its effective instant still ahead at receipt) is applied as the command
///   carries it, from now: play from its media time at its rate of this participant's own clock
///   (whose drift nobody corrects), or pause at it. It so takes effect up to the relay's lead
///   before its effective instant, at a different instant on each participant (each receives
///   it after its own network delay): what the baseline measures.
/// - A timeline already in force (joining late, catching up after a stall) is taken up at the
///   position it has now (`itemTime − rate × (hostTime − now)`), plus `rate` times the lead this
///   participant measured on its last fresh change (the relay's shortest lead when it has seen
///   none), since peers acting on receipt run ahead of the shared timeline by that lead: as if
///   the group had reported its position at the instant it arrived, the most favourable case.
/// - It never waits (no pre-roll, no stall suspension).
/// - A command for another item switches to it on receipt, from the command's item time (the
///   item's start for a transition); a seek or buffering command for it prepares it.
public struct ReceiptFollower: Sendable {
    /// What to do now.
    public enum Directive: Sendable, Equatable {
        /// Pause at media time `at` (ns), from raw monotonic instant `now`; on item `item` first,
        /// when it is not nil (a switch).
        case pause(at: Int64, now: Int64, item: String?)
        /// Play at `rate` (media seconds per second of this participant's clock) from media time
        /// `from` (ns) at raw monotonic instant `now`; on item `item` first, when it is not nil.
        /// `seek`: the group moved (or the timeline is taken up where it is), so a player that
        /// keeps its position across a play must seek; false when it carries on from where the
        /// last change left it.
        case play(from: Int64, rate: Double, now: Int64, seek: Bool, item: String?)
        /// Prepare item `item` at media time `at` (ns): a switch to it is coming.
        case prepare(item: String, at: Int64)
    }

    /// What makes a timeline a change: where and how fast it plays, not its version.
    struct Change: Equatable, Sendable {
        var item: String?
        var anchorSessionTime: SessionInstant
        var anchorMediaTime: ItemTime
        var rate: Double
    }

    /// The relay's shortest lead (`RelayCoreConfiguration.minimumLead`): on loopback, how far
    /// ahead of its effective instant a change reaches everyone.
    public static let shortestRelayLead = TimeSpan.milliseconds(30)

    /// How far (ns) the group may move a play from where the last change left it and still
    /// count as carrying on (no seek): about a frame.
    public let seekTolerance: Int64
    /// The last change applied.
    private(set) var applied: Change?
    /// Where the last change applied left the timeline: its media time at its host instant, and
    /// its rate.
    private(set) var left: (itemTime: ItemTime, hostTime: HostInstant, rate: Double)?
    /// Session time between receiving the last fresh change and its effective instant; until
    /// one is seen, the relay's shortest lead. A gated play's provisional anchor (the gate's
    /// deadline) is replaced by its completion's, once that arrives.
    private(set) var lead: TimeSpan = ReceiptFollower.shortestRelayLead
    /// The lead before the last fresh change was learned, restored when that change turns out
    /// provisional and its completion is no longer fresh.
    private var leadBefore: TimeSpan = ReceiptFollower.shortestRelayLead

    /// A follower that has applied nothing yet.
    public init(seekTolerance: Int64 = 40_000_000) {
        self.seekTolerance = seekTolerance
    }

    /// What to do about `command`, received at raw monotonic instant `now`, with the player
    /// `paused` (its own state, not the group's) on item `currentItem`; nil when nothing is to be
    /// done (a change applied already, a seek or buffering command for the current item).
    public mutating func receive(_ command: PlaybackCommand, now: Int64, paused: Bool, currentItem: String?) -> Directive? {
        let switching = command.expectedCurrentItemIdentifier.flatMap { $0 != currentItem ? $0 : nil }
        let carried: (timeline: SharedTimeline, issuedAt: SessionInstant)
        switch command {
        case .play(let play): carried = (play.timeline, play.issuedAt)
        case .pause(let pause): carried = (pause.timeline, pause.issuedAt)
        // The play or pause that follows carries the change.
        case .seek(let seek): return switching.map { .prepare(item: $0, at: seek.itemTime.nanoseconds) }
        case .buffer(let buffer): return switching.map { .prepare(item: $0, at: buffer.itemTime.nanoseconds) }
        }
        let timeline = carried.timeline
        let change = Change(item: timeline.item, anchorSessionTime: timeline.anchorSessionTime,
                            anchorMediaTime: timeline.anchorMediaTime, rate: timeline.rate)
        // The pre-roll gate's completion of a provisional play: the same change, anchored earlier.
        let completing = switching == nil && applied.map {
            $0.item == change.item && $0.anchorMediaTime == change.anchorMediaTime && $0.rate == change.rate
                && change.anchorSessionTime < $0.anchorSessionTime
        } ?? false
        let same = applied == change || completing
        let catchUp: Bool
        if case .play = command, switching == nil, same, paused { catchUp = true } else { catchUp = false }
        let fresh = !catchUp && timeline.anchorSessionTime > carried.issuedAt
        if completing {
            // Learn the lead from the completion, not from the gate's deadline.
            lead = timeline.anchorSessionTime > carried.issuedAt ? timeline.anchorSessionTime - carried.issuedAt : leadBefore
            applied = change
            if case .play(let play) = command { left = (play.itemTime, play.hostTime, timeline.rate) }
            if !catchUp { return nil }
        }
        guard !same || catchUp || switching != nil else { return nil }
        if fresh {
            leadBefore = lead
            lead = timeline.anchorSessionTime - carried.issuedAt
        }
        applied = change
        switch command {
        case .play(let play):
            let host = HostInstant(nanoseconds: now)
            let position: ItemTime
            if switching != nil || fresh {
                position = play.itemTime
            } else {
                let ahead = lead - (play.hostTime - host)
                position = play.itemTime + ahead * timeline.rate
            }
            let seek = switching == nil && (!fresh || jumps(to: play))
            left = (play.itemTime, play.hostTime, timeline.rate)
            return .play(from: max(0, position.nanoseconds), rate: timeline.rate, now: now, seek: seek, item: switching)
        case .pause(let pause):
            left = (pause.itemTime, pause.hostTime, 0)
            return .pause(at: pause.itemTime.nanoseconds, now: now, item: switching)
        case .seek, .buffer:
            return nil
        }
    }

    /// Whether `play` moves the timeline more than `seekTolerance` from where the last change
    /// left it (the item's start before any), rather than carrying on from there.
    private func jumps(to play: PlayCommand) -> Bool {
        let carriedOn = left.map { $0.itemTime + (play.hostTime - $0.hostTime) * $0.rate } ?? .zero
        return (play.itemTime - carriedOn).magnitude.nanoseconds > seekTolerance
    }
}
