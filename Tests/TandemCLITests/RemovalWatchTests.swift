import Foundation
import Testing
import TandemTestKit
import TandemHarness
import TandemParty

/// Removing someone between real `tandem` processes on loopback (a relay `tandem host` starts,
/// and three participants): a guest's `kick` is refused with the reason; the operator's
/// `kick ben` ends Ben's session with who removed him while the others go on changing playback
/// together under the new key; `invite` prints the new invite to the operator, which admits,
/// while Ben's old one is refused. An operator the host made removes someone after the host
/// left, and when the last operator leaves, the one who takes over rekeys: the relay takes both
/// from their own signed statements.
@Suite(.serialized, .timeLimit(.minutes(2))) struct RemovalWatchProcessTests {
    @Test func anOperatorsKickEndsBensSessionAndHisOldInviteIsRefused() throws {
        let clip = SampleClip.h264BFrames.path
        func start(_ name: String, _ arguments: [String], invite: String? = nil) throws -> WatchProcess {
            try WatchProcess(executable: TandemProcess.executablePath, arguments: arguments + ["--name", name, "--events", "json"],
                             name: name, acceptsCommands: true, environment: invite == nil ? [:] : ["TANDEM_INVITE": invite])
        }
        let ana = try start("ana", ["host", clip, "--bind", "127.0.0.1", "--port", "0"])
        defer { ana.kill() }
        let invite = try #require(ana.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(ana.standardError)")
        let ben = try start("ben", ["join", clip], invite: invite)
        defer { ben.kill() }
        let cy = try start("cy", ["join", clip], invite: invite)
        defer { cy.kill() }
        for process in [ben, cy] {
            #expect(process.waitUntil(timeout: 20) { $0.contains { $0.event == "joined" } }, "\(process.name): \(process.standardError)")
        }
        #expect(ana.waitUntil(timeout: 20) { $0.filter { $0.event == "participant-joined" }.count >= 2 }, "\(ana.lines.suffix(5))")
        #expect(ana.send("play") != nil)
        for process in [ben, cy] {
            #expect(process.waitUntil(timeout: 15) { $0.contains { $0.change == "play" && $0.by == "ana" } }, "\(process.name): \(process.lines.suffix(5))")
        }

        // A guest may not remove anyone, nor see the invite.
        #expect(cy.send("kick ben") != nil)
        #expect(cy.waitUntil(timeout: 10) { $0.contains { $0.message?.contains("only operators may remove someone") == true } },
                "\(cy.lines.suffix(5))")
        #expect(cy.send("invite") != nil)
        #expect(cy.waitUntil(timeout: 10) { $0.contains { $0.message?.contains("only operators may see the invite") == true } },
                "\(cy.lines.suffix(5))")

        // The operator's kick: Ben is told who removed him and goes; the others carry on.
        #expect(ana.send("kick ben") != nil)
        #expect(ben.waitUntil(timeout: 15) { $0.contains { $0.event == "left" && $0.reason?.contains("removed by ana") == true } },
                "\(ben.lines.suffix(5))")
        #expect(ben.waitForExit(timeout: 20) == 3, "\(ben.standardError)")
        #expect(ben.standardError.contains("removed by ana"), "\(ben.standardError)")
        #expect(cy.waitUntil(timeout: 10) { _ in RolesWatchProcessTests.roles(cy).contains { $0.change == "kick ben" && $0.refused == nil } },
                "\(cy.lines.suffix(5))")
        #expect(ana.send("pause") != nil)
        #expect(cy.waitUntil(timeout: 10) { $0.contains { $0.change == "pause" && $0.by == "ana" } }, "\(cy.lines.suffix(5))")
        #expect(cy.send("play") != nil)
        #expect(ana.waitUntil(timeout: 10) { $0.contains { $0.change == "play" && $0.by == "cy" } }, "\(ana.lines.suffix(5))")

        // The operator's `invite` prints the new one.
        #expect(ana.send("invite") != nil)
        let deadline = Date().addingTimeInterval(10)
        var newInvite: String?
        while newInvite == nil, Date() < deadline {
            newInvite = ana.lines.first { $0.hasPrefix("tandem://") && $0.contains("e=1") }
            if newInvite == nil { Thread.sleep(forTimeInterval: 0.05) }
        }
        let fresh = try #require(newInvite, "no new invite: \(ana.lines.suffix(5))")
        #expect(fresh != invite)

        // Ben's old invite no longer admits; the new one does.
        let again = try start("ben", ["join", clip], invite: invite)
        defer { again.kill() }
        let status = again.waitForExit(timeout: 20)
        #expect(status != nil && status != 0, "\(again.standardError)")
        #expect(again.standardError.contains("secret does not match"), "\(again.standardError)")
        let dan = try start("dan", ["join", clip], invite: fresh)
        defer { dan.kill() }
        #expect(dan.waitUntil(timeout: 20) { $0.contains { $0.event == "joined" } }, "\(dan.standardError)")
    }

    /// Waits for a line of `process` starting `tandem://` and naming epoch `epoch`.
    private func invite(of process: WatchProcess, epoch: Int) -> String? {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if let line = process.lines.first(where: { $0.hasPrefix("tandem://") && $0.contains("e=\(epoch)") }) { return line }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return nil
    }

    @Test func anOperatorTheHostMadeKicksAfterTheHostLeftAndTheOneWhoTakesOverRekeys() throws {
        let clip = SampleClip.h264BFrames.path
        func start(_ name: String, _ arguments: [String], invite: String? = nil) throws -> WatchProcess {
            try WatchProcess(executable: TandemProcess.executablePath, arguments: arguments + ["--name", name, "--events", "json"],
                             name: name, acceptsCommands: true, environment: invite == nil ? [:] : ["TANDEM_INVITE": invite])
        }
        func joined(_ name: String, _ invite: String) throws -> WatchProcess {
            let process = try start(name, ["join", clip], invite: invite)
            #expect(process.waitUntil(timeout: 20) { $0.contains { $0.event == "joined" } }, "\(name): \(process.standardError)")
            return process
        }
        func refused(_ name: String, _ invite: String) throws {
            let process = try start(name, ["join", clip], invite: invite)
            defer { process.kill() }
            let status = process.waitForExit(timeout: 20)
            #expect(status != nil && status != 0, "\(process.standardError)")
            #expect(process.standardError.contains("secret does not match"), "\(process.standardError)")
        }
        let ana = try start("ana", ["host", clip, "--bind", "127.0.0.1", "--port", "0"])
        defer { ana.kill() }
        let invite = try #require(ana.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(ana.standardError)")
        let ben = try joined("ben", invite)
        defer { ben.kill() }
        let cy = try joined("cy", invite)
        defer { cy.kill() }
        #expect(ana.waitUntil(timeout: 20) { $0.filter { $0.event == "participant-joined" }.count >= 2 }, "\(ana.lines.suffix(5))")

        // Ana makes Ben an operator and leaves; the party goes on without her.
        #expect(ana.send("op ben") != nil)
        #expect(ben.waitUntil(timeout: 10) { _ in RolesWatchProcessTests.roles(ben).contains { $0.change == "op ben" && $0.refused == nil } },
                "\(ben.lines.suffix(5))")
        #expect(ana.send("leave") != nil)
        #expect(ana.waitForExit(timeout: 20) != nil, "\(ana.standardError)")
        #expect(ben.waitUntil(timeout: 20) { $0.contains { $0.event == "participant-left" } }, "\(ben.lines.suffix(5))")

        // Ben removes Cy: the relay takes it from Ben's key, which Ana's grant told it.
        #expect(ben.send("kick cy") != nil)
        #expect(cy.waitUntil(timeout: 15) { $0.contains { $0.event == "left" && $0.reason?.contains("removed by ben") == true } },
                "\(cy.lines.suffix(5))")
        #expect(cy.waitForExit(timeout: 20) == 3, "\(cy.standardError)")
        #expect(ben.send("invite") != nil)
        let first = try #require(self.invite(of: ben, epoch: 1), "no new invite: \(ben.lines.suffix(5))")
        try refused("cy", invite)
        let dan = try joined("dan", first)
        defer { dan.kill() }
        #expect(ben.waitUntil(timeout: 20) { $0.filter { $0.event == "participant-joined" }.count >= 1 }, "\(ben.lines.suffix(5))")

        // Ben leaves too: Dan takes over, and his rekey is taken by the relay, which checked his
        // claim by the same rule (nobody with the role present, Dan here longest).
        #expect(ben.send("leave") != nil)
        #expect(ben.waitForExit(timeout: 20) != nil, "\(ben.standardError)")
        #expect(dan.waitUntil(timeout: 20) { _ in RolesWatchProcessTests.roles(dan).contains { $0.change == "claim" && $0.by == "dan" && $0.refused == nil } },
                "\(dan.lines.suffix(5))")
        #expect(dan.send("rekey") != nil)
        #expect(dan.waitUntil(timeout: 10) { _ in RolesWatchProcessTests.roles(dan).contains { $0.change == "rekey" && $0.refused == nil } },
                "\(dan.lines.suffix(5))")
        #expect(dan.send("invite") != nil)
        let second = try #require(self.invite(of: dan, epoch: 2), "no new invite: \(dan.lines.suffix(5))")
        try refused("eve", first)
        let fay = try joined("fay", second)
        defer { fay.kill() }
    }
}
