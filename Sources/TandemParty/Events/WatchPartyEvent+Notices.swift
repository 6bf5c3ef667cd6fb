import Foundation
import Tandem

extension WatchPartyEvent {
    /// `hold-expired`: the participant the group stopped waiting for, its suspension having held
    /// the group for its longest hold (`CoordinationCore+Holds.swift`).
    public struct HoldExpired: Sendable, Equatable, Codable {
        /// The participant's name.
        public var participant: String
        /// The suspension's reason (`stallRecovery`…).
        public var reason: String
        /// The hold's limit, in seconds.
        public var seconds: Double
        /// Whether the group still waits, for another suspension (`still_waiting`).
        public var stillWaiting: Bool

        /// The fields.
        public init(participant: String, reason: String, seconds: Double, stillWaiting: Bool) {
            (self.participant, self.reason, self.seconds, self.stillWaiting) = (participant, reason, seconds, stillWaiting)
        }

        enum CodingKeys: String, CodingKey {
            case participant, reason, seconds
            case stillWaiting = "still_waiting"
        }
    }

    /// `notice`: what this participant's program showed it (`GroupSession.showNotice(_:)`): who
    /// did what, in words.
    public struct Notice: Sendable, Equatable, Codable {
        /// The originator's name.
        public var by: String
        /// The originator's identifier (a UUID).
        public var participant: String
        /// What they did, in words ("played", "added Here comes the sun to the queue").
        public var action: String
        /// Where in the program it happened, if the notice says.
        public var url: String?

        /// The fields.
        public init(by: String, participant: String, action: String, url: String? = nil) {
            (self.by, self.participant, self.action, self.url) = (by, participant, action, url)
        }
    }
}

extension WatchPartyEvent.Notice {
    /// The fields of `notice`, its originator named by `name` (as the status line names
    /// everyone).
    public init(_ notice: GroupSessionEvent, name: String) {
        self.init(by: name, participant: notice.originator.id.uuidString, action: notice.action.description,
                  url: notice.url?.absoluteString)
    }
}
