import Foundation
import Testing
import TandemBench
import TandemParty
import TandemTestKit
import TandemHarness

/// `tandem host --max-hold SECONDS`: the host's cap on every suspension's hold, the group's from
/// its start. A host and a joiner as real processes on loopback, their clocks injected apart; the
/// joiner stalls longer than the cap (`stall SECONDS`), and both stop waiting for it at one
/// session instant, saying whose it was.
@Suite(.serialized) struct MaxHoldProcessTests {
    @Test(arguments: [
        (["--max-hold", "soon"], "--max-hold is a number of seconds from 0 to 3600, not 'soon'"),
        (["--max-hold", "-1"], "--max-hold is a number of seconds from 0 to 3600, not '-1'"),
        (["--max-hold", "3601"], "--max-hold is a number of seconds from 0 to 3600, not '3601'"),
    ])
    func aBadCapIsRefusedInOneLine(options: [String], message: String) throws {
        let run = try TandemProcess.run(["host", SampleClip.h264.path, "--bind", "127.0.0.1", "--port", "0"] + options, timeout: 20)
        #expect(run.status == 64)
        #expect(run.standardError.split(separator: "\n").first?.contains(message) == true, "\(run.standardError)")
    }

    @Test func theHelpNamesTheOptionAndTheDefaults() throws {
        let run = try TandemProcess.run(["help", "host"], timeout: 20)
        #expect(run.standardOutput.contains("--max-hold SECONDS"), "\(run.standardOutput)")
        #expect(run.standardOutput.contains("15 s for buffering"), "\(run.standardOutput)")
    }

    @Test func aStallLongerThanTheCapIsLetGoByBothAtOneInstantAndTheGroupPlaysOn() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let clip = fixtures.path("clip.mp4")
        try BenchmarkClip(seconds: 8, width: 320, height: 180, frameRate: 30).make(at: clip)
        func start(_ name: String, _ arguments: [String], offset: Double) throws -> WatchProcess {
            try WatchProcess(executable: TandemProcess.executablePath,
                             arguments: arguments + ["--name", name, "--events", "json", "--clock-offset", "\(offset)"],
                             name: name, acceptsCommands: true)
        }
        let host = try start("ana", ["host", clip, "--bind", "127.0.0.1", "--port", "0", "--max-hold", "1"], offset: 3)
        defer { host.kill() }
        let invite = try #require(host.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(host.standardError)")
        let joiner = try start("ben", ["join", invite, clip], offset: -5)
        defer { joiner.kill() }
        for process in [host, joiner] {
            #expect(process.waitUntil(timeout: 20) { $0.contains { $0.event == "joined" } }, "\(process.name) did not join: \(process.standardError)")
        }
        #expect(host.waitUntil(timeout: 20) { $0.contains { $0.event == "participant-joined" } })
        Thread.sleep(forTimeInterval: 1)
        host.send("play")
        Thread.sleep(forTimeInterval: 1)
        joiner.send("stall 3")

        // The joiner has the cap from the group's history (the host's record): it decides the release itself.
        func expiry(_ events: [WatchEvent]) -> (WatchPartyEvent.Timeline, WatchPartyEvent.HoldExpired, Int64)? {
            events.lazy.compactMap { event in
                if case .holdExpired(let timeline, let fields) = event.payload { (timeline, fields, event.receivedNanoseconds) } else { nil }
            }.first
        }
        for process in [host, joiner] {
            #expect(process.waitUntil(timeout: 10) { expiry($0) != nil }, "\(process.name): no hold-expired: \(process.events.map(\.event))")
        }
        #expect(joiner.waitUntil(timeout: 10) { $0.contains { $0.event == "stall-ended" } })
        Thread.sleep(forTimeInterval: 0.5)
        #expect(host.send("end") != nil)
        host.closeInput()
        joiner.closeInput()
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
        #expect(joiner.waitForExit(timeout: 20) == 3, "\(joiner.standardError)")

        let hostExpiry = try #require(expiry(host.events))
        let joinerExpiry = try #require(expiry(joiner.events))
        for (timeline, fields, _) in [hostExpiry, joinerExpiry] {
            #expect(fields.participant == "ben" && fields.reason == "stallRecovery" && fields.seconds == 1 && !fields.stillWaiting, "\(fields)")
            #expect(timeline.rate == 1)
        }
        // One instant and one position on both, whatever their clocks.
        #expect(hostExpiry.0 == joinerExpiry.0, "\(hostExpiry.0) \(joinerExpiry.0)")
        // A second after the group began waiting for Ben, not when his three-second stall ended.
        let waiting = try #require(host.events.first { $0.event == "waiting" })
        let waited = Double(hostExpiry.0.effectiveSessionNanoseconds - waiting.payload.timeline!.effectiveSessionNanoseconds) / 1e9
        #expect(abs(waited - 1) < 0.01, "the hold lasted \(waited) s")
        let stallEnded = try #require(joiner.events.first { $0.event == "stall-ended" })
        #expect(joinerExpiry.2 < stallEnded.receivedNanoseconds)
        // Ben's end resumed nothing: nobody waited for him any more.
        for process in [host, joiner] {
            #expect(!process.events.contains { $0.event == "resumed" }, "\(process.name): \(process.events.map(\.event))")
        }
    }
}
