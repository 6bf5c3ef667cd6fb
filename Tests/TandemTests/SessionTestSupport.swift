import Foundation
import Testing
import Tandem
import TandemNet
import TandemTestKit

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
final class Inbox<Message: Codable & Sendable>: Sendable {
    private let recording: StreamRecording<(Message, Participant)>

    init(_ messenger: GroupSessionMessenger, _ type: Message.Type) {
        let messages = messenger.messages(of: type)
        let (stream, continuation) = AsyncStream.makeStream(of: (Message, Participant).self)
        let task = Task {
            for await (message, context) in messages { continuation.yield((message, context.source)) }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        recording = StreamRecording(stream)
    }

    /// What arrived so far, in order, with its sender.
    var received: [(Message, Participant)] { recording.elements }

    /// Waits until `count` messages or more have arrived, for at most `seconds`; true when they did.
    func awaitReceived(_ count: Int, within seconds: Double = 10) async -> Bool {
        await recording.awaitCount(count, within: seconds)
    }
}
