import Foundation
import Testing
import Tandem
import TandemNet

/// A test activity.
struct Quiz: GroupActivity, Equatable {
    var topic: String
    var metadata: GroupActivityMetadata {
        var metadata = GroupActivityMetadata()
        metadata.title = "Quiz on \(topic)"
        metadata.type = .learnTogether
        return metadata
    }
}

/// A message type.
struct Answer: Codable, Equatable, Sendable {
    var question: Int
    var text: String
}

/// The next element of an async sequence, or nil after `seconds`.
func next<Sequence: AsyncSequence & Sendable>(_ sequence: Sequence, within seconds: Double = 10) async -> Sequence.Element?
where Sequence.Element: Sendable {
    await withTaskGroup(of: Sequence.Element?.self) { group in
        group.addTask {
            var iterator = sequence.makeAsyncIterator()
            return try? await iterator.next()
        }
        group.addTask {
            try? await Task.sleep(for: .seconds(seconds))
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

/// Collects what a messenger receives, in the background.
final class Inbox<Message: Codable & Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [(Message, Participant)] = []
    private var task: Task<Void, Never>?

    init(_ messenger: GroupSessionMessenger, _ type: Message.Type) {
        let messages = messenger.messages(of: type)
        task = Task { [weak self] in
            for await (message, context) in messages {
                self?.append(message, context.source)
            }
        }
    }

    private func append(_ message: Message, _ source: Participant) {
        lock.lock()
        items.append((message, source))
        lock.unlock()
    }

    var received: [(Message, Participant)] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }

    deinit { task?.cancel() }
}
