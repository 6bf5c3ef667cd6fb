/// Why a participant is holding up playback, as in AVFoundation's coordinator.
public struct SuspensionReason: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The reason's name.
    public let rawValue: String
    /// A reason named `rawValue` (custom reasons are welcome).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The player is buffering or recovering from a stall.
    public static let stallRecovery = SuspensionReason(rawValue: "stallRecovery")
    /// The person is scrubbing: changing the current time.
    public static let userIsChangingCurrentTime = SuspensionReason(rawValue: "userIsChangingCurrentTime")
    /// The person must do something first (sign in, accept terms).
    public static let userActionRequired = SuspensionReason(rawValue: "userActionRequired")
    /// An interstitial (an advertisement, a notice) is playing.
    public static let playingInterstitial = SuspensionReason(rawValue: "playingInterstitial")
    /// The participant has not yet loaded the item that the group plays.
    public static let coordinatedPlaybackNotPossible = SuspensionReason(rawValue: "coordinatedPlaybackNotPossible")

    /// A line for people to read.
    public var description: String { rawValue }
}
