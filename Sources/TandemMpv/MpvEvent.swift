/// Something mpv announced on its IPC connection without being asked: a property that an
/// `observe_property` watches changed, a seek began, playback restarted, the file ended.
public struct MpvEvent: Sendable, Equatable {
    /// The event's name: `property-change`, `seek`, `playback-restart`, `end-file`...
    public let name: String
    /// The whole message, with every field mpv sent.
    public let message: MpvValue
    /// When it arrived, on the raw monotonic clock (ns).
    public let receivedAt: Int64

    /// An event named `name`, as mpv sent it in `message`, received at `receivedAt`.
    public init(name: String, message: MpvValue, receivedAt: Int64) {
        self.name = name
        self.message = message
        self.receivedAt = receivedAt
    }

    /// For a `property-change`, the property's name.
    public var propertyName: String? { name == "property-change" ? message["name"]?.string : nil }
    /// For a `property-change`, the new value (`null` when the property has none now).
    public var propertyValue: MpvValue { message["data"] ?? .null }
}
