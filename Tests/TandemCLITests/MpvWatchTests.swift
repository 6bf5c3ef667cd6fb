import Foundation
import Testing
import TandemMedia
import TandemTestKit

/// `tandem join --player mpv` as a person runs it: a real headless mpv in the group, watched over
/// its own IPC socket by the test, as another tool would, following the host's timeline.
@Suite(.serialized, .timeLimit(.minutes(2))) struct MpvWatchTests {
    @Test func mpvFollowsTheGroupWithinTheCorrectionTolerance() async throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let clip = SampleClip.directory + "/watch-together.mp4"
        let socket = fixtures.path("mpv.sock")
        let host = try WatchProcess(executable: TandemProcess.executablePath,
                                    arguments: ["host", clip, "--bind", "127.0.0.1", "--port", "0", "--session-epoch", "0", "--name", "ana", "--events", "json"],
                                    name: "ana", acceptsCommands: true)
        defer { host.kill() }
        let invite = try #require(host.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(host.standardError)")
        let joiner = try WatchProcess(executable: TandemProcess.executablePath,
                                      arguments: ["join", invite, clip, "--name", "ben", "--events", "json", "--player", "mpv",
                                                  "--mpv-ipc", socket, "--mpv-args", "--vo=null --ao=null"],
                                      name: "ben", acceptsCommands: false)
        defer { joiner.kill() }
        #expect(joiner.waitUntil(timeout: 30) { $0.contains { $0.event == "joined" } }, "\(joiner.standardError)")
        let mpv = try await MpvConnection.connect(path: socket, timeout: .seconds(20))
        defer { mpv.close() }

        #expect(host.send("play") != nil)
        #expect(host.waitUntil(timeout: 10) { $0.contains { $0.change == "play" } })
        // Compare mpv's own position (`audio-pts`, the clock it times its pictures by, good to a
        // fraction of a ms) with the shared timeline. The host's session clock is its raw
        // monotonic clock (`--session-epoch 0`), the one the replies are stamped on.
        try await Task.sleep(for: .seconds(3))
        // The timeline in force: the play's, or the later version that completed its pre-roll
        // gate (on by default), anchored before the play's provisional one.
        let play = try #require(host.events.last { $0.event == "timeline" && ($0.rate ?? 0) > 0 })
        var errors: [Double] = []
        for _ in 0..<10 {
            let reply = try await mpv.command([.string("get_property"), .string("audio-pts")])
            guard case .number(let position) = reply.value,
                  let effective = play.effectiveSessionNanoseconds, let start = play.mediaTime else { continue }
            let expected = start + Double(reply.midpoint - effective) / 1e9
            errors.append((position - expected) * 1000)
            try await Task.sleep(for: .milliseconds(150))
        }
        #expect(errors.count >= 8)
        // mpv starts on the timeline to a fraction of a ms and the policy corrects beyond 1.5 ms;
        // the joiner's session clock is good to tens of µs on loopback, a reading to half its
        // round trip: 5 ms.
        #expect(errors.allSatisfy { abs($0) < 5 }, "mpv's error against the timeline, ms: \(errors)")

        // A pause from the host reaches mpv.
        #expect(host.send("pause") != nil)
        var paused = false
        for _ in 0..<50 where !paused {
            if case .bool(true) = try await mpv.get("pause") { paused = true }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(paused)
        #expect(host.send("end") != nil)
        host.closeInput()
        #expect(joiner.waitForExit(timeout: 20) == 3)
    }

    @Test func stallIsTheBuiltInPlayersAndMpvSaysSo() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let host = try WatchProcess(executable: TandemProcess.executablePath,
                                    arguments: ["host", SampleClip.h264.path, "--bind", "127.0.0.1", "--port", "0", "--events", "json",
                                                "--player", "mpv", "--mpv-ipc", fixtures.path("mpv.sock"), "--mpv-args", "--vo=null --ao=null"],
                                    name: "ana", acceptsCommands: true)
        defer { host.kill() }
        #expect(host.waitUntil(timeout: 30) { $0.contains { $0.event == "joined" } }, "\(host.standardError)")
        #expect(host.send("stall 1 nowait") != nil)
        #expect(host.waitUntil(timeout: 10) { $0.contains { $0.event == "error" } })
        let error = host.events.first { $0.event == "error" }
        #expect(error?.message?.contains("stall is the built-in player's") == true, "\(String(describing: error))")
        #expect(!host.events.contains { $0.event == "stall" })
        // Nothing else is disturbed: the session still ends cleanly.
        #expect(host.send("end") != nil)
        host.closeInput()
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
    }

    @Test(arguments: ["scheduled", "on-receipt"])
    func anMpvHostWritesItsReadingsToThePresentationLog(follow: String) async throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let clip = SampleClip.directory + "/watch-together.mp4"
        let log = fixtures.path("readings.jsonl")
        let host = try WatchProcess(executable: TandemProcess.executablePath,
                                    arguments: ["host", clip, "--bind", "127.0.0.1", "--port", "0", "--name", "ana", "--events", "json",
                                                "--player", "mpv", "--mpv-args", "--vo=null --ao=null", "--presentation-log", log,
                                                "--follow", follow],
                                    name: "ana", acceptsCommands: true)
        defer { host.kill() }
        #expect(host.waitUntil(timeout: 30) { $0.contains { $0.event == "joined" } }, "\(host.standardError)")
        try await Task.sleep(for: .seconds(1))
        #expect(host.send("play") != nil)
        #expect(host.waitUntil(timeout: 10) { $0.contains { $0.change == "play" } })
        try await Task.sleep(for: .seconds(3))
        #expect(host.send("end") != nil)
        host.closeInput()
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")

        let records = try PresentationRecord.read(path: log)
        #expect(records.allSatisfy { $0.reading == true && $0.item == "watch-together.mp4" })
        #expect(records.contains { $0.still == true }, "no readings while paused")
        // While playing, from a second after the start (mpv has landed on the timeline).
        let playing = records.filter { $0.still != true }
        let first = try #require(playing.first, "no readings while playing: \(host.standardError)")
        let settled = playing.filter { $0.presentedNanoseconds >= first.presentedNanoseconds + 1_000_000_000 }
        let span = Double((settled.last?.presentedNanoseconds ?? 0) - (settled.first?.presentedNanoseconds ?? 0)) / 1e9
        #expect(span > 1.5 && Double(settled.count - 1) / span >= 8, "\(settled.count) readings in \(span) s")
        let steps = zip(settled, settled.dropFirst()).filter { $1.pts <= $0.pts }
            .map { "\($0.pts) then \($1.pts), \(($1.presentedNanoseconds - $0.presentedNanoseconds) / 1_000_000) ms later" }
        #expect(steps.isEmpty, "readings that did not advance: \(steps)")
        let lateness = settled.map { Double($0.presentedNanoseconds - $0.scheduledNanoseconds) / 1e6 }
        // Scheduled: on the timeline to a fraction of a ms, corrected beyond 1.5 ms; a logged
        // reading is one round trip, good to a few ms at worst. On receipt: started when the
        // play arrived, the relay's lead (30 ms or so) early, and never corrected.
        let bound: Double = follow == "scheduled" ? 10 : 80
        #expect(lateness.allSatisfy { abs($0) < bound }, "presented − scheduled, ms: \(lateness)")

        let line = try #require(host.lines.last { $0.contains("\"event\":\"statistics\"") })
        let statistics = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(statistics["follow"] as? String == follow)
        #expect((statistics["readings"] as? Int ?? 0) >= records.count)
        if follow == "on-receipt" {
            #expect(statistics["nudges"] as? Int == 0 && statistics["corrective_seeks"] as? Int == 0, "\(line)")
        }
    }
}
