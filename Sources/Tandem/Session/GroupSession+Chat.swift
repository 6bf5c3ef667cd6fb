import Foundation
import TandemWire

// Chat travels in the ordered stream, sealed and signed as a `.chat` body with a recent
// retention: the relay keeps the last lines for late joiners without reading them, and every
// participant sees them in one order.
extension GroupSession {
    /// Sends `text` to the session's chat: everyone, this participant included, receives it
    /// (`chatMessages()`), and late joiners receive the last `ChatMessage.keptCount` lines.
    /// Throws before anything is sent when the text is empty or over `ChatMessage.maximumBytes`
    /// in UTF-8, or the session is not joined.
    public func sendChat(_ text: String) throws(GroupSessionError) {
        try sendOrdered(try ChatRecord.encode(text), kind: .chat,
                        retention: .recent(count: UInt16(ChatMessage.keptCount)))
    }

    /// The chat: the last lines received so far (at most `ChatMessage.keptCount`: a late
    /// joiner's are the group's last ones, from senders who may have left), then each new
    /// one, in the group's order. The sequence ends when the session is invalidated.
    public func chatMessages() -> AsyncStream<ChatMessage> {
        let (stream, continuation) = AsyncStream.makeStream(of: ChatMessage.self)
        let id = readerID()
        addReader({ [self] in
            // On the loop, so that no newer line overtakes the kept ones.
            for message in machine.chat { continuation.yield(message) }
            readers.chat[id] = continuation
        }, else: { continuation.finish() })
        continuation.onTermination = { [weak self] _ in
            self?.onLoop { [weak self] in _ = self?.readers.chat.removeValue(forKey: id) }
        }
        return stream
    }
}
