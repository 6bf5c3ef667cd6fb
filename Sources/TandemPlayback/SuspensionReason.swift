import TandemClock

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

    /// How long a suspension of this reason holds the group at most, unless the group's
    /// `CoordinationCore.Waiting.maximumHold` is shorter (`CoordinationCore+Holds.swift`): long
    /// enough for what the reason names to pass in an ordinary case, short enough that one
    /// participant cannot keep a party still. A stall, 15 s (a stream that has not recovered by
    /// then is unlikely to soon); scrubbing and loading the item, 30 s; an action the person must
    /// take (signing in), 60 s; an interstitial, 120 s (an advertisement break); any other reason,
    /// `defaultHoldLimitForOtherReasons`.
    public var defaultHoldLimit: TimeSpan {
        switch self {
        case .stallRecovery: .seconds(15)
        case .userIsChangingCurrentTime, .coordinatedPlaybackNotPossible: .seconds(30)
        case .userActionRequired: .seconds(60)
        case .playingInterstitial: .seconds(120)
        default: Self.defaultHoldLimitForOtherReasons
        }
    }

    /// How long a suspension of a reason Tandem does not name holds the group at most: 60 s.
    public static let defaultHoldLimitForOtherReasons = TimeSpan.seconds(60)

    /// A line for people to read.
    public var description: String { rawValue }
}
