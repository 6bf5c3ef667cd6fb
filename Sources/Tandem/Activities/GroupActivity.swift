import Foundation

/// An activity that people share: watching a film, drawing, a quiz. Declare one as a `Codable`
/// struct, as with SharePlay:
///
/// ```swift
/// struct WatchTogether: GroupActivity {
///     var movie: String
///     var metadata: GroupActivityMetadata {
///         var metadata = GroupActivityMetadata()
///         metadata.title = movie
///         metadata.type = .watchTogether
///         return metadata
///     }
/// }
/// ```
public protocol GroupActivity: Codable, Sendable {
    /// Identifies the kind of activity across processes; by default the type's name.
    static var activityIdentifier: String { get }
    /// How the activity describes itself to people.
    var metadata: GroupActivityMetadata { get async }
}

extension GroupActivity {
    /// The type's name, for example `WatchTogether`.
    public static var activityIdentifier: String { String(describing: Self.self) }

    /// Empty metadata of the generic type, for an activity that does not describe itself
    /// (`tandem host` and the samples print the title when there is one).
    public var metadata: GroupActivityMetadata { GroupActivityMetadata() }

    /// The sessions of this activity as they arrive: one for each `activate()` here, and one for
    /// each invite accepted with `ActivityCenter.accept(_:)`.
    public static func sessions() -> GroupSessions<Self> {
        GroupSessions(center: ActivityCenter.shared)
    }

    /// Asks whether to start the activity for the group now. It is preferred while a relay is
    /// configured (see `ActivityCenter.configure`), and disabled otherwise.
    public func prepareForActivation() async -> GroupActivityActivationResult {
        ActivityCenter.shared.isEligible ? .activationPreferred : .activationDisabled
    }

    /// Starts the activity for the group: a new session arrives in `Self.sessions()`, with its
    /// invite, ready to `join()`. Returns whether it started.
    @discardableResult
    public func activate() async throws -> Bool {
        try await ActivityCenter.shared.activate(self)
    }
}

/// What `prepareForActivation()` advises.
public enum GroupActivityActivationResult: Sendable, Equatable {
    /// Start it for the group.
    case activationPreferred
    /// Group sessions are unavailable (no relay is configured or reachable): do it alone.
    case activationDisabled
    /// The person cancelled.
    case cancelled
}
