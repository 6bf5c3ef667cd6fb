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

    /// Empty metadata of the generic type.
    public init() {}
}
