import Foundation

/// Something that happened in a session, for this participant's own display, as SharePlay's
/// `GroupSessionEvent`: `session.showNotice(_:)` hands it to whatever shows notices here (the
/// readers of `session.notices`: a terminal's status line, a player's on-screen display), and
/// it goes to nobody else.
public struct GroupSessionEvent: Sendable, Hashable, CustomStringConvertible {
    /// What the originator did, as SharePlay's `GroupSessionEvent.Action`.
    public struct Action: Sendable, Hashable, CustomStringConvertible {
        /// A change to a queue, as SharePlay's `GroupSessionEvent.Action.QueueChange`.
        public struct QueueChange: Sendable, Hashable, CustomStringConvertible {
            /// What a queue change is about, as SharePlay's `QueueChange.Item`.
            public struct Item: Sendable, Hashable, CustomStringConvertible {
                /// The item's kind ("song", "container") and name.
                let kind: String
                let name: String
                /// A song named `name`.
                public static func song(_ name: String) -> Item { Item(kind: "song", name: name) }
                /// A container (an album, a playlist) named `name`.
                public static func container(_ name: String) -> Item { Item(kind: "container", name: name) }
                /// The item's name.
                public var description: String { name }
            }

            let verb: String
            let item: Item
            /// `item` was added to the queue.
            public static func added(_ item: Item) -> QueueChange { QueueChange(verb: "added", item: item) }
            /// `item` was set to play next.
            public static func setUpNext(_ item: Item) -> QueueChange { QueueChange(verb: "set up next", item: item) }
            /// The change in a few words: "added Here comes the sun".
            public var description: String { "\(verb) \(item)" }
        }

        /// The action in a few words, as a notice shows it ("played", "added X to the queue").
        public let description: String

        /// Playback started.
        public static let play = Action(description: "played")
        /// Playback stopped.
        public static let pause = Action(description: "paused")
        /// The queue changed, in no particular way.
        public static let updatedQueue = Action(description: "changed the queue")
        /// The queue changed by `change`.
        public static func updatedQueue(_ change: QueueChange) -> Action {
            Action(description: "\(change.verb) \(change.item) \(change.verb == "added" ? "to the queue" : "")"
                .trimmingCharacters(in: .whitespaces))
        }
    }

    /// Who did it.
    public let originator: Participant
    /// What they did.
    public let action: Action
    /// Where in the program it happened, if anywhere (SharePlay opens it when the notice is
    /// tapped; here a reader may show or follow it).
    public let url: URL?

    /// An event: `originator` did `action`, at `url` if given.
    public init(originator: Participant, action: Action, url: URL?) {
        self.originator = originator
        self.action = action
        self.url = url
    }

    /// The notice in a line: "Ana played".
    public var description: String { "\(originator) \(action)" }
}
