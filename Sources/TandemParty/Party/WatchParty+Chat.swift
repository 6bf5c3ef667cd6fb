import Foundation
import Tandem

/// The party's chat: every line of the group's, this participant's own
/// included and, for a late joiner, the group's last 100, as `chat` events with the sender's
/// name (with its fingerprint when two share it). `say(_:)` sends.
extension WatchParty {
    /// Reports the chat for as long as the watch lasts.
    func followChat() -> Task<Void, Never> {
        Task {
            for await message in session.chatMessages() {
                let active = session.activeParticipants
                let name = (active.first { $0.id == message.sender } ?? session.participant(identifiedBy: message.sender))?
                    .name(among: active) ?? message.sender.uuidString
                emit(.chat(.init(from: name, participant: message.sender.uuidString, text: message.text)))
            }
        }
    }
}
