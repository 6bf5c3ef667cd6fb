import Foundation
import Testing
import TandemClock
@testable import TandemPlayback

/// A full queue in a snapshot: the queue's byte budget (`CoordinationCore.maximumQueueBytes`)
/// counts each entry as the snapshot's JSON encodes it, so that a state whose queue is full, of
/// names the encoder escapes most, still fits a snapshot (`CoordinationSnapshot.maximumBytes`)
/// with `restBytes` for the rest. Before, the budget counted UTF-8 bytes: a queue of control
/// characters encoded to six times it, and paths to nearly twice it.
@Suite struct SnapshotLimitTests {
    static let second: Int64 = 1_000_000_000

    func ordered(_ order: UInt64, _ who: UUID, at: Int64, _ proposal: PlaybackProposal) -> OrderedProposal {
        OrderedProposal(originator: who, order: order, orderedAt: sessionNS(at), effectiveAt: sessionNS(at + 50_000_000), proposal: proposal)
    }

    /// Names the encoder escapes: quotes, backslashes, slashes, control characters, and others
    /// it writes as they are (non-ASCII, DEL).
    static let awkward = [
        "film.mp4", "/media/films/a \"b\" \\c.mp4", "\u{01}\u{02}\n\t\r\u{08}\u{0C}\u{1F}", "été 日本 🎬", "\u{7F}<>&'",
        String(repeating: "/", count: 1_024), String(repeating: "\u{01}", count: 1_024),
    ]

    @Test func theBudgetCountsAtLeastWhatTheSnapshotEncoderWrites() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for name in Self.awkward {
            let string = try encoder.encode(name)
            #expect(string.count - 2 <= CoordinationCore.encodedBytes(of: name), "\(name.debugDescription): \(string.count - 2) bytes")
            let entry = PlaybackQueue.Entry(identifier: name, identity: String(name.prefix(64)), duration: .seconds(86_400))
            let encoded = try encoder.encode(entry)
            // The entry and the comma that separates it from the next.
            #expect(encoded.count + 1 <= CoordinationCore.queueBytes(of: entry), "\(name.debugDescription): \(encoded.count) bytes")
        }
    }

    @Test func aSnapshotOfAFullQueueOfTheMostEscapedNamesFitsAndIsStartedFrom() throws {
        var core = CoordinationCore(waitsForPreroll: true)
        // Eight participants on ordinary names, the group playing through the gate.
        let participants = (0..<8).map { _ in UUID() }
        var order: UInt64 = 0
        for participant in participants {
            order += 1
            _ = core.apply(ordered(order, participant, at: Self.second, .state(item: "film-\(order).mp4", identity: "d=60.000;h=aa\(order)",
                                                                               ready: true)))
        }
        // The queue filled to its budget with the longest names, all of control characters.
        let worst = { (index: Int) in
            PlaybackQueue.Entry(identifier: String(repeating: "\u{01}", count: PlaybackQueue.maximumIdentifierBytes - 8) + String(index),
                                identity: String(repeating: "\u{02}", count: PlaybackQueue.maximumIdentityBytes),
                                duration: .seconds(3_600))
        }
        var refused: ProposalRejection?
        for index in 0..<1_000 {
            let entry = worst(index)
            refused = core.queueRejection(of: .append(entry))
            if refused != nil { break }
            order += 1
            _ = core.apply(ordered(order, participants[0], at: Self.second, .queue(.append(entry))))
        }
        #expect(refused?.reason == .tooManyEntries)
        // At the limit: one more entry would not fit.
        #expect(core.queueBytes <= CoordinationCore.maximumQueueBytes)
        #expect(core.queueBytes + CoordinationCore.queueBytes(of: worst(0)) > CoordinationCore.maximumQueueBytes)
        order += 1
        _ = core.apply(ordered(order, participants[1], at: 2 * Self.second, .setRate(1)))
        #expect(core.waiting.gate?.expected.count == 8)

        let body = try CoordinationSnapshot(core: core).encoded()
        #expect(body.count <= CoordinationSnapshot.maximumBytes, "a full queue's snapshot takes \(body.count) bytes")
        let queue = try JSONEncoder().encode(core.queue)
        #expect(queue.count <= CoordinationCore.maximumQueueBytes, "the queue alone: \(queue.count) bytes")
        #expect(body.count - queue.count <= CoordinationSnapshot.restBytes, "the rest: \(body.count - queue.count) bytes")
        let validated = CoordinationSnapshot.validated(body, reflecting: core.timeline.version, orderedAt: sessionNS(2 * Self.second + 1),
                                                       pauseSnapsToMediaTimeOfOriginator: true)
        guard case .success(let snapshot) = validated else {
            Issue.record("not started from: \(validated)")
            return
        }
        #expect(snapshot.core == core)
    }
}
