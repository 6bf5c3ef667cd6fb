#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TandemNet
import TandemTestKit
import TandemHarness
import TandemParty

/// Issue 15, items 1 and 2, with real processes on loopback: the relay `tandem host` starts is a
/// process of its own that outlives the host (even a `SIGKILL`), is reused by a later host on its
/// port, and exits once its last session is over; `SIGINT`, `SIGTERM` and `SIGHUP` leave
/// properly; a killed `tandem` takes its mpv with it. Each test points `XDG_RUNTIME_DIR` at a
/// directory of its own, reads the relay's pid from the record there, and asserts that no relay
/// process is left behind.
@Suite(.serialized, .timeLimit(.minutes(3))) struct PartyProcessTests {
    /// A test's runtime directory (0700) and the processes it starts.
    private final class Party {
        let fixtures: MediaFixtures
        let runtime: String
        var processes: [WatchProcess] = []

        init() throws {
            fixtures = try MediaFixtures()
            runtime = fixtures.path("run")
            try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }

        func start(_ name: String, _ arguments: [String]) throws -> WatchProcess {
            let process = try WatchProcess(executable: TandemProcess.executablePath,
                                           arguments: arguments + ["--name", name, "--events", "json"],
                                           name: name, acceptsCommands: true, environment: ["XDG_RUNTIME_DIR": runtime])
            processes.append(process)
            return process
        }

        /// The relays' pids, from their records.
        func relayPIDs() -> [Int32] {
            let directory = runtime + "/tandem"
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            return names.filter { $0.hasSuffix(".json") }.compactMap { name in
                guard let data = FileManager.default.contents(atPath: directory + "/" + name),
                      let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
                return (object["pid"] as? NSNumber)?.int32Value
            }
        }

        func remove() {
            processes.forEach { $0.kill() }
            fixtures.remove()
        }
    }

    /// Whether `pid` runs (a zombie, exited but not yet reaped by init, does not).
    static func isRunning(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state != "Z" && state != "X"
    }

    /// Waits at most `timeout` s for `pid` to stop running; kills it if it does not, so that a
    /// failing test leaves nothing behind either.
    static func expectGone(_ pid: Int32, within timeout: Double, _ what: String) {
        let deadline = Date().addingTimeInterval(timeout)
        while isRunning(pid) && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        let running = isRunning(pid)
        #expect(!running, "\(what) (pid \(pid)) still runs after \(timeout) s")
        if running { kill(pid, SIGKILL) }
    }

    private static func joined(_ process: WatchProcess) -> Bool {
        process.waitUntil(timeout: 30) { $0.contains { $0.event == "joined" } }
    }

    @Test func theSessionOutlivesAKilledHostAndItsRelayExitsAfterTheEnd() throws {
        let party = try Party()
        defer { party.remove() }
        let clip = SampleClip.h264BFrames.path
        let host = try party.start("ana", ["host", clip, "--bind", "127.0.0.1", "--port", "0", "--session-epoch", "0",
                                           "--relay-linger", "1"])
        let invite = try #require(host.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(host.standardError)")
        let relays = party.relayPIDs()
        try #require(relays.count == 1, "one relay record expected, found \(relays)")
        let relay = relays[0]
        #expect(relay != host.processIdentifier && Self.isRunning(relay))
        // Its own session and process group: a kill of the host's group would not reach it.
        let ben = try party.start("ben", ["join", invite, clip])
        let cy = try party.start("cy", ["join", invite, clip])
        #expect(Self.joined(ben) && Self.joined(cy), "\(ben.standardError) \(cy.standardError)")
        #expect(host.send("play") != nil)
        #expect(ben.waitUntil(timeout: 10) { $0.contains { $0.change == "play" } })

        host.kill()
        // The relay lives on; the others see the host go (its connection closed by the kernel:
        // the short grace period) and keep watching and controlling.
        #expect(Self.isRunning(relay), "the relay died with its host")
        for process in [ben, cy] {
            #expect(process.waitUntil(timeout: 10) { $0.contains { $0.event == "participant-left" && $0.name == "ana" } },
                    "\(process.name) did not see the host leave: \(process.lines.suffix(5))")
        }
        #expect(ben.send("pause") != nil)
        #expect(cy.waitUntil(timeout: 10) { $0.contains { $0.change == "pause" && $0.by == "ben" } }, "\(cy.lines.suffix(5))")
        // The host was the one operator: the longest-present of those left takes the role, the
        // same for both, and it may end the party for everyone.
        var heirs: [String] = []
        for process in [ben, cy] {
            #expect(process.waitUntil(timeout: 10) { events in
                events.contains { if case .roles(let roles) = $0.payload { roles.change == "claim" } else { false } }
            }, "\(process.name) saw no handover: \(process.lines.suffix(5))")
            heirs += process.events.compactMap { if case .roles(let roles) = $0.payload, roles.change == "claim" { roles.by } else { nil } }
        }
        #expect(heirs.count == 2 && Set(heirs).count == 1, "\(heirs)")
        let (heir, other) = heirs.first == "cy" ? (cy, ben) : (ben, cy)
        #expect(heir.send("end") != nil)
        #expect(heir.waitForExit(timeout: 20) == 0, "\(heir.standardError)")
        #expect(other.waitForExit(timeout: 20) == 3, "\(other.standardError)")
        #expect(other.standardError.contains("\(heir.name) ended the session"), "\(other.standardError)")
        // No session left: the relay exits after its linger (1 s, well within the 10 s of the
        // default), and its record goes with it.
        Self.expectGone(relay, within: 8, "the relay")
        #expect(party.relayPIDs().isEmpty)
    }

    @Test func signalsLeaveProperlyAndALaterHostReusesTheRelay() throws {
        let party = try Party()
        defer { party.remove() }
        let clip = SampleClip.h264BFrames.path
        let first = try party.start("ana", ["host", clip, "--bind", "127.0.0.1", "--port", "0", "--session-epoch", "0",
                                            "--relay-linger", "5"])
        let invite = try #require(first.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(first.standardError)")
        let port = try #require(URLComponents(string: invite)?.port)
        let relay = try #require(party.relayPIDs().first)
        let ben = try party.start("ben", ["join", invite, clip])
        let cy = try party.start("cy", ["join", invite, clip])
        #expect(Self.joined(ben) && Self.joined(cy))

        // SIGTERM and SIGHUP: each leaves as `leave` does (exit 0, its `left` and statistics
        // reported), and the others hear it left.
        for (process, signal) in [(ben, SIGTERM), (cy, SIGHUP)] {
            kill(process.processIdentifier, signal)
            #expect(process.waitForExit(timeout: 20) == 0, "\(process.name): \(process.standardError)")
            #expect(process.events.contains { $0.event == "left" } && process.events.contains { $0.event == "statistics" },
                    "\(process.name): \(process.lines.suffix(3))")
            #expect(first.waitUntil(timeout: 10) { $0.contains { $0.event == "participant-left" && $0.name == process.name } })
        }
        // SIGINT on the host: it leaves; the relay stays for its linger.
        kill(first.processIdentifier, SIGINT)
        #expect(first.waitForExit(timeout: 20) == 0, "\(first.standardError)")
        #expect(Self.isRunning(relay))

        // A later host on that port uses the same relay.
        let second = try party.start("dee", ["host", clip, "--bind", "127.0.0.1", "--port", String(port), "--session-epoch", "0"])
        let again = try #require(second.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(second.standardError)")
        #expect(URLComponents(string: again)?.port == port)
        #expect(party.relayPIDs() == [relay])
        #expect(second.send("end") != nil)
        #expect(second.waitForExit(timeout: 20) == 0, "\(second.standardError)")
        // Read in full once it has exited.
        #expect(second.standardError.contains("using the relay already on port \(port) (pid \(relay))"), "\(second.standardError)")
        Self.expectGone(relay, within: 20, "the relay")
    }

    @Test func aKilledTandemTakesItsMpvWithIt() throws {
        let party = try Party()
        defer { party.remove() }
        let clip = SampleClip.directory + "/watch-together.mp4"
        let socket = party.fixtures.path("mpv.sock")
        let host = try party.start("ana", ["host", clip, "--bind", "127.0.0.1", "--port", "0", "--session-epoch", "0",
                                           "--relay-linger", "1", "--player", "mpv", "--mpv-ipc", socket, "--mpv-args", "--vo=null --ao=null"])
        #expect(Self.joined(host), "\(host.standardError)")
        let relay = try #require(party.relayPIDs().first)
        let mpv = try #require(Self.process(commandLineContaining: "--input-ipc-server=\(socket)"), "no mpv found")
        host.kill()
        Self.expectGone(mpv, within: 10, "mpv")
        Self.expectGone(relay, within: 25, "the relay")
    }

    /// Item 8: binding every address, the invite names the default route's interface address
    /// (what `AdvertisedAddress` finds on this machine, loopback without one), with a warning when
    /// it is private. Only the host runs: nothing connects to that address.
    @Test func theInviteNamesTheDefaultRoutesAddress() throws {
        let party = try Party()
        defer { party.remove() }
        let host = try party.start("ana", ["host", SampleClip.h264BFrames.path, "--port", "0", "--session-epoch", "0",
                                           "--relay-linger", "1"])
        let invite = try #require(host.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(host.standardError)")
        let relay = try #require(party.relayPIDs().first)
        let expected = AdvertisedAddress.current(bind: "0.0.0.0")
        #expect(URLComponents(string: invite)?.host == expected.address)
        #expect(host.send("end") != nil)
        #expect(host.waitForExit(timeout: 20) == 0)
        let warned = host.standardError.contains("a private address")
        #expect(warned == (expected.fromRoute && AdvertisedAddress.isPrivate(expected.address)), "\(host.standardError)")
        Self.expectGone(relay, within: 20, "the relay")
    }

    /// The first process whose command line has `word` (and `other`, if given) as words.
    static func process(commandLineContaining word: String, and other: String? = nil) -> Int32? {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = Int32(entry), let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
            let words = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            if words.contains(word), other.map(words.contains) ?? true { return pid }
        }
        return nil
    }
}
