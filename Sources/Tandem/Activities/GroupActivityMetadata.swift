import Foundation

/// How an activity describes itself to people.
public struct GroupActivityMetadata: Codable, Sendable, Hashable {
    /// The kinds of activity.
    public struct ActivityType: RawRepresentable, Codable, Sendable, Hashable {
        /// The type's name.
        public let rawValue: String
        /// A type named `rawValue`.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Anything else.
        public static let generic = ActivityType(rawValue: "generic")
        /// Watching video together.
        public static let watchTogether = ActivityType(rawValue: "watchTogether")
        /// Listening to music together.
        public static let listenTogether = ActivityType(rawValue: "listenTogether")
        /// Making something together.
        public static let createTogether = ActivityType(rawValue: "createTogether")
        /// Exploring together.
        public static let exploreTogether = ActivityType(rawValue: "exploreTogether")
        /// Learning together.
        public static let learnTogether = ActivityType(rawValue: "learnTogether")
        /// Reading together.
        public static let readTogether = ActivityType(rawValue: "readTogether")
        /// Shopping together.
        public static let shopTogether = ActivityType(rawValue: "shopTogether")
        /// Working out together.
        public static let workoutTogether = ActivityType(rawValue: "workoutTogether")
    }

    /// The title.
    public var title: String?
    /// A line under the title.
    public var subtitle: String?
    /// What kind of activity it is.
    public var type: ActivityType = .generic
    /// Where people without the program can follow along.
    public var fallbackURL: URL?
    /// A preview picture (PNG or JPEG bytes).
    public var previewImage: Data?

    /// How the activity can end, as SharePlay's (iOS 18): `.automatic` by default (anyone
    /// leaves alone or ends it for everyone); with `.endsWhenInitiatorLeaves`, the initiator's
    /// `leave()` ends the session for everyone, and so does its departure without leaving (the
    /// others end their sessions when the relay reports it gone): for what only the initiator
    /// holds (its photos, its file).
    public var lifetimePolicy: LifetimePolicy {
        get { lifetime ?? .automatic }
        set { lifetime = newValue == .automatic ? nil : newValue }
    }

    /// `lifetimePolicy` as encoded: absent for `.automatic`, so that metadata reads the same to
    /// a participant that knows no policy.
    private var lifetime: LifetimePolicy?

    /// How an activity can end, as SharePlay's `GroupActivityMetadata.LifetimePolicy`.
    public struct LifetimePolicy: RawRepresentable, Codable, Sendable, Hashable {
        /// The policy's name.
        public let rawValue: String
        /// A policy named `rawValue`; a name this version does not know acts as `.automatic`.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Anyone may leave alone or end the activity for everyone; it goes on while anyone is in it.
        public static let automatic = LifetimePolicy(rawValue: "automatic")
        /// The activity ends for everyone when its initiator leaves.
        public static let endsWhenInitiatorLeaves = LifetimePolicy(rawValue: "endsWhenInitiatorLeaves")
    }

    /// Empty metadata of the generic type.
    public init() {}
}
