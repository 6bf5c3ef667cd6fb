import TandemMedia
import TandemMpv
import TandemPlayback

/// Carries out the group's commands on a watch party's player in place of the player's own,
/// scheduled way (the coordinator's): a benchmark's baseline, say (`TandemBench`'s
/// `OnReceiptFollower`). Given the player, it returns a `WatchPartyFollowing`, whose coordinator
/// the party joins to the session and acts through in place of the player's own (which then
/// never coordinates, so that the player's transport acts at once); the party keeps it for as
/// long as the watch lasts.
public protocol WatchPartyFollower: Sendable {
    /// What the `mpv-statistics` event's `follow` says (the player's own way is "scheduled").
    var name: String { get }
    /// Follows the group with the built-in player `player`.
    func follow(_ player: HeadlessPlayer) -> any WatchPartyFollowing
    /// Follows the group with mpv `player`.
    func follow(_ player: MpvPlayer) -> any WatchPartyFollowing
}

/// One player followed by a `WatchPartyFollower`: its coordinator, the party's for the watch.
public protocol WatchPartyFollowing: AnyObject, Sendable {
    /// The coordinator that carries the group's commands to the follower (its delegate).
    var coordinator: PlaybackCoordinator { get }
}
