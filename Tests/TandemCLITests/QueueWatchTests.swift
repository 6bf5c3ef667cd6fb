import Foundation
import Testing
import TandemBench
import TandemTestKit
import TandemMediaTypes
import TandemHarness

/// The shared queue from the command line: `tandem host A B C` and `tandem join INVITE A B C` as
/// real processes on loopback. The group moves to the next item at the end of one, with no
/// command; `next` moves both; each player presents the items it was given.
@Suite(.serialized) struct QueueWatchProcessTests {
    @Test func theGroupMovesOnAtTheEndOfAnItemAndOnNext() throws {
        let fixtures = try MediaFixtures()
        var clips: [String] = []
        for name in ["one", "two", "three"] {
            let path = fixtures.path("\(name).mp4")
            try BenchmarkClip(seconds: 2, width: 160, height: 90, frameRate: 30).make(at: path)
            clips.append(path)
        }
        func start(_ name: String, _ arguments: [String]) throws -> WatchProcess {
            try WatchProcess(executable: TandemProcess.executablePath,
                             arguments: arguments + ["--name", name, "--events", "json", "--presentation-log", fixtures.path("\(name).jsonl")],
                             name: name, acceptsCommands: true)
        }
        let host = try start("ana", ["host"] + clips + ["--bind", "127.0.0.1", "--port", "0"])
        defer { host.kill() }
        let invite = try #require(host.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(host.standardError)")
        let joiner = try start("ben", ["join", invite] + clips)
        defer { joiner.kill() }
        for process in [host, joiner] {
            #expect(process.waitUntil(timeout: 20) { $0.contains { $0.event == "joined" } }, "\(process.name): \(process.standardError)")
        }
        #expect(host.waitUntil(timeout: 20) { $0.contains { $0.event == "participant-joined" } })
        Thread.sleep(forTimeInterval: 1)
        #expect(host.send("play") != nil)
        // The first item (2 s) ends: both move to the second, at its start, with no command.
        for process in [host, joiner] {
            #expect(process.waitUntil(timeout: 20) { $0.contains { $0.event == "item" && $0.identifier == "two.mp4" && $0.index == 1 } },
                    "\(process.name): \(process.events.filter { $0.event == "item" })")
        }
        // `next` moves both to the third.
        #expect(joiner.send("next") != nil)
        for process in [host, joiner] {
            #expect(process.waitUntil(timeout: 20) { $0.contains { $0.event == "item" && $0.identifier == "three.mp4" && $0.index == 2 } },
                    "\(process.name): \(process.events.filter { $0.event == "item" })")
        }
        Thread.sleep(forTimeInterval: 1)
        #expect(host.send("end") != nil)
        host.closeInput()
        joiner.closeInput()
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
        #expect(joiner.waitForExit(timeout: 20) == 3, "\(joiner.standardError)")
        // Each player presented frames of the second and the third item.
        for name in ["ana", "ben"] {
            let items = Set(try PresentationRecord.read(path: fixtures.path("\(name).jsonl")).filter { $0.still != true }.map(\.item))
            #expect(items.isSuperset(of: ["two.mp4", "three.mp4"]), "\(name): \(items)")
        }
    }
}
