import Foundation
@testable import Tandem
import TandemNet
import TandemTestKit
import Testing

/// A session's chat, with whole participants in virtual time (`VirtualSessions`): lines arrive
/// verbatim with their signer, in the group's order; what the sender refuses (empty, over 1,000
/// bytes) is never sent, and what a peer sends past those checks (an oversized or non-UTF-8 chat
/// body, or one signed with another retention) is dropped and reported by every receiver.
@Suite struct ChatSessionTests {
    @Test func linesArriveVerbatimAndBadOnesAreDropped() async throws {
        let sessions = VirtualSessions(activity: Quiz(topic: "rivers"))
        defer { sessions.shutdown() }
        let host = try sessions.join("host").session
        let ana = try sessions.join("ana").session
        sessions.run(for: 100)
        // Both streams are subscribed to before anything is sent.
        let messages = host.chatMessages()
        let rejected = host.rejections
        sessions.run()

        #expect(throws: GroupSessionError.self) { try ana.sendChat("") }
        #expect(throws: GroupSessionError.self) { try ana.sendChat(String(repeating: "é", count: 501)) }
        let control = " bell\u{07} esc\u{1B}[2J "
        try ana.sendChat(control)
        // Past the sender's checks, as a modified peer would send them.
        try ana.sendOrdered(ChatRecord.marker + [UInt8](repeating: 0x78, count: 1_001), kind: .chat, retention: .recent(count: 100))
        try ana.sendOrdered(ChatRecord.marker + [0xFF, 0xFE], kind: .chat, retention: .recent(count: 100))
        try ana.sendOrdered(ChatRecord.marker + Array("kept".utf8), kind: .chat, retention: .kept)
        try ana.sendChat(String(repeating: "é", count: 500))
        sessions.run(for: 100)
        ana.leave()
        host.leave()
        sessions.run(for: 100)
        var lines: [ChatMessage] = []
        for await line in messages { lines.append(line) }
        var rejections: [Rejection] = []
        for await rejection in rejected { rejections.append(rejection) }
        #expect(lines.map(\.text) == [control, String(repeating: "é", count: 500)])
        #expect(lines.allSatisfy { $0.sender == ana.localParticipant.id })
        #expect(lines.count == 2 && lines[0].order < lines[1].order)
        #expect(rejections.map(\.reason) == [.malformed, .malformed, .wrongRetention])
        #expect(rejections.allSatisfy { $0.path == "chat" && $0.sender == ana.localParticipant.id })
    }
}
