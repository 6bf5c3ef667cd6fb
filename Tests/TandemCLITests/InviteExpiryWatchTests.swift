import Foundation
import Testing
import Tandem
import TandemTestKit
import TandemHarness

/// `tandem host --invite-expires` between real processes: the invite carries the host's ticket,
/// a joiner within its lifetime joins, and once it has expired a joiner is refused by the relay
/// with a line that says so.
@Suite(.serialized, .timeLimit(.minutes(2))) struct InviteExpiryWatchProcessTests {
    @Test func anExpiredInviteIsRefusedWithTheReason() throws {
        let clip = SampleClip.h264BFrames.path
        func start(_ name: String, _ arguments: [String], invite: String? = nil) throws -> WatchProcess {
            try WatchProcess(executable: TandemProcess.executablePath, arguments: arguments + ["--name", name, "--events", "json"],
                             name: name, acceptsCommands: true, environment: invite == nil ? [:] : ["TANDEM_INVITE": invite])
        }
        let ana = try start("ana", ["host", clip, "--bind", "127.0.0.1", "--port", "0", "--invite-expires", "3s"])
        defer { ana.kill() }
        let invite = try #require(ana.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(ana.standardError)")
        let expiry = try #require(try Invitation(parsing: invite).expiry, "the invite carries no ticket: \(invite)")
        // Within its lifetime a joiner joins (unless the machine took the whole of it to start).
        if Date() < expiry.addingTimeInterval(-2) {
            let ben = try start("ben", ["join", clip], invite: invite)
            defer { ben.kill() }
            #expect(ben.waitUntil(timeout: 20) { $0.contains { $0.event == "joined" } }, "\(ben.standardError)")
        }
        // Past it, the relay refuses the next.
        let wait = expiry.timeIntervalSinceNow + 1.1
        if wait > 0 { Thread.sleep(forTimeInterval: wait) }
        let cy = try start("cy", ["join", clip], invite: invite)
        defer { cy.kill() }
        let status = cy.waitForExit(timeout: 20)
        #expect(status != nil && status != 0, "\(cy.standardError)")
        #expect(cy.standardError.contains("expired at"), "\(cy.standardError)")
        #expect(ana.send("end") != nil)
    }
}
