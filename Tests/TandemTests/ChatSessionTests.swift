import Foundation
import Synchronization
@testable import Tandem
import TandemNet
import TandemTestKit
import Testing

/// A session's chat, on both transports: lines arrive verbatim with their
/// signer, in the group's order; what the sender refuses (empty, over 1,000 bytes) is never
/// sent, and what a peer sends past those checks (an oversized or non-UTF-8 chat body, or one
/// signed with another retention) is dropped and reported by every receiver.
@Suite struct ChatSessionIOTests {
    @Test(arguments: TransportKind.allCases)
    func linesArriveVerbatimAndBadOnesAreDropped(transport: TransportKind) async throws {
        let hosted = try await SessionIOTests.host(transport)
        defer { hosted.relay.shutDown() }
        let ana = try await SessionIOTests.guest("ana", of: hosted)
        let received = Mutex<[ChatMessage]>([])
        // Both streams are subscribed to here, before anything is sent, not in the tasks that
        // read them, which may start after the first records arrive.
        let messages = hosted.session.chatMessages()
        let reader = Task { for await message in messages { received.withLock { $0.append(message) } } }
        defer { reader.cancel() }
        let rejections = Mutex<[Rejection]>([])
        let rejected = hosted.session.rejections
        let watcher = Task { for await rejection in rejected { rejections.withLock { $0.append(rejection) } } }
        defer { watcher.cancel() }

        #expect(throws: GroupSessionError.self) { try ana.sendChat("") }
        #expect(throws: GroupSessionError.self) { try ana.sendChat(String(repeating: "é", count: 501)) }
        let control = " bell\u{07} esc\u{1B}[2J "
        try ana.sendChat(control)
        // Past the sender's checks, as a modified peer would send them.
        try ana.sendOrdered(ChatRecord.marker + [UInt8](repeating: 0x78, count: 1_001), kind: .chat, retention: .recent(count: 100))
        try ana.sendOrdered(ChatRecord.marker + [0xFF, 0xFE], kind: .chat, retention: .recent(count: 100))
        try ana.sendOrdered(ChatRecord.marker + Array("kept".utf8), kind: .chat, retention: .kept)
        try ana.sendChat(String(repeating: "é", count: 500))
        #expect(await eventually { received.withLock { $0.count } == 2 && rejections.withLock { $0.count } == 3 })
        let lines = received.withLock { $0 }
        #expect(lines.map(\.text) == [control, String(repeating: "é", count: 500)])
        #expect(lines.allSatisfy { $0.sender == ana.localParticipant.id })
        #expect(lines[0].order < lines[1].order)
        #expect(rejections.withLock { $0.map(\.reason) } == [.malformed, .malformed, .wrongRetention])
        #expect(rejections.withLock { $0.allSatisfy { $0.path == "chat" && $0.sender == ana.localParticipant.id } })
        ana.leave()
    }
}
