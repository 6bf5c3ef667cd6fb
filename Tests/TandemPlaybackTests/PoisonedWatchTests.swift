import Foundation
import Testing
import Tandem
import TandemNet
import TandemPlayback
import TandemTestKit
import TandemHarness

/// `tandem host` and `tandem join` as real processes on loopback, and an invitee in this
/// process that bypasses validation: it orders poisoned proposals with the session's own
/// ordered channel. Nobody exits; everyone reports the skips; a late `tandem join`, whose
/// history holds them, joins and plays normally; and `rate 1e15` or an enormous seek typed into
/// a joiner's script is refused or clamped there.
@Suite(.serialized) struct PoisonedWatchProcessTests {
    static let clip = SampleClip.h264.path

    static func start(_ name: String, _ arguments: [String]) throws -> WatchProcess {
        try WatchProcess(executable: TandemProcess.executablePath, arguments: arguments + ["--name", name, "--events", "json"],
                         name: name, acceptsCommands: true)
    }

    /// Joins the session of `invite` from this process, as a plain library user would.
    static func invitee(_ invite: String) async throws -> GroupSession<WatchTogether> {
        let invitation = try Invitation(parsing: invite)
        let center = ActivityCenter()
        center.displayName = "eve"
        center.configure(relay: NetworkRelayConnector(host: invitation.host, port: invitation.port), host: invitation.host,
                         port: invitation.port)
        var sessions = center.sessions(for: WatchTogether.self).makeAsyncIterator()
        try await center.accept(invitation)
        let session = try #require(await sessions.next())
        session.join()
        #expect(await awaitValue(session.$state.values, within: 20) { if case .joined = $0 { true } else { false } })
        return session
    }

    static func stillRunning(_ process: WatchProcess) -> Bool { process.waitForExit(timeout: 0) == nil }

    @Test func aPoisonedHistoryCrashesNobodyAndALateJoinerJoinsNormally() async throws {
        let host = try Self.start("ana", ["host", Self.clip, "--bind", "127.0.0.1", "--port", "0"])
        defer { host.kill() }
        let invite = try #require(host.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(host.standardError)")
        let ben = try Self.start("ben", ["join", invite, Self.clip])
        defer { ben.kill() }
        for process in [host, ben] {
            #expect(process.waitUntil(timeout: 20) { $0.contains { $0.event == "joined" } }, "\(process.name): \(process.standardError)")
        }
        #expect(host.send("play") != nil)
        for process in [host, ben] {
            #expect(process.waitUntil(timeout: 20) { $0.contains { $0.event == "timeline" && $0.change == "play" } }, "\(process.name)")
        }

        // Eve orders what no coordinator would propose.
        let eve = try await Self.invitee(invite)
        defer { eve.leave() }
        let encoder = JSONEncoder()
        let poisons: [[UInt8]] = [
            Array(try encoder.encode(PlaybackProposal.setRate(1e15))),
            Array(try encoder.encode(PlaybackProposal.seek(to: .max))),
            Array(try encoder.encode(PlaybackProposal.pause(at: .min))),
            [0xFF, 0xFE],
        ]
        for poison in poisons { try eve.sendOrdered(poison) }
        for process in [host, ben] {
            #expect(process.waitUntil(timeout: 20) { $0.filter { $0.event == "rejected" }.count == poisons.count },
                    "\(process.name): \(process.events.filter { $0.event == "rejected" }) \(process.standardError)")
            #expect(process.events.filter { $0.event == "rejected" }.allSatisfy { $0.by == "eve" && $0.message?.isEmpty == false })
        }

        // Typed into a joiner's script: a rate out of range is refused there, with one error
        // each; an enormous seek is clamped to the item's end and proposed as such.
        #expect(ben.send("rate 1e15") != nil)
        #expect(ben.send("rate nan") != nil)
        #expect(ben.send("rate -2") != nil)
        #expect(ben.waitUntil(timeout: 20) { $0.filter { $0.event == "error" }.count == 3 }, "\(ben.events.filter { $0.event == "error" })")
        #expect(ben.send("seek 1e300") != nil)
        for process in [host, ben] {
            #expect(process.waitUntil(timeout: 20) { $0.contains { $0.event == "timeline" && $0.change?.hasPrefix("seek") == true } },
                    "\(process.name)")
            let seek = process.events.first { $0.event == "timeline" && $0.change?.hasPrefix("seek") == true }
            #expect(seek.flatMap(\.mediaTime).map { (3.9...4.2).contains($0) } == true, "\(process.name): \(String(describing: seek))")
            // Only Eve's four were skipped: the clamped seek was valid.
            #expect(process.events.filter { $0.event == "rejected" }.count == poisons.count, "\(process.name)")
        }
        let errors = ben.events.filter { $0.event == "error" }.compactMap(\.message)
        #expect(errors.count == 3 && errors[0].contains("1e15") && errors[0].contains("0.25"), "\(errors)")

        // A late joiner receives the poisoned history and joins normally, then plays with the
        // others (from 0.5 s: the clip lasts 4 s, and the group played on past its end).
        let cy = try Self.start("cy", ["join", invite, Self.clip])
        defer { cy.kill() }
        #expect(cy.waitUntil(timeout: 20) { $0.contains { $0.event == "joined" } }, "cy: \(cy.standardError)")
        #expect(cy.waitUntil(timeout: 20) { $0.filter { $0.event == "rejected" }.count == poisons.count }, "cy: \(cy.events)")
        #expect(host.waitUntil(timeout: 20) { $0.contains { $0.event == "participant-joined" && $0.name == "cy" } })
        #expect(host.send("seek 0.5") != nil)
        for process in [host, ben, cy] {
            #expect(process.waitUntil(timeout: 20) { $0.contains { $0.event == "timeline" && $0.change == "seek 0.500" } }, "\(process.name)")
        }
        try await Task.sleep(for: .seconds(1.5))
        for process in [host, ben, cy] {
            #expect(Self.stillRunning(process), "\(process.name) exited: \(process.standardError)")
        }

        // Everyone ends as a session ends: the host cleanly, the others told who ended it.
        eve.leave()
        #expect(host.send("end") != nil)
        host.closeInput()
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
        for process in [ben, cy] {
            process.closeInput()
            #expect(process.waitForExit(timeout: 20) == 3, "\(process.name): \(process.standardError)")
            #expect(process.events.contains { $0.event == "statistics" && ($0.presented ?? 0) > 0 }, "\(process.name)")
        }
    }

    @Test func withoutJSONEventsABadValueIsOneLineOnStandardError() throws {
        let host = try WatchProcess(executable: TandemProcess.executablePath,
                                    arguments: ["host", Self.clip, "--bind", "127.0.0.1", "--port", "0", "--name", "ana"],
                                    name: "ana", acceptsCommands: true)
        defer { host.kill() }
        #expect(host.waitForLine(startingWith: "tandem://", timeout: 20) != nil, "no invite: \(host.standardError)")
        #expect(host.send("rate 1e15") != nil)
        #expect(host.send("end") != nil)
        host.closeInput()
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
        // The title line `hosting TITLE` comes before the invite; the refusal is the one line after it.
        let lines = host.standardError.split(separator: "\n").filter { !$0.hasPrefix("hosting ") }
        #expect(lines.count == 1 && lines[0].hasPrefix("tandem: rate 1e15: rate 1e+15 is not 0 or within 0.25"), "\(lines)")
        #expect(!host.lines.contains { $0.contains("1e15") || $0.contains("1e+15") })
    }
}
