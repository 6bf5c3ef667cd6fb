#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TandemTestKit
import TandemHarness

/// The terminal front's own output, in order with the party's: a refusal of a command comes
/// after the events reported before it (`--events json`), and at a terminal the status line
/// drops a participant the moment `participant-left` is printed.
@Suite(.serialized, .timeLimit(.minutes(2))) struct FrontOrderProcessTests {
    @Test func aRefusedCommandIsPrintedAfterTheEventsBeforeIt() throws {
        let clip = SampleClip.h264BFrames.path
        let host = try WatchProcess(executable: TandemProcess.executablePath,
                                    arguments: ["host", clip, "--bind", "127.0.0.1", "--port", "0", "--name", "ana", "--events", "json"],
                                    name: "ana", acceptsCommands: true)
        defer { host.kill() }
        // Sent at once: read as soon as the watch begins, just after `joined` is reported.
        #expect(host.send("bogus") != nil)
        #expect(host.waitUntil(timeout: 30) { $0.contains { $0.event == "error" } }, "\(host.standardError)")
        let events = host.lines.compactMap { line -> String? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return object["event"] as? String
        }
        let joined = try #require(events.firstIndex(of: "joined"), "\(events)")
        let error = try #require(events.firstIndex(of: "error"), "\(events)")
        #expect(joined < error, "\(events)")
        #expect(host.send("end") != nil)
        host.closeInput()
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
    }

    @Test func theStatusLineDropsADepartedParticipantWhenItsDepartureIsPrinted() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let runtime = fixtures.path("run")
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let clip = SampleClip.h264BFrames.path
        let hostLog = fixtures.path("host.out")
        let script = "env XDG_RUNTIME_DIR=\(runtime) \(TandemProcess.executablePath) host \(clip) --bind 127.0.0.1 --port 0 --name host "
            + "2>&1 | tee \(hostLog); sleep 30"
        let tmux = try TmuxSession.start(script, prefix: "tandem-front")
        defer { tmux.kill() }
        let invite = try #require(TmuxSession.invite(inLog: hostLog), "the host printed no invite")
        let joiner = try WatchProcess(executable: TandemProcess.executablePath, arguments: ["join", invite, clip, "--name", "ana", "--events", "json"],
                                      name: "ana", acceptsCommands: true)
        defer { joiner.kill() }
        #expect(try waitFor(20) { try tmux.screen().contains("ana, @host") })
        #expect(joiner.send("leave") != nil)
        // The moment the departure is on the screen, the status line (the last line) no longer
        // names ana; it did until then.
        var shown = ""
        #expect(try waitFor(15) {
            shown = try tmux.screen()
            return shown.contains("ana left")
        }, "\(shown)")
        let status = shown.split(separator: "\n").last { !$0.trimmingCharacters(in: .whitespaces).isEmpty } ?? ""
        #expect(!status.contains("ana"), "status line: \(status)")
        #expect(joiner.waitForExit(timeout: 20) == 0, "\(joiner.standardError)")
        try tmux.sendKeys("e", "e")
    }
}
