#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TandemTestKit
import TandemHarness

/// Issue 15, items 1 and 2, at a real terminal (tmux): `q` on the host gives its terminal back
/// (the shell after it runs, the terminal out of raw mode) while a joiner watches and controls on;
/// `SIGTERM` to a host at a terminal leaves the same way. No relay is left behind.
@Suite(.serialized, .timeLimit(.minutes(3))) struct PartyTerminalProcessTests {
    /// How the host leaves.
    enum Leaving { case key, terminate }

    @Test(arguments: [Leaving.key, .terminate])
    func theHostLeavesAndGetsItsTerminalBack(_ leaving: Leaving) throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let runtime = fixtures.path("run")
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // A path of this test's own, so that the host found by its command line below is this
        // test's, not another suite's running at the same time with the same sample.
        let clip = fixtures.path(SampleClip.h264BFrames.name)
        try FileManager.default.copyItem(atPath: SampleClip.h264BFrames.path, toPath: clip)
        let hostLog = fixtures.path("host.out")
        // After the host: the shell reports its status and the terminal's mode, then waits.
        let script = "env XDG_RUNTIME_DIR=\(runtime) \(TandemProcess.executablePath) host \(clip) --bind 127.0.0.1 --port 0 --relay-linger 1 --name host "
            + "2>&1 | tee \(hostLog); echo HOST-EXITED; stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e echo | tr '\\n' ' '; echo; sleep 30"
        let tmux = try TmuxSession.start(script, prefix: "tandem-party")
        defer { tmux.kill() }
        let invite = try #require(TmuxSession.invite(inLog: hostLog), "the host printed no invite")
        let records = (try? FileManager.default.contentsOfDirectory(atPath: runtime + "/tandem"))?.filter { $0.hasSuffix(".json") } ?? []
        let record = try #require(records.first.flatMap { FileManager.default.contents(atPath: runtime + "/tandem/" + $0) })
        let relay = try #require(((try JSONSerialization.jsonObject(with: record)) as? [String: Any])?["pid"] as? NSNumber).int32Value

        let joiner = try WatchProcess(executable: TandemProcess.executablePath, arguments: ["join", invite, clip, "--name", "ana", "--events", "json"],
                                      name: "ana", acceptsCommands: true)
        defer { joiner.kill() }
        func screen() throws -> String { try tmux.screen() }
        #expect(try waitFor(20) { try screen().contains("ana, @host") })
        // The joiner's own report of the host, before the host goes: the host lists the joiner as
        // soon as its presence arrives, while the joiner is still opening its file, and a host
        // that joined and left before the joiner's watch began is never reported to it at all.
        #expect(joiner.waitUntil(timeout: 20) { $0.contains { $0.event == "participant-joined" && $0.name == "host" } },
                "\(joiner.lines.suffix(8))")

        switch leaving {
        case .key:
            try tmux.sendKeys("q")
        case .terminate:
            let host = try #require(PartyProcessTests.process(commandLineContaining: "host", and: clip), "no host process")
            kill(host, SIGTERM)
        }
        // The terminal is the shell's again, in its cooked mode (canonical input, echo).
        let exited = try waitFor(15) { try screen().contains("HOST-EXITED") }
        let cooked = try waitFor(5) { try screen().contains("icanon echo") }
        let shown = try screen()
        #expect(exited && cooked, "\(shown)")
        // The joiner goes on: it sees the host go, and controls playback alone.
        #expect(joiner.waitUntil(timeout: 10) { $0.contains { $0.event == "participant-left" && $0.name == "host" } },
                "\(joiner.lines.suffix(8))")
        #expect(joiner.send("play") != nil)
        #expect(joiner.waitUntil(timeout: 10) { $0.contains { $0.change == "play" && $0.by == "ana" } }, "\(joiner.lines.suffix(4))")
        #expect(PartyProcessTests.isRunning(relay))
        #expect(joiner.send("leave") != nil)
        #expect(joiner.waitForExit(timeout: 20) == 0, "\(joiner.standardError)")
        // Its linger is a second once the joiner's session is over.
        PartyProcessTests.expectGone(relay, within: 10, "the relay")
    }
}
