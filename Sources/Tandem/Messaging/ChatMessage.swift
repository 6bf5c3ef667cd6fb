import Foundation

/// A line of a session's chat, as every participant receives it: in the group's order, signed by
/// its sender, sealed so that the relay reads nothing (`GroupSession.sendChat(_:)`).
///
/// Its text is the sender's own, verbatim: it may hold anything Unicode allows, control
/// characters included, so a program that shows it at a terminal must sanitise it first
/// (`TerminalText.sanitized`).
public struct ChatMessage: Sendable, Hashable {
    /// The largest text, in UTF-8 bytes.
    public static let maximumBytes = 1_000
    /// How many of the last lines the relay keeps for late joiners, and a session hands a
    /// reader before the new ones.
    public static let keptCount = 100

    /// Its signer (who may have left since: `GroupSession.participant(identifiedBy:)` still
    /// names them).
    public let sender: UUID
    /// What they wrote.
    public let text: String
    /// Its place in the session's order.
    public let order: UInt64
    /// The session time, in nanoseconds, at which the relay ordered it.
    public let orderedAt: Int64

    /// A line `text` from `sender`, ordered `order` at session time `orderedAt`.
    public init(sender: UUID, text: String, order: UInt64, orderedAt: Int64) {
        self.sender = sender
        self.text = text
        self.order = order
        self.orderedAt = orderedAt
    }
}

/// A chat line in the ordered stream: two marker bytes (a NUL, then "C": no JSON proposal starts
/// so), then the text in UTF-8.
package enum ChatRecord {
    /// The two bytes that open every chat record.
    static let marker: [UInt8] = [0x00, 0x43]

    /// Whether an ordered record's plaintext is a chat line, not a playback proposal: the
    /// coordinator passes over these (they take an order number like any other record).
    package static func isChat(_ body: [UInt8]) -> Bool {
        body.count >= marker.count && body[0] == marker[0] && body[1] == marker[1]
    }

    /// `text` as a record, or why it cannot be one: empty, or over `ChatMessage.maximumBytes`.
    static func encode(_ text: String) throws(GroupSessionError) -> [UInt8] {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { throw GroupSessionError(.encoding, "an empty chat message is not sent") }
        guard bytes.count <= ChatMessage.maximumBytes else {
            throw GroupSessionError(.tooLarge, "a chat message of \(bytes.count) bytes is over the limit of \(ChatMessage.maximumBytes) bytes")
        }
        return marker + bytes
    }

    /// The text of a record, nil when it is no chat record, is empty, too long or not UTF-8.
    static func decode(_ body: [UInt8]) -> String? {
        guard isChat(body), body.count > marker.count, body.count - marker.count <= ChatMessage.maximumBytes else { return nil }
        return String(validating: body[marker.count...], as: UTF8.self)
    }
}
