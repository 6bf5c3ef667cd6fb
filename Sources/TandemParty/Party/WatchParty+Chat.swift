import Foundation
import Tandem

/// The party's chat: every line of the group's, this participant's own
/// included and, for a late joiner, the group's last 100, as `chat` events with the sender's
/// name (with its fingerprint when two share it; "someone" for a sender never heard of, whose
/// identity the event's `participant` still carries). `say(_:)` sends.
extension WatchParty {
    /// The work that reports the chat, to run for as long as the watch lasts.
    func followChat() -> @Sendable () async -> Void {
        let messages = session.chatMessages()
        return { [self] in
            for await message in messages {
                let active = session.activeParticipants
                let name = (active.first { $0.id == message.sender } ?? session.participant(identifiedBy: message.sender))?
                    .name(among: active) ?? Self.unknownSender
                emit(.chat(.init(from: name, participant: message.sender.uuidString, text: message.text)))
            }
        }
    }

    /// The name a chat line's sender goes by when nothing is known of them: people read names,
    /// never identifiers.
    static let unknownSender = "someone"
}
