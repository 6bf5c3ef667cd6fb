import Foundation
import Testing
import TandemBench
import TandemTestKit
import TandemMediaTypes
import TandemHarness

/// What the benchmarks drive from the command line: `stall SECONDS [nowait]` on a joiner, and
/// `--follow on-receipt`, the baseline. A host and one joiner as real processes on loopback,
/// each with its own injected clock. The session clock of `tandem host --session-epoch 0` is the raw
/// CLOCK_MONOTONIC, the clock of the presentation logs, so effective instants and log instants
/// compare directly.
@Suite(.serialized) struct StallAndFollowProcessTests {
    /// A host and a joiner watching `clip`, both taking commands, both logging their frames.
    struct Pair {
        let host: WatchProcess
        let joiner: WatchProcess
        var everyone: [WatchProcess] { [host, joiner] }

        init(clip: String, fixtures: MediaFixtures, extra: [String] = []) throws {
            func start(_ name: String, _ arguments: [String], offset: Double, drift: Double) throws -> WatchProcess {
                try WatchProcess(executable: TandemProcess.executablePath,
                                 arguments: arguments + extra + ["--name", name, "--events", "json",
                                                                 "--presentation-log", fixtures.path("\(name).jsonl"),
                                                                 "--clock-offset", "\(offset)", "--clock-drift-ppm", "\(drift)"],
                                 name: name, acceptsCommands: true)
            }
            host = try start("ana", ["host", clip, "--bind", "127.0.0.1", "--port", "0", "--session-epoch", "0"], offset: 3, drift: 80)
            let invite = try #require(host.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(host.standardError)")
            joiner = try start("ben", ["join", invite, clip], offset: -5, drift: -120)
            for process in everyone {
                #expect(process.waitUntil(timeout: 20) { $0.contains { $0.event == "joined" } },
                        "\(process.name) did not join: \(process.standardError)")
            }
            #expect(host.waitUntil(timeout: 20) { $0.contains { $0.event == "participant-joined" } })
            // Let the joiner's clock estimate settle.
            Thread.sleep(forTimeInterval: 1)
        }

        /// Ends the session from the host and waits for both to exit as they should.
        func end() {
            #expect(host.send("end") != nil)
            host.closeInput()
            joiner.closeInput()
            #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
            #expect(joiner.waitForExit(timeout: 20) == 3, "\(joiner.standardError)")
        }

