import Tandem

extension GroupSession {
    /// Joins and waits until joined; throws the reason when the session could not be joined.
    public func joinAndWait() async throws {
        join()
        for await state in $state.values {
            switch state {
            case .joined: return
            case .invalidated(let reason): throw reason
            case .waiting: continue
            }
        }
    }

    /// Waits until the session is over for this participant (left, ended, lost), observing
    /// `$state.values`, and says why.
    public func waitUntilOver() async {
        for await state in $state.values {
            if case .invalidated(let reason) = state {
                print("session over: \(TerminalText.sanitized("\(reason)"))")
                return
            }
        }
    }

    /// The others in the session, by name, sorted: `ana, bob`.
    public func otherNames(in participants: Set<Participant>) -> String {
        let names = participants.filter { $0 != localParticipant }.map(\.printableName).sorted()
        return names.isEmpty ? "(nobody else)" : names.joined(separator: ", ")
    }
}

/// Who came and who went between two sets of active participants.
public struct ParticipantChange: Sendable {
    /// Those who joined, sorted by name.
    public let joined: [Participant]
    /// Those who left, sorted by name.
    public let left: [Participant]
}

extension GroupSession {
    /// The others who join and leave from now on, as changes of `activeParticipants`; ends when
    /// the session is over for this participant (its own set then empties, which is not the
    /// others leaving).
    public var participantChanges: AsyncStream<ParticipantChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: ParticipantChange.self)
        let values = $activeParticipants.values
        let task = Task {
            var known: Set<Participant> = []
            for await participants in values {
                if case .invalidated = state { break }
                let others = participants.filter { $0 != localParticipant }
                let change = ParticipantChange(joined: others.subtracting(known).sorted { $0.displayName < $1.displayName },
                                               left: known.subtracting(others).sorted { $0.displayName < $1.displayName })
                known = others
                if !change.joined.isEmpty || !change.left.isEmpty { continuation.yield(change) }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}

extension Participant {
    /// The name to print: `displayName` is the participant's own choice, so it is shown
    /// without control characters or escape sequences (`TerminalText.sanitized(_:)`).
    public var printableName: String { TerminalText.sanitized(displayName) }
}
