import Foundation
import Testing

/// ShowAlert with three participants as separate processes: anyone rings everyone else's bell.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ShowAlertProcessTests {
    @Test func anyParticipantRingsEveryoneElsesBell() throws {
        let host = try SampleProcess("ShowAlert", name: "host")
        let invite = try host.invite()
        let ana = try SampleProcess("ShowAlert", name: "ana", relay: invite)
        // The safe way to pass an invite: in the environment, not on the command line.
        let bob = try SampleProcess("ShowAlert", name: "bob", invite: invite)
        #expect(host.waitFor("joined: ana") != nil, "\(host.transcript)")
        #expect(host.waitFor("joined: bob") != nil, "\(host.transcript)")
        #expect(ana.waitFor("joined: bob") != nil, "\(ana.transcript)")
        #expect(bob.waitFor("joined: ana") != nil, "\(bob.transcript)")

        ana.send("ring dinner is ready")
        #expect(ana.waitFor("rang everyone: dinner is ready") != nil, "\(ana.transcript)")
        #expect(host.waitFor("🔔 ana rang: dinner is ready") != nil, "\(host.transcript)")
        #expect(bob.waitFor("🔔 ana rang: dinner is ready") != nil, "\(bob.transcript)")
        // Nobody rings their own bell.
        #expect(!ana.lines.contains { $0.contains("🔔") }, "\(ana.transcript)")

        bob.send("quit")
        #expect(bob.waitForExit() == 0, "\(bob.transcript)")
        #expect(host.waitFor("left: bob") != nil, "\(host.transcript)")
        #expect(ana.waitFor("left: bob") != nil, "\(ana.transcript)")

        host.send("ring still here?")
        #expect(ana.waitFor("🔔 host rang: still here?") != nil, "\(ana.transcript)")

        host.send("end")
        #expect(ana.waitFor("session over:") != nil, "\(ana.transcript)")
        #expect(ana.waitForExit() == 0, "\(ana.transcript)")
        #expect(host.waitForExit() == 0, "\(host.transcript)")
    }

    @Test func unknownCommandsAndBadInvitesGetOneClearLine() throws {
        let host = try SampleProcess("ShowAlert", name: "host")
        _ = try host.invite()
        host.send("shout hello")
        #expect(host.waitFor("unknown command 'shout'") != nil, "\(host.transcript)")
        host.send("quit")
        #expect(host.waitForExit() == 0, "\(host.transcript)")

        let stray = try SampleProcess("ShowAlert", name: "stray", relay: "not-an-invite")
        #expect(stray.waitForExit() == 1)
        #expect(stray.process.standardError.contains("--relay wants an invite"), "\(stray.transcript)")
    }

    @Test func hostsANewSessionOnARelayNamedByItsAddress() throws {
        // The first sample's embedded relay stands in for `tandem serve`.
        let relayHost = try SampleProcess("ShowAlert", name: "relay")
        let relayInvite = try relayHost.invite()
        let port = try #require(URLComponents(string: relayInvite)?.port)
        let address = "127.0.0.1:\(port)"
        let host = try SampleProcess("ShowAlert", name: "host", relay: address)
        let invite = try host.invite()
        #expect(invite != relayInvite)
        #expect(invite.hasPrefix("tandem://\(address)/"))
        let ana = try SampleProcess("ShowAlert", name: "ana", relay: invite)
        #expect(host.waitFor("joined: ana") != nil, "\(host.transcript)")
        host.send("ring on another session")
        #expect(ana.waitFor("🔔 host rang: on another session") != nil, "\(ana.transcript)")
        // A session of its own: the relay's first participant hears nothing of it.
        #expect(!relayHost.lines.contains { $0.contains("joined:") || $0.contains("🔔") }, "\(relayHost.transcript)")
        host.send("end")
        #expect(ana.waitForExit() == 0, "\(ana.transcript)")
        #expect(host.waitForExit() == 0, "\(host.transcript)")
        relayHost.send("quit")
        #expect(relayHost.waitForExit() == 0, "\(relayHost.transcript)")
    }
}
