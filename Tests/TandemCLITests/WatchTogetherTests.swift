import Foundation
import Testing
import TandemBench
import TandemTestKit
import TandemMediaTypes
import TandemHarness

/// `tandem host` and `tandem join` end to end: real processes on loopback, the real relay
/// inside the host, each with its own injected clock, following one scripted session.
@Suite(.serialized) struct WatchTogetherProcessTests {
    /// The changes the script makes, in order, as the `change` field names them.
    static let script: [(command: String, change: String, hold: Double)] = [
        ("play", "play", 1.0), ("seek 0.5", "seek 0.500", 0.6), ("rate 1.5", "rate 1.5", 1.0), ("pause", "pause", 0.4),
    ]

    @Test func hostAndTwoJoinersFollowOneTimelineAndLeaveWhenTheHostEnds() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let clip = SampleClip.h264BFrames.path
        func start(_ name: String, _ arguments: [String], offset: Double, drift: Double, host: Bool,
                   environment: [String: String?] = [:]) throws -> WatchProcess {
            try WatchProcess(executable: TandemProcess.executablePath,
                             arguments: arguments + ["--name", name, "--events", "json", "--presentation-log", fixtures.path("\(name).jsonl"),
                                                     "--clock-offset", "\(offset)", "--clock-drift-ppm", "\(drift)"],
                             name: name, acceptsCommands: host, environment: environment)
        }
        let host = try start("ana", ["host", clip, "--bind", "127.0.0.1", "--port", "0", "--session-epoch", "0"], offset: 3, drift: 80, host: true)
        defer { host.kill() }
        let invite = try #require(host.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(host.standardError)")
        // The invite out of `ps`'s sight, both ways: in the environment, and in a file.
        let inviteFile = fixtures.path("invite")
        try Data((invite + "\n").utf8).write(to: URL(fileURLWithPath: inviteFile))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: inviteFile)
        let joiners = [
            try start("ben", ["join", clip], offset: -5, drift: -120, host: false, environment: ["TANDEM_INVITE": invite]),
            try start("cy", ["join", clip, "--invite-file", inviteFile], offset: 1.5, drift: 40, host: false),
        ]
        defer { joiners.forEach { $0.kill() } }
        let everyone = [host] + joiners
        for process in everyone {
            #expect(process.waitUntil(timeout: 20) { $0.contains { $0.event == "joined" } }, "\(process.name) did not join: \(process.standardError)")
        }
        // Let the joiners' clock estimates settle.
        Thread.sleep(forTimeInterval: 1)
        for step in WatchTogetherProcessTests.script {
            #expect(host.send(step.command) != nil)
            Thread.sleep(forTimeInterval: step.hold)
        }
        #expect(host.send("end") != nil)
        host.closeInput()
        // The host ended it: no error there; the others say who ended it, in one line, and exit 3.
        let hostStatus = host.waitForExit(timeout: 20)
        #expect(hostStatus == 0, "the host exited with \(hostStatus.map(String.init) ?? "nothing: killed"): \(host.standardError)")
        for process in joiners {
            let status = process.waitForExit(timeout: 20)
            #expect(status == 3, "\(process.name) exited with \(status.map(String.init) ?? "nothing: killed"): \(process.standardError)")
            #expect(process.standardError.contains("tandem: ana ended the session"))
        }

        // Every participant saw every change, with the same version and effective instant.
        let hostChanges = changes(host.events)
        #expect(hostChanges.map(\.change) == WatchTogetherProcessTests.script.map(\.change))
        #expect(Set(hostChanges.map(\.version)).count == hostChanges.count)
        for joiner in joiners {
            let seen = changes(joiner.events)
            #expect(seen.map(\.version) == hostChanges.map(\.version), "\(joiner.name)")
            #expect(seen.map(\.effective) == hostChanges.map(\.effective), "\(joiner.name)")
            #expect(seen.map(\.change) == hostChanges.map(\.change), "\(joiner.name)")
        }
        for process in everyone {
            let left = process.events.filter { $0.event == "left" }
            #expect(left.count == 1 && left.first?.reason == "ana ended the session", "\(process.name): \(left)")
            #expect(process.events.contains { $0.event == "statistics" && ($0.presented ?? 0) > 0 }, "\(process.name)")
            #expect(!process.events.contains { $0.event == "error" || $0.event == "item-mismatch" }, "\(process.name)")
        }

        // The logs agree loosely: a correctness bound, not a speed claim (`tandem bench sync` measures).
        let logs = try everyone.map { try PresentationRecord.read(path: fixtures.path("\($0.name).jsonl")) }
        let instants = hostChanges.map(\.effective).sorted()
        let spread = SyncLogAnalysis.spread(logs, changes: instants)
        #expect(spread.presented.count >= 40, "frames every participant showed: \(spread.presented.count)")
        let median = try #require(Percentiles(spread.presented)).p50
        #expect(median < 10, "median presentation spread \(median) ms")
    }

    @Test func joinFailsWithOneClearLine() throws {
        let clip = SampleClip.h264.path
        let fakeInvite = "tandem://127.0.0.1:1/400da221-e2ff-443f-a3c6-5de1c6b01483?k=pFUlHzmR_sLoyKVkjB2QQXCATgHY20JSQHkPEruawfY"

        let malformed = try TandemProcess.run(["join", "not-an-invite", clip], timeout: 20)
        #expect(malformed.status == 64)
        #expect(malformed.standardError.hasPrefix("tandem: bad invite:"))

        // Port 1 on loopback: nothing listens there.
        let unreachable = try TandemProcess.run(["join", fakeInvite, clip], timeout: 20)
        #expect(unreachable.status == 1)
        #expect(unreachable.standardError.hasPrefix("tandem: the relay at 127.0.0.1:1 does not answer"), "\(unreachable.standardError)")
        #expect(unreachable.standardError.split(separator: "\n").count == 1)

        let badMedia = try TandemProcess.run(["join", fakeInvite, "/nonexistent/film.mp4"], timeout: 20)
        #expect(badMedia.status == 1)
        #expect(badMedia.standardError.hasPrefix("tandem: cannot open /nonexistent/film.mp4"), "\(badMedia.standardError)")
        #expect(badMedia.standardError.split(separator: "\n").count == 1)
    }

    @Test func joinWithTheWrongSecretFailsAndLeavesTheSessionRunning() throws {
        let clip = SampleClip.h264.path
        let host = try WatchProcess(executable: TandemProcess.executablePath,
                                    arguments: ["host", clip, "--bind", "127.0.0.1", "--port", "0", "--events", "json"],
                                    name: "host", acceptsCommands: true)
        defer { host.kill() }
        let invite = try #require(host.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(host.standardError)")
        let secret = try #require(invite.range(of: "k="))
        // The same length, another key.
        let key = invite[secret.upperBound...]
        let otherKey = String(key.map { $0 == "A" ? "B" : "A" })
        let wrong = invite[..<secret.upperBound] + otherKey

        let run = try TandemProcess.run(["join", String(wrong), clip], timeout: 20)
        #expect(run.status == 1)
        #expect(run.standardError.hasPrefix("tandem: this invite's secret does not match the party's"), "\(run.standardError)")
        #expect(run.standardError.split(separator: "\n").count == 1)

        // The host is unharmed: it still ends its session cleanly.
        #expect(host.send("end") != nil)
        host.closeInput()
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
        #expect(host.events.contains { $0.event == "left" })
    }

    /// The play, pause, seek and rate changes a participant saw, in order.
    private func changes(_ events: [WatchEvent]) -> [(version: Int, effective: Int64, change: String)] {
        events.compactMap { event in
            guard event.event == "timeline", let version = event.version, let effective = event.effectiveSessionNanoseconds,
                  let change = event.change, ["play", "pause", "seek", "rate"].contains(where: { change.hasPrefix($0) }) else { return nil }
            return (version, effective, change)
        }
    }
}
