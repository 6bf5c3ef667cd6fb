// Apple's type names, each an alias of the Tandem type whose shape is Apple's: the members a
// program calls through the name are spelt, typed and behave as Apple documents them (the porting
// table's "Same" rows). AVFoundation's delegate protocol and its command classes are not aliases
// but types of their own over Tandem's (`PlaybackControlDelegate.swift`); a name whose Tandem type
// differs in shape (`AVPlayerItem`) has no alias: the compiler then points at each place a port
// must change.

/// AVFoundation's `AVPlaybackCoordinator`: Tandem's `PlaybackCoordinator`.
public typealias AVPlaybackCoordinator = PlaybackCoordinator

/// AVFoundation's `AVPlayerPlaybackCoordinator` (what `AVPlayer.playbackCoordinator` is): Tandem's
/// `PlaybackCoordinator`, which the built-in player and mpv each own.
public typealias AVPlayerPlaybackCoordinator = PlaybackCoordinator

/// AVFoundation's `AVDelegatingPlaybackCoordinator`: Tandem's `PlaybackCoordinator` with a
/// program's own player as its delegate (`init(playbackControlDelegate:)`): a player written to
/// AVFoundation's `AVPlaybackCoordinatorPlaybackControlDelegate`, issued Apple's four command
/// classes, or one written to Tandem's `PlaybackCoordinatorDelegate`, issued `PlaybackCommand`s.
public typealias AVDelegatingPlaybackCoordinator = PlaybackCoordinator

/// AVFoundation's `AVDelegatingPlaybackCoordinatorRateChangeOptions` (`.playImmediately`).
public typealias AVDelegatingPlaybackCoordinatorRateChangeOptions = PlaybackCoordinator.RateChangeOptions

/// AVFoundation's `AVDelegatingPlaybackCoordinatorSeekOptions` (`.resumeImmediately`).
public typealias AVDelegatingPlaybackCoordinatorSeekOptions = PlaybackCoordinator.SeekOptions

/// AVFoundation's `AVPlaybackCoordinationMedium`: Tandem's `PlaybackCoordinationMedium`, players
/// in one process coordinated without a session.
public typealias AVPlaybackCoordinationMedium = PlaybackCoordinationMedium

/// AVFoundation's `AVCoordinatedPlaybackSuspension`: Tandem's `PlaybackSuspension`
/// (`reason`, `beginDate`, `end()`, `end(proposingNewTime:)`).
public typealias AVCoordinatedPlaybackSuspension = PlaybackSuspension

/// AVFoundation's `AVCoordinatedPlaybackParticipant`: Tandem's `CoordinatedPlaybackParticipant`
/// (`identifier`, `suspensionReasons`, `isReadyToPlay`).
public typealias AVCoordinatedPlaybackParticipant = CoordinatedPlaybackParticipant

/// AVFoundation's `AVPlayer`: Tandem's built-in player, whose transport is AVPlayer's
/// (`play()`, `pause()`, a settable `Float` `rate`, `seek(to:)`, none throwing; `error`,
/// `timeControlStatus`, `reasonForWaitingToPlay`, `playbackCoordinator`). Making one differs: the
/// player opens its item at once, so `HeadlessPlayer(item:)` and `init(url:)` throw, and an item
/// is a `PlaybackItem`.
public typealias AVPlayer = HeadlessPlayer

extension HeadlessPlayer {
    /// AVFoundation's `AVPlayer.TimeControlStatus`: `.paused`, `.waitingToPlayAtSpecifiedRate`,
    /// `.playing`.
    public typealias TimeControlStatus = TandemPlayback.TimeControlStatus
    /// AVFoundation's `AVPlayer.WaitingReason`: `.waitingForCoordinatedPlayback`,
    /// `.toMinimizeStalls`.
    public typealias WaitingReason = TandemPlayback.WaitingReason
}

extension PlaybackSuspension {
    /// AVFoundation's `AVCoordinatedPlaybackSuspension.Reason`: Tandem's `SuspensionReason`.
    public typealias Reason = SuspensionReason
}

extension PlaybackCoordinator {
    /// A coordinator driving a player written to Tandem's delegate protocol, under
    /// AVFoundation's label: Tandem's `init(delegate:)`. The delegate is held weakly, as
    /// Apple's coordinator holds its own.
    public convenience init(playbackControlDelegate: any PlaybackCoordinatorDelegate) {
        self.init(delegate: playbackControlDelegate)
    }

    /// The player the coordinator drives, under AVFoundation's name: the program's own object,
    /// whichever of the two delegate protocols it was given by.
    public var playbackControlDelegate: AnyObject? {
        if let adapter = delegate as? PlaybackControlDelegateAdapter { return adapter.target }
        return delegate
    }
}
