import Foundation
import Testing

/// The samples keep the invite's secret out of sight and show peers' strings without their
/// escape sequences: separate processes on loopback.
@Suite(.serialized, .timeLimit(.minutes(2))) struct SampleHygieneProcessTests {
    static let secret = "pFUlHzmR_sLoyKVkjB2QQXCATgHY20JSQHkPEruawfY"

    @Test func noErrorEchoesTheSecret() throws {
        let notAnInvite = "http://127.0.0.1:1/400da221-e2ff-443f-a3c6-5de1c6b01483?k=\(Self.secret)"
        let badRelay = try SampleProcess("ShowAlert", name: "stray", relay: notAnInvite)
        #expect(badRelay.waitForExit() == 1)
        let relayError = badRelay.process.standardError
        #expect(relayError.contains("--relay wants an invite") && relayError.contains("k=…"), "\(badRelay.transcript)")
        #expect(!relayError.contains(Self.secret), "\(badRelay.transcript)")

        let badEnvironment = try SampleProcess("ShowAlert", name: "stray", invite: notAnInvite)
        #expect(badEnvironment.waitForExit() == 1)
        let environmentError = badEnvironment.process.standardError
        #expect(environmentError.contains("TANDEM_INVITE is not an invite"), "\(badEnvironment.transcript)")
        #expect(!environmentError.contains(Self.secret), "\(badEnvironment.transcript)")

        let badWord = try SampleProcess("ShowAlert", name: "stray", extra: [notAnInvite])
        #expect(badWord.waitForExit() == 1)
        #expect(!badWord.process.standardError.contains(Self.secret), "\(badWord.transcript)")
    }

    @Test func theEnvironmentsInviteJoinsAndARelayOptionWinsOverIt() throws {
        let host = try SampleProcess("ShowAlert", name: "host")
        let invite = try host.invite()
        // With --relay given, TANDEM_INVITE is not read: an unreachable invite there changes nothing.
        let unreachable = "tandem://127.0.0.1:1/400da221-e2ff-443f-a3c6-5de1c6b01483?k=\(Self.secret)"
        let ana = try SampleProcess("ShowAlert", name: "ana", relay: invite, invite: unreachable)
        #expect(host.waitFor("joined: ana") != nil, "\(host.transcript)")

        // A hostile name and message: a title change, a clear screen, a bell.
        let hostile = "mal\u{1B}]0;pwned\u{7}lory\u{1B}[2J"
        let mallory = try SampleProcess("ShowAlert", name: hostile, invite: invite)
        #expect(host.waitFor("joined: mallory") != nil, "\(host.transcript)")
        #expect(ana.waitFor("joined: mallory") != nil, "\(ana.transcript)")
        mallory.send("ring hi\u{1B}[31m there\u{9B}2J\u{7}")
        #expect(host.waitFor("mallory rang: hi there") != nil, "\(host.transcript)")
        #expect(ana.waitFor("mallory rang: hi there") != nil, "\(ana.transcript)")
        for sample in [host, ana] {
            // The bell sample rings the bell itself (BEL at the start of its line); nothing else
            // of the peer's reaches the terminal.
            let controls = sample.lines.map { $0.hasPrefix("\u{7}") ? String($0.dropFirst()) : $0 }
                .filter { $0.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) } }
            #expect(controls.isEmpty, "\(sample.transcript)")
        }

        host.send("end")
        #expect(ana.waitFor("session over:") != nil, "\(ana.transcript)")
        #expect(mallory.waitForExit() == 0, "\(mallory.transcript)")
        #expect(ana.waitForExit() == 0, "\(ana.transcript)")
        #expect(host.waitForExit() == 0, "\(host.transcript)")
    }
}
