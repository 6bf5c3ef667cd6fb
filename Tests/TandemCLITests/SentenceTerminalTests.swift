import Foundation
import Testing
import TandemTestKit
import TandemHarness

/// What a person at an 80-column terminal reads by default: events as sentences, each change
/// credited to whoever made it (on the status line too), none of the technical fields; and a
/// late joiner told where the group is in one line, not the changes before it; with `--verbose`,
/// the technical lines instead.
@Suite(.serialized, .timeLimit(.minutes(2))) struct SentenceTerminalProcessTests {
    @Test func eventsReadAsSentencesAndALateJoinerGetsOneLine() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let clip = SampleClip.h264BFrames.path
        let hostLog = fixtures.path("host.out")
        let terminal = try TmuxSession.start(
            "\(TandemProcess.executablePath) host \(clip) --bind 127.0.0.1 --port 0 --name host --audio none 2>&1 | tee \(hostLog); sleep 5",
            prefix: "tandem-sentences", width: 80, height: 24)
        defer { terminal.kill() }
        let invite = try #require(TmuxSession.invite(inLog: hostLog))
        func screen() throws -> String { try terminal.screen() }
        #expect(try waitFor(20) { try screen().contains("nobody else is here yet; paused at 0:00") }, "\((try? screen()) ?? "")")

        let ana = try WatchProcess.join(invite: invite, file: clip, arguments: ["--name", "ana", "--events", "json", "--audio", "none"],
                                        name: "ana", acceptsCommands: true)
        defer { ana.kill() }
        #expect(try waitFor(20) { try screen().contains("ana joined") }, "\((try? screen()) ?? "")")
        #expect(ana.send("play") != nil)
        #expect(try waitFor(10) { try screen().contains("ana played from 0:00") }, "\((try? screen()) ?? "")")
        // The play is ana's, though the host's own readiness (its pre-roll report) let it begin.
        #expect(try waitFor(10) { try screen().split(separator: "\n").last?.contains("ana played from 0:00") == true },
                "\((try? screen()) ?? "")")
        #expect(try !screen().contains("pre-rolled"))
        try terminal.sendKeys(" ")
        // The pause is the host's, on the status line (its last line) and above it.
        #expect(try waitFor(10) {
            let lines = try screen().split(separator: "\n").map(String.init)
            return lines.dropLast().contains { $0.hasPrefix("host paused at 0:0") } && lines.last?.contains("host paused at 0:0") == true
        }, "\((try? screen()) ?? "")")

        // A late joiner, reading sentences without a terminal: one line for where the group is.
        let cy = try WatchProcess.join(invite: invite, file: clip, arguments: ["--name", "cy", "--audio", "none"], name: "cy",
                                       acceptsCommands: true)
        defer { cy.kill() }
        #expect(cy.waitUntil(timeout: 20) { _ in cy.lines.contains { $0.hasPrefix("ana and host are here; paused at 0:0") } },
                "\(cy.lines) \(cy.standardError)")
        #expect(cy.lines.contains { $0.hasSuffix("(host paused it)") }, "\(cy.lines)")
        #expect(!cy.lines.contains { $0.contains("played from") || $0.contains("joined") }, "the history told line by line: \(cy.lines)")
        #expect(try waitFor(10) { try screen().contains("cy joined") }, "\((try? screen()) ?? "")")

        // `--verbose`: every event with its technical fields, the history included, instead of
        // the sentences.
        let dee = try WatchProcess.join(invite: invite, file: clip, arguments: ["--name", "dee", "--verbose", "--audio", "none"],
                                        name: "dee", acceptsCommands: true)
        defer { dee.kill() }
        #expect(dee.waitUntil(timeout: 20) { _ in
            dee.lines.contains { $0.hasPrefix("timeline ") && $0.contains("version=") && $0.contains("effective_session_ns=") }
        }, "\(dee.lines) \(dee.standardError)")
        #expect(!dee.lines.contains { $0.contains("are here; paused at") }, "\(dee.lines)")

        // `h`: the group's health, a line for each, this participant first, the others by their
        // own reports.
        try terminal.sendKeys("h")
        #expect(try waitFor(10) {
            let text = try screen()
            return text.contains("you (host): paused with the group, clock ±") && text.contains("ana: paused with the group, clock ±")
                && text.contains("built-in")
        }, "\((try? screen()) ?? "")")

        let shown = try screen()
        for technical in ["effective_session_ns", "version=", "timeline ", "participant-joined"] {
            #expect(!shown.contains(technical), "\(shown)")
        }
        #expect(!cy.lines.contains { $0.contains("effective_session_ns") }, "\(cy.lines)")
        try terminal.sendKeys("e", "e")
        #expect(ana.waitForExit(timeout: 20) == 3, "\(ana.standardError)")
    }
}
