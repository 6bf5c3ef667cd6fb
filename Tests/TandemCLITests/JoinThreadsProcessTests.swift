import Foundation
import Testing
import TandemHarness
import TandemTestKit

/// The threads a `tandem join` runs, read from `/proc/PID/task/*/comm` while it plays with the
/// built-in player (no picture, no sound): one participant's loop, on which the link, the
/// session, the playback coordinator and the session clock's prober all run, then the player's
/// decoding and presentation. The Swift pool's and dispatch's threads (`com.apple.root.…`,
/// shown truncated) are counted apart. A thread started without a name takes the name of the
/// thread that started it, so a prober with a thread of its own would show as a second
/// `tandem-link-0`.
@Suite(.timeLimit(.minutes(2))) struct JoinThreadsProcessTests {
    /// The names of `pid`'s threads now, one per thread.
    static func threadNames(of pid: Int32) -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    @Test func aJoinPlayingRunsOneLoopAndThePlayersThreads() throws {
        let clip = SampleClip.h264.path
        let host = try WatchProcess.host(media: [clip], arguments: ["--player", "builtin"])
        defer { host.kill() }
        let invite = try #require(host.invite(), "no invite: \(host.standardError)")
        let joiner = try WatchProcess.join(invite: invite, media: [clip], name: "ben", arguments: ["--player", "builtin"])
        defer { joiner.kill() }
        #expect(joiner.waitUntilJoined(), "\(joiner.standardError)")
        #expect(host.send("play") != nil)
        #expect(joiner.waitUntil(timeout: 20) { $0.contains { $0.event == "timeline" && ($0.rate ?? 0) > 0 } }, "\(joiner.standardError)")

        let names = Self.threadNames(of: joiner.processIdentifier)
        let pool = names.filter { $0.contains("qos") }
        let own = names.filter { !$0.contains("qos") }.sorted()
        print("tandem join threads: \(own.count) of Tandem's own \(own), \(pool.count) of the Swift pool's and dispatch's")
        // One loop (no second thread under its name), the player's two, the main thread.
        #expect(own.filter { $0.hasPrefix("tandem-link-") }.count == 1, "\(own)")
        #expect(own.filter { $0 == "tandem-present" }.count == 1, "\(own)")
        #expect(own.filter { $0 == "tandem-decode" }.count >= 1, "\(own)")
        #expect(own.filter { $0 == "tandem" }.count == 1, "\(own)")
        let expected: Set<String> = ["tandem", "tandem-link-0", "tandem-decode", "tandem-present"]
        #expect(Set(own).isSubset(of: expected), "\(own)")

        #expect(joiner.send("leave") != nil)
        joiner.closeInput()
        #expect(joiner.waitForExit(timeout: 20) == 0, "\(joiner.standardError)")
        #expect(host.send("end") != nil)
        host.closeInput()
        _ = host.waitForExit(timeout: 20)
    }
}
