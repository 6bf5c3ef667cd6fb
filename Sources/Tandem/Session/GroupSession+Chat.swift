import Foundation
import TandemWire

/// The session's chat: the last lines kept for whoever reads (and, by the relay, for late
/// joiners), and each reader's stream.
struct SessionChat {
    /// The newest lines received, at most `ChatMessage.keptCount`, oldest first.
    var kept: [ChatMessage] = []
    var readers: [Int: AsyncStream<ChatMessage>.Continuation] = [:]
}

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
        let id = core.withLock { core -> Int? in
            guard !core.invalidated else { return nil }
            let id = core.nextSubscriber
            core.nextSubscriber += 1
            // Under the lock, so that no newer line overtakes the kept ones.
            for message in core.chat.kept { continuation.yield(message) }
            core.chat.readers[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.core.withLock { $0.chat.readers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Takes a chat record the group ordered (the history's, for a late joiner): kept, and
    /// passed to the readers. One that is no chat line (empty, too long, not UTF-8) or that
    /// was signed with another retention is dropped and reported.
    func chatReceived(_ delivery: OrderedPlaintext) {
        guard case .recent = delivery.retention else {
            reject(Rejection(reason: .wrongRetention, sender: delivery.sender, path: "chat"))
            return
        }
        guard let text = ChatRecord.decode(delivery.body) else {
            reject(Rejection(reason: .malformed, sender: delivery.sender, path: "chat"))
            return
        }
        let message = ChatMessage(sender: delivery.sender, text: text, order: delivery.order, orderedAt: delivery.orderedAt)
        core.withLock { core in
            guard !core.invalidated else { return }
            core.chat.kept.append(message)
            if core.chat.kept.count > ChatMessage.keptCount { core.chat.kept.removeFirst(core.chat.kept.count - ChatMessage.keptCount) }
            // Yielded under the lock, so that every reader sees the lines in the group's order.
            for reader in core.chat.readers.values { reader.yield(message) }
        }
    }

    /// Ends the chat readers, when the session is over.
    func finishChat() {
        let readers = core.withLock { core in
            defer { core.chat.readers.removeAll() }
            return Array(core.chat.readers.values)
        }
        for reader in readers { reader.finish() }
    }
}
