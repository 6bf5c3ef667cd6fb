import Foundation
import Testing
import TandemHarness
import TandemTestKit

/// Help and errors as people expect them: the commands people use first, the benchmarks under
/// one entry, every option explained within 80 columns, a version, and errors of one line that
/// say what to do.
@Suite struct HelpProcessTests {
    /// Every command's words, as `tandem --help` and `tandem bench --help` name them.
    static let commands = ["host", "join", "play", "probe", "serve", "clock serve", "clock sync", "netsim",
                           "bench decode", "bench present", "bench medium", "bench clock", "bench relay", "bench cluster", "bench sync", "bench audio", "bench all"]

    @Test func overviewLeadsWithWatchingAndListsTheBenchmarksOnce() throws {
        let run = try TandemProcess.run(["--help"])
        #expect(run.status == 0)
        let text = run.standardOutput
        let host = try #require(text.range(of: "tandem host"))
        let serve = try #require(text.range(of: "tandem serve"))
        #expect(host.lowerBound < serve.lowerBound)
        #expect(text.contains("tandem bench SUITE"))
        #expect(!text.contains("bench decode") && !text.contains("bench sync"))
    }

    @Test("every help text fits 80 columns", arguments: commands)
    func helpFitsEightyColumns(command: String) throws {
        let run = try TandemProcess.run(["help"] + command.split(separator: " ").map(String.init))
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.hasPrefix("usage: tandem \(command)"))
        for line in run.standardOutput.split(separator: "\n") {
            #expect(line.count <= 80, "tandem help \(command): \(line)")
        }
        // The same text either way of asking.
        let asked = try TandemProcess.run(command.split(separator: " ").map(String.init) + ["--help"])
        #expect(asked.standardOutput == run.standardOutput)
    }

    /// Every `--option` a command's synopsis names has a line of its own under "options:",
    /// except the relay limits `tandem host` forwards, which its "relay limits" line sends to
    /// `tandem help serve`, where each has its own.
    @Test("every option in a synopsis is explained", arguments: commands)
    func everyOptionInTheSynopsisIsExplained(command: String) throws {
        func explained(_ words: [String]) throws -> (synopsis: Set<String>, options: String) {
            let text = try TandemProcess.run(["help"] + words).standardOutput
            let parts = text.components(separatedBy: "\noptions:\n")
            let synopsis = parts[0].components(separatedBy: "\n\n")[0]
            let flags = Set(synopsis.split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "-" })
                .map(String.init).filter { $0.hasPrefix("--") && $0.count > 2 })
            return (flags, parts.count > 1 ? parts[1] : "")
        }
        func isExplained(_ flag: String, in options: String) -> Bool {
            options.split(separator: "\n").contains { line in
                line.hasPrefix("  ") && (line.dropFirst(2).hasPrefix(flag + " ") || line.dropFirst(2).hasPrefix(flag + ",")
                    || line.dropFirst(2) == flag[...] || line.contains(", " + flag + " ") || line.hasSuffix(", " + flag))
            }
        }
        let (flags, options) = try explained(command.split(separator: " ").map(String.init))
        var unexplained = flags.filter { !isExplained($0, in: options) }
        if command == "host", options.contains("relay limits") {
            let serve = try explained(["serve"]).options
            unexplained = unexplained.filter { !isExplained($0, in: serve) }
        }
        #expect(unexplained.isEmpty, "tandem help \(command) does not explain \(unexplained.sorted())")
    }

    @Test func hostExplainsItsOptionsWithTheirDefaults() throws {
        let text = try TandemProcess.run(["help", "host"]).standardOutput
        #expect(text.contains("-n, --name NAME"))
        #expect(text.contains("--latency-offset MS"))
        #expect(text.contains("(default: 7462;"))
        #expect(text.contains("options:"))
        #expect(text.contains("--audio pulse|none"))
        #expect(text.contains("--volume N"))
    }

    @Test("a family alone lists its commands", arguments: [["bench"], ["bench", "--help"], ["help", "bench"], ["clock"]])
    func familyListsItsCommands(words: [String]) throws {
        let run = try TandemProcess.run(words)
        #expect(run.status == 0, "\(run.standardError)")
        let family = words.contains("clock") ? ["clock serve", "clock sync"] : ["bench decode", "bench relay", "bench sync", "bench all"]
        for command in family { #expect(run.standardOutput.contains("tandem \(command)"), "\(run.standardOutput)") }
    }

    @Test func versionNamesTheReleaseAndTheProtocol() throws {
        let run = try TandemProcess.run(["--version"])
        #expect(run.status == 0)
        #expect(run.standardOutput.hasPrefix("tandem "))
        #expect(run.standardOutput.contains("relay protocol"))
    }

    @Test func aUsageErrorIsOneLineAndAPointerToTheHelp() throws {
        let run = try TandemProcess.run(["play", "--colour", "red"])
        #expect(run.status == 64)
        let lines = run.standardError.split(separator: "\n")
        #expect(lines == ["tandem: unknown option --colour: tandem help play explains its options"])
    }

    @Test func shortNameIsTheNameNotAFile() throws {
        // `-n Ana` with no invite: the complaint is the missing invite, never a file called -n.
        let run = try TandemProcess.run(["join", "-n", "Ana", "--invite-file", "/nonexistent/invite"])
        #expect(run.status != 0)
        #expect(!run.standardError.contains("-n"), "\(run.standardError)")
        let unknown = try TandemProcess.run(["play", "-z"])
        #expect(unknown.standardError.hasPrefix("tandem: unknown option -z"))
    }

    @Test func aPortInUseSaysWhatToDo() throws {
        let holder = try ServeProcess()
        defer { holder.stop() }
        let run = try TandemProcess.run(["serve", "--bind", "127.0.0.1", "--port", String(holder.port)], timeout: 20)
        #expect(run.status == 1)
        #expect(run.standardError == "tandem: port \(holder.port) is in use on 127.0.0.1 (another relay, or a host's?): try --port 0 for a free one, or stop what holds it\n")
    }

    @Test func anUnknownCommandPointsToTheList() throws {
        let run = try TandemProcess.run(["frobnicate"])
        #expect(run.status == 64)
        #expect(run.standardError == "tandem: unknown command 'frobnicate': tandem --help lists them\n")
        let benchmark = try TandemProcess.run(["bench", "frobnicate"])
        #expect(benchmark.status == 64)
        #expect(benchmark.standardError == "tandem: unknown command 'bench frobnicate': tandem bench --help lists them\n")
        #expect(benchmark.standardOutput.isEmpty)
    }

    /// An invite whose words are well formed, for a relay at `address`.
    static func invite(_ address: String) -> String {
        "tandem://\(address)/abbb59d8-2680-46e4-842f-58c0b7f45da0?k=eOnsLuc6gTWQAOY51RDFUw0UadKenv0l5fafo9BggRU"
    }

    @Test func anInviteWhoseRelayIsGoneSaysSoAndWhatToDo() throws {
        // A port nothing listens on: a relay that was stopped.
        let gone = try ServeProcess()
        let port = gone.port
        gone.stop()
        let run = try TandemProcess.run(["join", Self.invite("127.0.0.1:\(port)"), "--video", "none"], timeout: 30)
        #expect(run.status == 1)
        #expect(run.standardError == "tandem: the relay at 127.0.0.1:\(port) does not answer: is the party still on? Ask the host for a new invite\n")
    }

    @Test func anInviteWhosePartyTheRelayDoesNotKnowSaysSo() throws {
        let relay = try ServeProcess()
        defer { relay.stop() }
        let run = try TandemProcess.run(["join", Self.invite("127.0.0.1:\(relay.port)"), "--video", "none"], timeout: 30)
        #expect(run.status == 1)
        #expect(run.standardError.hasPrefix("tandem: this party is not on its relay (127.0.0.1:\(relay.port)) any more"), "\(run.standardError)")
        #expect(run.standardError.split(separator: "\n").count == 1)
    }

    @Test func anInviteToAPartyThatEndedSaysSo() throws {
        let relay = try ServeProcess()
        defer { relay.stop() }
        let host = try WatchProcess.host(media: [SampleClip.h264.path], arguments: ["--relay", "127.0.0.1:\(relay.port)"])
        defer { host.kill() }
        let invite = try #require(host.invite(), "\(host.standardError)")
        #expect(host.waitUntilJoined(), "\(host.standardError)")
        #expect(host.send("end") != nil)
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
        let run = try TandemProcess.run(["join", invite, SampleClip.h264.path, "--video", "none", "--audio", "none"], timeout: 30)
        #expect(run.status == 1)
        #expect(run.standardError == "tandem: this party has ended\n", "\(run.standardError)")
    }

    @Test func corruptMediaIsOneLineOfOursWithoutFFmpegsOwn() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("noise-\(UUID().uuidString).mp4").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ $0 >> 3) }).write(to: URL(fileURLWithPath: path))
        for command in [["probe", path], ["play", path, "--audio", "none", "--video", "none"]] {
            let run = try TandemProcess.run(command, timeout: 20)
            #expect(run.status == 1)
            #expect(run.standardError == "tandem: \(path) is not a media file that FFmpeg can read: Invalid data found when processing input\n",
                    "\(command[0]): \(run.standardError)")
        }
    }
}
