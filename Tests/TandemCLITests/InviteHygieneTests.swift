import Foundation
import Testing
import TandemTestKit
import TandemHarness

/// The invite's secret out of sight (`ps`, error messages, children's environments), and peers'
/// strings shown without their escape sequences: the real `tandem` on loopback.
@Suite(.serialized, .timeLimit(.minutes(3))) struct InviteHygieneProcessTests {
    static let secret = "pFUlHzmR_sLoyKVkjB2QQXCATgHY20JSQHkPEruawfY"
    /// An invite to a relay on loopback port 1, where nothing listens.
    static let unreachable = "tandem://127.0.0.1:1/400da221-e2ff-443f-a3c6-5de1c6b01483?k=\(secret)"

    /// Runs `tandem` to its end with `environment` changed, and returns its status and standard error.
    func run(_ arguments: [String], environment: [String: String?] = [:], timeout: Double = 30) throws -> (status: Int32?, error: String) {
        // The test runner's own TANDEM_INVITE, if any, never leaks into these runs.
        let process = try WatchProcess(executable: TandemProcess.executablePath, arguments: arguments, name: "tandem",
                                       acceptsCommands: false, environment: ["TANDEM_INVITE": nil].merging(environment) { $1 })
        defer { process.kill() }
        let status = process.waitForExit(timeout: timeout)
        return (status, process.standardError)
    }

    @Test func theInviteComesFromAWordAFileOrTheEnvironment() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let clip = SampleClip.h264.path
        // Each source is read: each run reaches for the relay the invite names.
        let word = try run(["join", Self.unreachable, clip])
        #expect(word.status == 1 && word.error.hasPrefix("tandem: the relay at 127.0.0.1:1 does not answer"), "\(word)")
        let file = try fixtures.write("invite", Array("\n   \n\(Self.unreachable)\nignored\n".utf8))
        #expect(chmod(file, 0o600) == 0)
        let fromFile = try run(["join", clip, "--invite-file", file])
        #expect(fromFile.status == 1 && fromFile.error.hasPrefix("tandem: the relay at 127.0.0.1:1 does not answer"), "\(fromFile)")
        #expect(!fromFile.error.contains("readable by other users"))
        let fromEnvironment = try run(["join", clip], environment: ["TANDEM_INVITE": Self.unreachable])
        #expect(fromEnvironment.status == 1 && fromEnvironment.error.hasPrefix("tandem: the relay at 127.0.0.1:1 does not answer"), "\(fromEnvironment)")
        // A word wins over the environment; the file over the environment too.
        let both = try run(["join", clip, "--invite-file", file], environment: ["TANDEM_INVITE": "garbage"])
        #expect(both.status == 1 && both.error.hasPrefix("tandem: the relay at 127.0.0.1:1 does not answer"), "\(both)")
        // A file others may read works, with a warning.
        #expect(chmod(file, 0o644) == 0)
        let shared = try run(["join", clip, "--invite-file", file])
        #expect(shared.error.contains("is readable by other users"), "\(shared)")
    }

    @Test func aWordAndAFileTogetherOrNoInviteAtAllAreUsageErrors() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let clip = SampleClip.h264.path
        let file = try fixtures.write("invite", Array(Self.unreachable.utf8))
        let both = try run(["join", Self.unreachable, clip, "--invite-file", file])
        #expect(both.status == 64 && both.error.contains("not both"), "\(both)")
        let none = try run(["join", clip])
        #expect(none.status == 64 && none.error.contains("no invite") && none.error.contains("TANDEM_INVITE"), "\(none)")
        let empty = try fixtures.write("empty", Array("\n  \n".utf8))
        let blank = try run(["join", clip, "--invite-file", empty])
        #expect(blank.status == 1 && blank.error.contains("holds no invite"), "\(blank)")
        let missing = try run(["join", clip, "--invite-file", fixtures.path("nowhere")])
        #expect(missing.status == 1 && missing.error.contains("cannot read the invite file"), "\(missing)")
        // Two files are a queue now; more than a command line queues is a usage error.
        let tooMany = try run(["join"] + Array(repeating: clip, count: 101), environment: ["TANDEM_INVITE": Self.unreachable])
        #expect(tooMany.status == 64 && tooMany.error.contains("at most 100 files"), "\(tooMany)")
    }

    @Test func noMessageEchoesTheSecret() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let clip = SampleClip.h264.path
        let notTandem = "http://127.0.0.1:1/400da221-e2ff-443f-a3c6-5de1c6b01483?k=\(Self.secret)"
        let badSession = "tandem://127.0.0.1:7400/not-a-session?k=\(Self.secret)"
        let file = try fixtures.write("invite", Array(notTandem.utf8))
        let runs = [
            try run(["join", notTandem, clip]),
            try run(["join", clip, "--invite-file", file]),
            try run(["join", clip], environment: ["TANDEM_INVITE": notTandem]),
            try run(["join", clip], environment: ["TANDEM_INVITE": badSession]),
            try run(["host", clip, "--relay", badSession, "--bind", "127.0.0.1", "--port", "0"]),
            try run(["host", clip, "--relay", notTandem, "--bind", "127.0.0.1", "--port", "0"]),
        ]
        for (index, run) in runs.enumerated() {
            #expect(run.status == 64, "run \(index): \(run)")
            #expect(!run.error.contains(Self.secret) && !run.error.contains("pFUl"), "run \(index): \(run.error)")
        }
        // Where the text is echoed, the secret is replaced, and it says where the invite came from.
        #expect(runs[0].error.contains("not a tandem:// invite: http://127.0.0.1:1/") && runs[0].error.contains("k=…"), "\(runs[0])")
        #expect(runs[2].error.hasPrefix("tandem: bad invite in TANDEM_INVITE:"), "\(runs[2])")
        #expect(runs[4].error.contains("--relay wants HOST:PORT") && runs[4].error.contains("k=…"), "\(runs[4])")
    }

    @Test func theHostNeverReadsTheInviteInItsEnvironment() throws {
        let clip = SampleClip.h264.path
        let host = try WatchProcess(executable: TandemProcess.executablePath,
                                    arguments: ["host", clip, "--bind", "127.0.0.1", "--port", "0", "--events", "json"],
                                    name: "host", acceptsCommands: true, environment: ["TANDEM_INVITE": Self.unreachable])
        defer { host.kill() }
        let invite = try #require(host.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(host.standardError)")
        #expect(!invite.contains(Self.secret))
        #expect(!invite.hasPrefix("tandem://127.0.0.1:1/"))
        #expect(host.send("end") != nil)
        host.closeInput()
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
    }

    @Test func peersNamesReachTheTerminalWithoutTheirEscapes() throws {
        let clip = SampleClip.h264.path
        // A title change, a clear screen and a bell, hidden in a display name.
        let hostile = "mal\u{1B}]0;pwned\u{7}lory\u{1B}[2J\u{9B}31m\u{7}"
        let host = try WatchProcess(executable: TandemProcess.executablePath,
                                    arguments: ["host", clip, "--bind", "127.0.0.1", "--port", "0", "--name", "ana", "--events", "json"],
                                    name: "ana", acceptsCommands: true)
        defer { host.kill() }
        let invite = try #require(host.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(host.standardError)")
        // The reader prints sentences (not JSON): what a person at a terminal sees. Once it has
        // caught up, one line says who is here.
        let reader = try WatchProcess.join(invite: invite, file: clip, arguments: ["--name", "ben"], name: "ben")
        defer { reader.kill() }
        #expect(reader.waitUntil(timeout: 30) { _ in reader.lines.contains { $0.hasPrefix("ana is here; ") } }, "\(reader.lines) \(reader.standardError)")
        let mallory = try WatchProcess.join(invite: invite, file: clip, arguments: ["--name", hostile, "--events", "json"],
                                            name: "mallory", acceptsCommands: true)
        defer { mallory.kill() }
        #expect(mallory.waitUntil(timeout: 30) { $0.contains { $0.event == "joined" } }, "\(mallory.standardError)")
        #expect(host.waitUntil(timeout: 20) { $0.contains { $0.event == "participant-joined" && $0.name == hostile } })
        #expect(mallory.send("play") != nil)
        #expect(mallory.waitUntil(timeout: 20) { $0.contains { $0.event == "timeline" && $0.change == "play" } }, "\(mallory.standardError)")
        #expect(reader.waitUntil(timeout: 20) { _ in reader.lines.contains { $0.hasPrefix("mallory played from ") } }, "\(reader.lines)")
        #expect(host.send("end") != nil)
        host.closeInput()
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
        _ = reader.waitForExit(timeout: 20)
        _ = mallory.waitForExit(timeout: 20)

        // The sentences name "mallory", with nothing of the escapes left.
        let lines = reader.lines
        #expect(lines.contains("mallory joined"), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("mallory played from ") }, "\(lines)")
        // JSON lines keep the name exactly, escaped: no raw control character on any line.
        for process in [host, reader] {
            let controls = process.lines.filter { $0.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) } }
            #expect(controls.isEmpty, "\(process.name): \(controls)")
            #expect(!process.standardError.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{9B}" }, "\(process.name)")
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/mpv"), "needs mpv"))
    func mpvStartedByAJoinerNeverSeesTheInvite() throws {
        let clip = SampleClip.h264.path
        let host = try WatchProcess(executable: TandemProcess.executablePath,
                                    arguments: ["host", clip, "--bind", "127.0.0.1", "--port", "0", "--events", "json"],
                                    name: "host", acceptsCommands: true)
        defer { host.kill() }
        let invite = try #require(host.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(host.standardError)")
        let joiner = try WatchProcess.join(invite: invite, file: clip,
                                           arguments: ["--events", "json", "--player", "mpv", "--mpv-args", "--vo=null --ao=null"],
                                           name: "ben", acceptsCommands: true)
        defer { joiner.kill() }
        #expect(joiner.waitUntil(timeout: 30) { $0.contains { $0.event == "joined" } }, "\(joiner.standardError)")
        // The joiner's children, from /proc: mpv among them.
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(joiner.processIdentifier)/task")) ?? []
        let children = tasks.flatMap { task in
            ((try? String(contentsOfFile: "/proc/\(joiner.processIdentifier)/task/\(task)/children", encoding: .utf8)) ?? "")
                .split(separator: " ").compactMap { Int32($0) }
        }
        let environments = children.compactMap { FileManager.default.contents(atPath: "/proc/\($0)/environ") }
        #expect(!environments.isEmpty, "no child of the joiner found")
        for environment in environments {
            let variables = environment.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            #expect(!variables.contains { $0.hasPrefix("TANDEM_INVITE=") })
            #expect(!variables.contains { $0.contains(String(invite.suffix(20))) })
        }
        // The joiner leaves, and stops its mpv on the way out (killed, it would leave mpv behind).
        #expect(joiner.send("leave") != nil)
        joiner.closeInput()
        #expect(joiner.waitForExit(timeout: 40) == 0, "\(joiner.standardError)")
        #expect(host.send("end") != nil)
        host.closeInput()
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
    }
}
