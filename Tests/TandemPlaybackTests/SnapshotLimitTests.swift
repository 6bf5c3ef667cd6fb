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

/// The cap on a snapshot's part other than its queue (`CoordinationSnapshot.restBytes`, 32 KiB,
/// counted by `nonQueueBytes(ofBody:)`), and the bounds on the waiting state it carries: a
/// snapshot over them is refused on receipt (`validated`) as a proposal over its bounds is, and
/// the joiner does not start from it.
@Suite struct SnapshotRestLimitTests {
    static let second: Int64 = 1_000_000_000

    func ordered(_ order: UInt64, _ who: UUID, at: Int64, _ proposal: PlaybackProposal) -> OrderedProposal {
        OrderedProposal(originator: who, order: order, orderedAt: sessionNS(at), effectiveAt: sessionNS(at + 50_000_000), proposal: proposal)
    }

    /// A core where `count` participants reported the film with identities of `identityBytes`
    /// bytes, and the first chose it.
    func core(participants count: Int, identityBytes: Int = 40) -> CoordinationCore {
        var core = CoordinationCore()
        let participants = (0..<count).map { _ in UUID() }
        for (index, participant) in participants.enumerated() {
            let identity = "d=60.000;h=" + String(repeating: "a", count: max(0, identityBytes - 11 - 4)) + String(format: "%04d", index)
            _ = core.apply(ordered(UInt64(index + 1), participant, at: Self.second, .state(item: "film.mp4", identity: identity, ready: true)))
        }
        _ = core.apply(ordered(UInt64(count + 1), participants[0], at: Self.second, .transition(item: "film.mp4", at: 0)))
        return core
    }

    func validated(_ core: CoordinationCore) throws -> (body: Int, Result<CoordinationSnapshot, ProposalRejection>) {
        let body = try CoordinationSnapshot(core: core).encoded()
        return (body.count, CoordinationSnapshot.validated(body, reflecting: core.timeline.version, orderedAt: sessionNS(2 * Self.second),
                                                           pauseSnapsToMediaTimeOfOriginator: true))
    }

    @Test func aSnapshotWhoseRestIsOverTheCapIsRefusedThoughItsBodyFits() throws {
        // 120 participants with identities at their longest: about 40 KiB outside an empty queue.
        let large = core(participants: 120, identityBytes: CoordinationCore.maximumIdentityBytes)
        let (bytes, result) = try validated(large)
        #expect(bytes <= CoordinationSnapshot.maximumBytes, "the body alone would fit: \(bytes) bytes")
        #expect(CoordinationSnapshot(core: large).nonQueueBytes(ofBody: bytes) > CoordinationSnapshot.restBytes)
        guard case .failure(let rejection) = result else {
            Issue.record("started from a snapshot whose rest takes \(bytes) bytes")
            return
        }
        #expect(rejection.reason == .oversized)
        #expect(rejection.detail.contains("outside its queue"), "\(rejection)")
        #expect(CoordinationSnapshot(core: large).sizeRejection(ofBody: bytes) == rejection)
    }

    @Test func aSnapshotWhoseRestIsWithinTheCapIsStartedFrom() throws {
        let small = core(participants: 40)
        let (bytes, result) = try validated(small)
        #expect(CoordinationSnapshot(core: small).nonQueueBytes(ofBody: bytes) <= CoordinationSnapshot.restBytes)
        #expect(try result.get().core == small)
    }

    @Test func theRestDoesNotCountTheQueuesBudget() throws {
        var core = core(participants: 2)
        let before = try CoordinationSnapshot(core: core).encoded().count
        let entry = PlaybackQueue.Entry(identifier: String(repeating: "e", count: 900), identity: nil, duration: .seconds(60))
        _ = core.apply(ordered(core.timeline.version + 1, UUID(), at: Self.second, .queue(.append(entry))))
        #expect(core.queue.entries.count == 2)
        let snapshot = CoordinationSnapshot(core: core)
        let after = try snapshot.encoded().count
        #expect(after > before + 900)
        // The entry's budget covers what it added: the rest grew by the version's digits at most.
        #expect(snapshot.nonQueueBytes(ofBody: after) <= before - CoordinationCore.queueBytes(of: core.queue.entries[0]) + 8)
    }

    /// Each bound on the waiting state, broken alone in an otherwise valid snapshot.
    @Test func aSnapshotsWaitingStateBeyondItsBoundsIsRefused() throws {
        let base = core(participants: 3)
        #expect(try validated(base).1.get().core == base)

        var policy = base
        policy.waiting.stalls = StallPolicy(limit: 1_000, window: .seconds(3_600))
        #expect(try rejection(policy)?.reason == .unreadable)

        var stalls = base
        let staller = UUID()
        for second in 0..<(StallPolicy.defaultLimit + 1) {
            stalls.waiting.stalls.recordStall(of: staller, at: sessionNS(Int64(second) * Self.second))
        }
        // The policy keeps `limit` instants: what it records is within the bound.
        #expect(try rejection(stalls) == nil)

        var identities = base
        identities.waiting.groupIdentities["other.mp4"] = String(repeating: "i", count: CoordinationCore.maximumIdentityBytes + 1)
        #expect(try rejection(identities)?.reason == .oversized)

        var many = base
        for index in 0...CoordinationCore.maximumParticipants { many.waiting.groupIdentities["item-\(index)"] = "d=1.000" }
        #expect(try rejection(many)?.reason == .tooManyParticipants)

        var gate = base
        gate.waiting.gate = PrerollGate(version: base.timeline.version, orderedAt: sessionNS(Self.second), effectiveAt: sessionNS(Self.second),
                                        expected: (0...CoordinationCore.maximumParticipants).map { _ in UUID() })
        // So many ids are over the rest's cap too (about 40 KiB); the count is the reason given.
        #expect(try rejection(gate)?.reason == .tooManyParticipants)
    }

    func rejection(_ core: CoordinationCore) throws -> ProposalRejection? {
        if case .failure(let rejection) = try validated(core).1 { return rejection }
        return nil
    }
}