        func kill() { everyone.forEach { $0.kill() } }
    }

    /// A clip long enough to play through a stall: 8 s at 30 frames/s, a key frame a second.
    static func clip(_ fixtures: MediaFixtures) throws -> String {
        let path = fixtures.path("clip.mp4")
        try BenchmarkClip(seconds: 8, width: 320, height: 180, frameRate: 30).make(at: path)
        return path
    }

    /// The frames a log presented (stills left out), in the order they were presented.
    static func frames(_ path: String) throws -> [PresentationRecord] {
        try PresentationRecord.read(path: path).filter { $0.still != true }.sorted { $0.presentedNanoseconds < $1.presentedNanoseconds }
    }

    /// The longest time between two frames presented one after the other (ns).
    static func longestGap(_ frames: [PresentationRecord]) -> Int64 {
        zip(frames, frames.dropFirst()).map { $1.presentedNanoseconds - $0.presentedNanoseconds }.max() ?? 0
    }

    @Test func aStallTheGroupWaitsForPausesEveryoneAndResumesTogether() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let pair = try Pair(clip: try Self.clip(fixtures), fixtures: fixtures)
        defer { pair.kill() }
        // Malformed stalls are refused, one error each, and change nothing.
        pair.joiner.send("stall soon")
        pair.joiner.send("stall 1 later")
        #expect(pair.joiner.waitUntil(timeout: 10) { $0.filter { $0.event == "error" }.count == 2 })
        pair.host.send("play")
        Thread.sleep(forTimeInterval: 1)
        pair.joiner.send("stall 1")
        for process in pair.everyone {
            #expect(process.waitUntil(timeout: 10) { $0.contains { $0.event == "resumed" } }, "\(process.name): no resumed event")
        }
        Thread.sleep(forTimeInterval: 0.5)
        pair.end()

        for process in pair.everyone {
            let kinds = process.events.map(\.event).filter { ["waiting", "resumed"].contains($0) }
            #expect(kinds == ["waiting", "resumed"], "\(process.name): \(kinds)")
            #expect(process.events.first { $0.event == "resumed" }?.by == "ben", "\(process.name)")
        }
        #expect(!pair.host.events.contains { $0.event == "error" })
        let errors = pair.joiner.events.filter { $0.event == "error" }.compactMap(\.message)
        #expect(errors.count == 2 && errors.allSatisfy { $0.contains("wants a number of seconds, then optionally nowait") }, "\(errors)")
        #expect(pair.joiner.events.filter { $0.event == "stall" }.count == 1)
        let stall = try #require(pair.joiner.events.first { $0.event == "stall" })
        #expect(stall.seconds == 1 && stall.waits == true)
        let ended = try #require(pair.joiner.events.first { $0.event == "stall-ended" })
        // The stall ended a second after it began, and the group resumed after that.
        #expect(abs(Double(ended.receivedNanoseconds - stall.receivedNanoseconds) / 1e9 - 1) < 0.3)
        let resumed = try #require(pair.joiner.events.first { $0.event == "resumed" })
        #expect(resumed.receivedNanoseconds >= ended.receivedNanoseconds)
    }

    @Test func aStallTheGroupDoesNotWaitForLeavesAGapInTheStalledPlayerAlone() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let pair = try Pair(clip: try Self.clip(fixtures), fixtures: fixtures)
        defer { pair.kill() }
        pair.host.send("play")
        Thread.sleep(forTimeInterval: 1.5)
        pair.joiner.send("stall 1 nowait")
        #expect(pair.joiner.waitUntil(timeout: 10) { $0.contains { $0.event == "stall-ended" } })
        Thread.sleep(forTimeInterval: 2)
        pair.end()

        for process in pair.everyone {
            #expect(!process.events.contains { $0.event == "waiting" }, "\(process.name) waited")
            #expect(!process.events.contains { $0.event == "error" }, "\(process.name): \(process.events.filter { $0.event == "error" })")
        }
        let stall = try #require(pair.joiner.events.first { $0.event == "stall" })
        #expect(stall.seconds == 1 && stall.waits == false)

        let host = try Self.frames(fixtures.path("ana.jsonl"))
        let joiner = try Self.frames(fixtures.path("ben.jsonl"))
        // The host played on without a break; the joiner froze for the second, then came back in
        // a pre-roll later (0.3 s), skipping what it missed.
        #expect(Self.longestGap(host) < 150_000_000, "the host's longest gap: \(Self.longestGap(host)) ns")
        let gap = Self.longestGap(joiner)
        #expect(gap > 900_000_000 && gap < 1_800_000_000, "the joiner's longest gap: \(gap) ns")
        let resumedAt = try #require(zip(joiner, joiner.dropFirst()).first { $1.presentedNanoseconds - $0.presentedNanoseconds == gap }?.1)

        // After the stall, the joiner is back on the shared timeline: the same frames, within
        // 2 ms of the host's. The first frame back is left out: it is shown from the instant the
        // joiner came back in, part way through its own interval.
        let hostByPts = Dictionary(host.map { ($0.pts, $0) }, uniquingKeysWith: { first, _ in first })
        let after = joiner.filter { $0.presentedNanoseconds > resumedAt.presentedNanoseconds }
        let differences = after.compactMap { frame in hostByPts[frame.pts].map { frame.scheduledNanoseconds - $0.scheduledNanoseconds } }
        #expect(differences.count >= 30, "frames both showed after the stall: \(differences.count)")
        #expect(differences.allSatisfy { abs($0) < 2_000_000 }, "scheduled differences: \(differences.map { abs($0) }.max() ?? 0) ns at most")
        let presented = after.compactMap { frame in hostByPts[frame.pts].map { Double(abs(frame.presentedNanoseconds - $0.presentedNanoseconds)) } }
        let median = try #require(Percentiles(presented)).p50
        #expect(median < 2_000_000, "median presented difference \(median) ns")
    }

    @Test(arguments: ["on-receipt", "scheduled"])
    func aSeekOnReceiptShowsItsFramesBeforeItsEffectiveInstant(follow: String) throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let pair = try Pair(clip: try Self.clip(fixtures), fixtures: fixtures, extra: ["--follow", follow])
        defer { pair.kill() }
        pair.host.send("play")
        Thread.sleep(forTimeInterval: 1)
        // A key frame: the decoder lands on it at once.
        pair.host.send("seek 4")
        Thread.sleep(forTimeInterval: 1)
        pair.end()

        let ordered = try #require(pair.host.events.first { $0.event == "timeline" && $0.change == "seek 4.000" })
        // A gated seek (`PrerollGate`) takes effect at the version that completes its gate.
        let seek = pair.host.events.first { $0.event == "timeline" && $0.change == "pre-rolled for v\(ordered.version ?? -1)" } ?? ordered
        let effective = try #require(seek.effectiveSessionNanoseconds)
        #expect(pair.joiner.events.contains { $0.event == "timeline" && $0.effectiveSessionNanoseconds == effective })
        for process in pair.everyone {
            #expect(!process.events.contains { $0.event == "error" }, "\(process.name)")
            let frames = try Self.frames(fixtures.path("\(process.name).jsonl"))
            let first = try #require(frames.first { $0.pts >= 4 }, "\(process.name) showed nothing after the seek")
            let anchor = first.scheduledNanoseconds - Int64(((first.pts - 4) * 1e9).rounded())
            if follow == "on-receipt" {
                // Taken up on receipt: shown before the instant the group set for it.
                #expect(anchor < effective, "\(process.name): scheduled \(anchor - effective) ns from the effective instant")
                #expect(first.presentedNanoseconds < effective,
                        "\(process.name): first frame presented \(first.presentedNanoseconds - effective) ns from the effective instant")
            } else {
                #expect(abs(anchor - effective) < 2_000_000, "\(process.name): scheduled \(anchor - effective) ns from the effective instant")
                #expect(first.presentedNanoseconds >= effective - 2_000_000)
            }
        }
    }
}
