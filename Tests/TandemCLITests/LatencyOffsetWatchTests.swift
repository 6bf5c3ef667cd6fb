import Foundation
import Testing
import TandemTestKit
import TandemMpv
import TandemHarness

/// `--latency-offset MS` on `tandem host` and `tandem join`: out of range is
/// one usage line; `offset MS` changes it live; with mpv, mpv's own position leads the shared
/// timeline by the offset (real headless mpv, read over its IPC as another tool would).
@Suite(.serialized, .timeLimit(.minutes(3))) struct LatencyOffsetWatchProcessTests {
    @Test(arguments: [
        (["host", SampleClip.h264.path, "--bind", "127.0.0.1", "--port", "0", "--latency-offset", "1001"], "--latency-offset is a whole number of ms from -1000 to 1000"),
        (["host", SampleClip.h264.path, "--bind", "127.0.0.1", "--port", "0", "--latency-offset", "-1001"], "--latency-offset is a whole number of ms from -1000 to 1000"),
        (["host", SampleClip.h264.path, "--bind", "127.0.0.1", "--port", "0", "--latency-offset", "12.5"], "not '12.5'"),
        (["join", "tandem://127.0.0.1:9/00000000-0000-0000-0000-000000000000?k=x", SampleClip.h264.path, "--latency-offset", "soon"],
         "--latency-offset is a whole number of ms"),
    ])
    func anOffsetOutOfRangeIsOneUsageLine(arguments: [String], message: String) throws {
        let run = try TandemProcess.run(arguments, timeout: 20)
        #expect(run.status == 64)
        let lines = run.standardError.split(separator: "\n")
        #expect(lines.first?.contains(message) == true, "\(run.standardError)")
    }

    @Test func theHelpExplainsTheOffset() throws {
        for command in ["host", "join"] {
            let run = try TandemProcess.run([command, "--latency-offset"], timeout: 20)
            #expect(run.standardError.contains("--latency-offset needs a value"), "\(command): \(run.standardError)")
            let help = try TandemProcess.run(["help", command]).standardOutput
            #expect(help.contains("[--latency-offset MS]"), "\(command): \(help)")
            #expect(help.contains("present this many ms earlier"), "\(command): \(help)")
        }
    }

    @Test func theOffsetCommandChangesItLiveWithinItsRange() throws {
        let host = try WatchProcess(executable: TandemProcess.executablePath,
                                    arguments: ["host", SampleClip.h264.path, "--bind", "127.0.0.1", "--port", "0", "--events", "json",
                                                "--latency-offset", "-40"],
                                    name: "ana", acceptsCommands: true)
        defer { host.kill() }
        #expect(host.waitUntil(timeout: 30) { $0.contains { $0.event == "joined" } }, "\(host.standardError)")
        #expect(host.send("offset 30") != nil)
        #expect(host.send("offset 5000") != nil)
        #expect(host.send("offset") != nil)
        #expect(host.send("offset -1000") != nil)
        #expect(host.waitUntil(timeout: 10) { $0.filter { $0.event == "latency-offset" }.count == 2 && $0.filter { $0.event == "error" }.count == 2 },
                "\(host.lines)")
        let offsets = host.lines.filter { $0.contains(#""event":"latency-offset""#) }
        #expect(offsets == [#"{"event":"latency-offset","ms":30}"#, #"{"event":"latency-offset","ms":-1000}"#])
        #expect(host.events.filter { $0.event == "error" }.allSatisfy { $0.message?.contains("from -1000 to 1000") == true })
        #expect(host.send("end") != nil)
        host.closeInput()
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
    }

    @Test func mpvLeadsTheTimelineByTheOffset() async throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let clip = SampleClip.directory + "/watch-together.mp4"
        let socket = fixtures.path("mpv.sock")
        let host = try WatchProcess.host(media: [clip])
        defer { host.kill() }
        let invite = try #require(host.invite(), "no invite: \(host.standardError)")
        let joiner = try WatchProcess.join(invite: invite, media: [clip], name: "ben", mpv: .init(socket: socket),
                                           arguments: ["--latency-offset", "200"])
        defer { joiner.kill() }
        #expect(joiner.waitUntilJoined(), "\(joiner.standardError)")
        let mpv = try await MpvConnection.connect(path: socket, timeout: .seconds(20))
        defer { mpv.close() }
        #expect(host.send("play") != nil)
        #expect(host.waitUntil(timeout: 10) { $0.contains { $0.change == "play" } })
        try await Task.sleep(for: .seconds(3))
        // The timeline in force: the play's, or the later version that completed its pre-roll
        // gate (when on), anchored before the play's provisional one.
        let play = try #require(host.events.last { $0.event == "timeline" && ($0.rate ?? 0) > 0 })
        // 200 ms ahead, as mpv starts on the shifted timeline (to a fraction of a ms) and is
        // corrected towards it; a reading is good to half its round trip.
        var leads = try await mpv.leadsOverTimeline(of: play)
        #expect(leads.count >= 8 && abs(leads[leads.count / 2] - 200) < 5, "mpv's lead, ms: \(leads)")
        // Live: 100 ms behind now (an output that is early), the correction loop takes it there.
        #expect(joiner.send("offset -100") != nil)
        try await Task.sleep(for: .seconds(3))
        leads = try await mpv.leadsOverTimeline(of: play)
        #expect(leads.count >= 8 && abs(leads[leads.count / 2] + 100) < 5, "mpv's lead, ms: \(leads)")
        #expect(host.send("end") != nil)
        host.closeInput()
        #expect(joiner.waitForExit(timeout: 20) == 3)
    }
}
