import Foundation
import Testing
import TandemBench
import TandemTestKit
import TandemMediaTypes
import TandemHarness

/// No file needed to join, as real processes through a real relay: a joiner
/// without the file streams it from the host and presents it in step, seeks with the group,
/// moves to another holder when the host leaves, and is suspended when no holder is left; a URL
/// item is opened by every participant itself, by a joiner only with `--allow-urls`.
@Suite(.serialized, .timeLimit(.minutes(2))) struct StreamingWatchProcessTests {
    static let watchClip = SampleClip.directory + "/watch-together.mp4"

    func start(_ name: String, _ arguments: [String], fixtures: MediaFixtures, invite: String? = nil) throws -> WatchProcess {
        try WatchProcess(executable: TandemProcess.executablePath,
                         arguments: arguments + ["--name", name, "--events", "json", "--presentation-log", fixtures.path("\(name).jsonl")],
                         name: name, acceptsCommands: true, environment: invite.map { ["TANDEM_INVITE": $0] } ?? [:])
    }

    /// Presentation records of `name`, moving frames only.
    func records(_ name: String, _ fixtures: MediaFixtures) throws -> [PresentationRecord] {
        try PresentationRecord.read(path: fixtures.path("\(name).jsonl")).filter { $0.still != true }
    }

    @Test func aJoinerWithoutTheFileStreamsItPresentsInStepAndSeeks() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let host = try start("ana", ["host", Self.watchClip, "--bind", "127.0.0.1", "--port", "0"], fixtures: fixtures)
        defer { host.kill() }
        let invite = try #require(host.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(host.standardError)")
        #expect(host.send("play") != nil)
        Thread.sleep(forTimeInterval: 1)
        // No media at all: the invite in the environment, nothing else.
        let joiner = try start("ben", ["join"], fixtures: fixtures, invite: invite)
        defer { joiner.kill() }
        #expect(joiner.waitUntil(timeout: 20) { $0.contains { $0.event == "streaming" } }, "\(joiner.lines.suffix(5)) \(joiner.standardError)")
        // The instant the joiner printed `joined` (its own clock: the line may reach this test later).
        let joinedLine = try #require(joiner.lines.first { $0.contains(#""event":"joined""#) })
        let joinedObject = try #require(try JSONSerialization.jsonObject(with: Data(joinedLine.utf8)) as? [String: Any])
        let joinedAt = try #require((joinedObject["monotonic_ns"] as? NSNumber)?.int64Value, "\(joinedLine)")
        Thread.sleep(forTimeInterval: 2.5)
        let seekSent = try #require(host.send("seek 12"))
        Thread.sleep(forTimeInterval: 2.5)
        #expect(host.send("end") != nil)
        host.closeInput()
        joiner.closeInput()
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
        #expect(joiner.waitForExit(timeout: 20) == 3, "\(joiner.standardError)")
        #expect(!joiner.events.contains { $0.event == "unmatched-media" || $0.event == "item-mismatch" || $0.event == "error" },
                "\(joiner.lines.filter { $0.contains("error") || $0.contains("mismatch") })")

        let ana = try records("ana", fixtures)
        let ben = try records("ben", fixtures)
        let first = try #require(ben.first, "the streaming joiner presented nothing: \(joiner.standardError)")
        // In step: the frames both showed, at instants the timeline gave them (a correctness
        // bound, not a speed claim: `tandem bench` measures).
        let spread = SyncLogAnalysis.spread([ana, ben], changes: [seekSent])
        #expect(spread.presented.count >= 60, "frames both showed: \(spread.presented.count)")
        let median = try #require(Percentiles(spread.presented)).p50
        #expect(median < 10, "median presentation spread \(median) ms")
        // After the seek the joiner shows frames from 12 s on.
        let afterSeek = try #require(ben.first { $0.presentedNanoseconds > seekSent && $0.pts >= 12 && $0.pts < 13 })
        print("streaming: joined to first frame \(Double(first.presentedNanoseconds - joinedAt) / 1e6) ms; "
              + "seek command to first frame at 12 s \(Double(afterSeek.presentedNanoseconds - seekSent) / 1e6) ms")
    }

    @Test func theHostLeavingHandsTheStreamToAnotherHolderThenNoneLeftSuspends() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        // 12 s of noise at about 24 Mbit/s (36 MB): more than the joiner's cache (24 MiB) holds, so
        // that it needs a holder to the end.
        let film = try fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25:duration=12,noise=alls=80:allf=t",
                                        "-c:v", "libx264", "-preset", "ultrafast", "-b:v", "24M", "-maxrate", "24M", "-bufsize", "8M",
                                        "-g", "25", "-pix_fmt", "yuv420p"], output: "film.mp4")
        let host = try start("ana", ["host", film, "--bind", "127.0.0.1", "--port", "0"], fixtures: fixtures)
        defer { host.kill() }
        let invite = try #require(host.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(host.standardError)")
        let holder = try start("cy", ["join", film], fixtures: fixtures, invite: invite)
        defer { holder.kill() }
        #expect(holder.waitUntil(timeout: 20) { $0.contains { $0.event == "joined" } }, "\(holder.standardError)")
        let joiner = try start("ben", ["join"], fixtures: fixtures, invite: invite)
        defer { joiner.kill() }
        #expect(joiner.waitUntil(timeout: 20) { $0.contains { $0.event == "streaming" } }, "\(joiner.lines.suffix(5)) \(joiner.standardError)")
        #expect(host.send("play") != nil)
        Thread.sleep(forTimeInterval: 1.5)
        let left = try #require(host.send("leave"))
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
        Thread.sleep(forTimeInterval: 2.5)
        #expect(!joiner.events.contains { $0.event == "stream-suspended" }, "\(joiner.lines.suffix(6))")
        // The last holder leaves: the joiner is suspended, and the group is not held for it.
        let lastLeft = try #require(holder.send("leave"))
        #expect(holder.waitForExit(timeout: 20) == 0, "\(holder.standardError)")
        #expect(joiner.waitUntil(timeout: 10) { $0.contains { $0.event == "stream-suspended" } }, "\(joiner.lines.suffix(6))")
        // Not held for it: no wait from its suspension on. (A wait before it, while the joiner
        // still streams, is a stall's recovery, which a loaded machine may cause.)
        let sinceSuspended = joiner.events.drop { $0.event != "stream-suspended" }
        #expect(!sinceSuspended.contains { $0.event == "waiting" }, "\(joiner.lines.filter { $0.contains("waiting") })")
        #expect(joiner.send("leave") != nil)
        joiner.closeInput()
        #expect(joiner.waitForExit(timeout: 20) == 0, "\(joiner.standardError)")
        // It presented on, from the other holder, well after the host left (its log is complete
        // once it has exited).
        let ben = try records("ben", fixtures)
        let late = ben.filter { $0.presentedNanoseconds > left + 2_000_000_000 && $0.presentedNanoseconds < lastLeft }
        #expect(late.count >= 5, "frames after the host left: \(late.count) of \(ben.count)")
    }

    @Test func mpvWithoutTheFileReadsTheStreamOverLoopbackHTTPAndFollowsASeek() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let host = try start("ana", ["host", Self.watchClip, "--bind", "127.0.0.1", "--port", "0"], fixtures: fixtures)
        defer { host.kill() }
        let invite = try #require(host.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(host.standardError)")
        let joiner = try start("ben", ["join", "--player", "mpv", "--mpv-args", "--vo=null --ao=null"], fixtures: fixtures, invite: invite)
        defer { joiner.kill() }
        // `joined` once, mpv's (with its IPC socket) once mpv has loaded it, with the instant the
        // stream began opening.
        #expect(joiner.waitUntil(timeout: 30) { events in events.contains { $0.event == "streaming" } && events.contains { $0.event == "joined" } },
                "\(joiner.lines.suffix(5)) \(joiner.standardError)")
        let joined = joiner.lines.filter { $0.contains(#""event":"joined""#) }
        #expect(joined.count == 1 && joined[0].contains("mpv_ipc") && joined[0].contains(#""streamed":true"#), "\(joined)")
        #expect(host.send("play") != nil)
        Thread.sleep(forTimeInterval: 1.5)
        let seekSent = try #require(host.send("seek 10"))
        Thread.sleep(forTimeInterval: 2)
        #expect(host.send("end") != nil)
        host.closeInput()
        joiner.closeInput()
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
        #expect(joiner.waitForExit(timeout: 20) == 3, "\(joiner.standardError)")
        // mpv's readings of its position: past the seek target after the seek.
        let readings = try PresentationRecord.read(path: fixtures.path("ben.jsonl")).filter { $0.reading == true }
        #expect(readings.contains { $0.presentedNanoseconds > seekSent && $0.pts > 10.5 }, "\(readings.suffix(3))")
    }

    @Test func aURLItemIsOpenedByEveryoneThemselvesAndByAJoinerOnlyWhenAllowed() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let server = try LoopbackHTTPServer(serving: SampleClip.h264.path, as: "clip.mp4")
        defer { server.stop() }
        let url = server.url("clip.mp4").absoluteString
        let host = try start("ana", ["host", url, "--bind", "127.0.0.1", "--port", "0"], fixtures: fixtures)
        defer { host.kill() }
        let invite = try #require(host.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(host.standardError)")
        #expect(host.waitUntil(timeout: 20) { $0.contains { $0.event == "joined" } })
        // Without --allow-urls and without a terminal to ask at: refused in one line.
        let refused = try start("cy", ["join"], fixtures: fixtures, invite: invite)
        defer { refused.kill() }
        #expect(refused.waitForExit(timeout: 20) == 1)
        #expect(refused.standardError.contains("--allow-urls"), "\(refused.standardError)")
        #expect(refused.standardError.split(separator: "\n").count == 1, "\(refused.standardError)")
        let joiner = try start("ben", ["join", "--allow-urls"], fixtures: fixtures, invite: invite)
        defer { joiner.kill() }
        #expect(joiner.waitUntil(timeout: 20) { $0.contains { $0.event == "joined" } }, "\(joiner.standardError)")
        #expect(host.send("play") != nil)
        Thread.sleep(forTimeInterval: 2)
        #expect(host.send("end") != nil)
        host.closeInput()
        joiner.closeInput()
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
        #expect(joiner.waitForExit(timeout: 20) == 3, "\(joiner.standardError)")
        let ben = try records("ben", fixtures)
        #expect(ben.count >= 20, "frames the joiner showed: \(ben.count)")
        #expect(ben.allSatisfy { $0.item == url })
        // Both players fetched it themselves.
        #expect(server.requests.count >= 2, "\(server.requests)")
    }
}
