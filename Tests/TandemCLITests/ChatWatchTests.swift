import Foundation
import Testing
import TandemTestKit
import TandemHarness

/// Chat between real `tandem` processes on loopback, with `--events json` and
/// `say TEXT` on standard input: lines arrive verbatim with their sender's name and identity, a
/// control character travels as it was written (escaped in the JSON), an oversized line is
/// refused in one line while the process goes on, and a late joiner is given the group's last
/// 100 lines, with the senders of lines whose sender has left.
@Suite(.serialized, .timeLimit(.minutes(3))) struct ChatWatchProcessTests {
    /// A `chat` event's fields.
    struct Chat: Equatable {
        var from: String
        var participant: String
        var text: String
    }

    /// The `chat` events `process` printed so far, in order.
    static func chats(_ process: WatchProcess) -> [Chat] {
        process.lines.compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  object["event"] as? String == "chat", let from = object["from"] as? String,
                  let participant = object["participant"] as? String, let text = object["text"] as? String else { return nil }
            return Chat(from: from, participant: participant, text: text)
        }
    }

    @Test func chatIsVerbatimBoundedAndKeptForLateJoiners() throws {
        let clip = SampleClip.h264BFrames.path
        func start(_ name: String, _ arguments: [String], environment: [String: String?] = [:]) throws -> WatchProcess {
            try WatchProcess(executable: TandemProcess.executablePath, arguments: arguments + ["--name", name, "--events", "json"],
                             name: name, acceptsCommands: true, environment: environment)
        }
        let host = try start("ana", ["host", clip, "--bind", "127.0.0.1", "--port", "0"])
        defer { host.kill() }
        let invite = try #require(host.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(host.standardError)")
        let joiner = try start("ben", ["join", clip], environment: ["TANDEM_INVITE": invite])
        defer { joiner.kill() }
        #expect(host.waitUntil(timeout: 20) { $0.contains { $0.event == "participant-joined" } }, "\(joiner.standardError)")

        // Verbatim: the blanks after `say ` are the text's.
        #expect(joiner.send("say  two  spaces ") != nil)
        let control = "red\u{1B}[31m!\u{07}"
        #expect(joiner.send("say " + control) != nil)
        // Over 1,000 bytes: one line refusing it, nothing sent, and the process goes on.
        #expect(joiner.send("say " + String(repeating: "x", count: 1_001)) != nil)
        #expect(joiner.send("say") != nil)
        #expect(joiner.send("say after") != nil)
        for process in [host, joiner] {
            #expect(process.waitUntil(timeout: 20) { _ in Self.chats(process).map(\.text).contains("after") },
                    "\(process.name): \(Self.chats(process))")
        }
        let benID = try #require(Self.chats(host).first?.participant)
        #expect(UUID(uuidString: benID) != nil)
        for process in [host, joiner] {
            #expect(Self.chats(process) == [Chat(from: "ben", participant: benID, text: " two  spaces "),
                                            Chat(from: "ben", participant: benID, text: control),
                                            Chat(from: "ben", participant: benID, text: "after")], "\(process.name)")
        }
        // Chat lines take order numbers, but are no proposals anybody failed to read.
        #expect(!host.events.contains { $0.event == "rejected" }, "\(host.events.filter { $0.event == "rejected" })")
        // The control characters reach the JSON as escapes only.
        #expect(!host.lines.contains { $0.contains("\u{1B}") || $0.contains("\u{07}") })
        let refusals = joiner.events.filter { $0.event == "error" }.compactMap(\.message)
        #expect(refusals.count == 2, "\(refusals)")
        #expect(refusals.first?.contains("1001 bytes") == true && refusals.first?.contains("1000") == true, "\(refusals)")

        // 98 lines from the host, then ben's last line, and ben leaves.
        for number in 1...98 { _ = host.send("say line \(number)") }
        #expect(joiner.waitUntil(timeout: 20) { _ in Self.chats(joiner).last?.text == "line 98" }, "\(Self.chats(joiner).suffix(3))")
        #expect(joiner.send("say bye") != nil)
        #expect(host.waitUntil(timeout: 20) { _ in Self.chats(host).last?.text == "bye" })
        #expect(joiner.send("leave") != nil)
        #expect(joiner.waitForExit(timeout: 20) == 0, "\(joiner.standardError)")
        #expect(host.waitUntil(timeout: 20) { $0.contains { $0.event == "participant-left" } })

        // 102 lines so far: a late joiner shows the last 100, ben's among them, by name.
        let late = try start("cy", ["join", clip], environment: ["TANDEM_INVITE": invite])
        defer { late.kill() }
        #expect(late.waitUntil(timeout: 20) { _ in Self.chats(late).last?.text == "bye" }, "\(late.standardError)")
        // Nothing more follows the history.
        #expect(host.send("say live") != nil)
        #expect(late.waitUntil(timeout: 20) { _ in Self.chats(late).last?.text == "live" })
        let shown = Self.chats(late)
        #expect(shown.count == 101, "the last 100, then the live one")
        #expect(shown.first == Chat(from: "ben", participant: benID, text: "after"))
        #expect(shown[shown.count - 2] == Chat(from: "ben", participant: benID, text: "bye"))
        #expect(shown.filter { $0.from == "ana" }.count == 99)
        #expect(host.send("end") != nil)
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
        #expect(late.waitForExit(timeout: 20) == 3)
    }
}
