import Foundation
import Testing
import TandemTestKit
import TandemHarness
import TandemParty

/// Roles between real `tandem` processes on loopback, with `--events json` and commands on
/// standard input: under `tandem host --control operators` a guest's `pause` is refused with a
/// line that says who may, and nobody pauses; the host's works; once the host makes the guest an
/// operator (`op ben`), the guest's changes and its `end` go through.
@Suite(.serialized, .timeLimit(.minutes(2))) struct RolesWatchProcessTests {
    /// The `roles` events `process` printed so far.
    static func roles(_ process: WatchProcess) -> [WatchPartyEvent.Roles] {
        process.events.compactMap { if case .roles(let roles) = $0.payload { roles } else { nil } }
    }

    @Test func aGuestsPauseIsRefusedUnderOperatorsControlAndAnOperatorsWorks() throws {
        let clip = SampleClip.h264BFrames.path
        func start(_ name: String, _ arguments: [String], environment: [String: String?] = [:]) throws -> WatchProcess {
            try WatchProcess(executable: TandemProcess.executablePath, arguments: arguments + ["--name", name, "--events", "json"],
                             name: name, acceptsCommands: true, environment: environment)
        }
        let host = try start("ana", ["host", clip, "--bind", "127.0.0.1", "--port", "0", "--control", "operators"])
        defer { host.kill() }
        let invite = try #require(host.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(host.standardError)")
        #expect(invite.contains("?o="), "the invite names its creator: \(invite)")
        let guest = try start("ben", ["join", clip], environment: ["TANDEM_INVITE": invite])
        defer { guest.kill() }
        #expect(guest.waitUntil(timeout: 20) { $0.contains { $0.event == "joined" } }, "\(guest.standardError)")
        #expect(host.waitUntil(timeout: 20) { $0.contains { $0.event == "participant-joined" } }, "\(host.lines.suffix(5))")

        #expect(host.send("play") != nil)
        #expect(guest.waitUntil(timeout: 15) { $0.contains { $0.change == "play" && $0.by == "ana" } }, "\(guest.lines.suffix(5))")
        // The guest's pause: refused at once, with who may, and sent to nobody.
        #expect(guest.send("pause") != nil)
        #expect(guest.waitUntil(timeout: 10) { events in
            events.contains { $0.event == "error" && $0.message?.contains("only operators may pause (ana is an operator)") == true }
        }, "\(guest.lines.suffix(5))")
        // Long enough for a pause that went out to come back ordered (a process test: real time).
        _ = host.waitUntil(timeout: 1) { _ in false }
        for process in [host, guest] {
            #expect(!process.events.contains { $0.change == "pause" }, "\(process.name) paused: \(process.lines.suffix(5))")
            #expect(!process.events.contains { $0.event == "rejected" }, "\(process.name): \(process.lines.suffix(5))")
        }
        // A guest's end is refused too: only operators end a hosted party.
        #expect(guest.send("end") != nil)
        #expect(guest.waitUntil(timeout: 10) { $0.contains { $0.message?.contains("only operators may end the party") == true } },
                "\(guest.lines.suffix(5))")

        // The operator's pause works for everyone.
        #expect(host.send("pause") != nil)
        for process in [host, guest] {
            #expect(process.waitUntil(timeout: 10) { $0.contains { $0.change == "pause" && $0.by == "ana" } },
                    "\(process.name): \(process.lines.suffix(5))")
        }
        // Made an operator, the guest plays, and may end the party.
        #expect(host.send("op ben") != nil)
        for process in [host, guest] {
            #expect(process.waitUntil(timeout: 10) { _ in Self.roles(process).contains { $0.change == "op ben" && $0.refused == nil } },
                    "\(process.name): \(process.lines.suffix(5))")
        }
        #expect(Self.roles(guest).last?.operators == ["ana", "ben"])
        #expect(Self.roles(guest).last?.control == "operators")
        #expect(guest.send("play") != nil)
        #expect(host.waitUntil(timeout: 10) { $0.contains { $0.change == "play" && $0.by == "ben" } }, "\(host.lines.suffix(5))")
        #expect(guest.send("end") != nil)
        #expect(guest.waitForExit(timeout: 20) == 0, "\(guest.standardError)")
        #expect(host.waitForExit(timeout: 20) == 3, "\(host.standardError)")
    }
}
