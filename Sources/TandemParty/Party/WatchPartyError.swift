/// Why a watch party could not do what was asked: one line for a person, and whether the
/// request itself was wrong (a usage error) rather than the work failing.
public struct WatchPartyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The line to show.
    public let message: String
    /// True when what was asked cannot be done as asked (a missing file to play, a command of
    /// the other player's); false when the work failed.
    public let isUsage: Bool

    /// One line.
    public var description: String { message }

    /// What was asked was wrong.
    public static func usage(_ message: String) -> WatchPartyError { WatchPartyError(message: message, isUsage: true) }

    /// The work failed.
    public static func failure(_ message: String) -> WatchPartyError { WatchPartyError(message: message, isUsage: false) }
}
