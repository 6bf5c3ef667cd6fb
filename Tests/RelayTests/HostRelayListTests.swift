import Foundation
import TandemNet
import TandemTestKit
import Testing
import TandemHarness

/// `tandem host FILE --relay H1:P1,H2:P2` and `tandem join` with the invite it prints, as their
/// own processes against `tandem serve`: the first relay listed is not listening, so the host
/// creates the session on the second, the invite names both, and the guest lands there too and
/// watches (its session clock probed at the relay it joined). That relay runs with an injected
/// clock error (`--clock-offset`, `--clock-drift-ppm`): participants follow its clock, whatever
/// it reads.
@Suite("Hosting on a list of relays")
struct HostRelayListProcessTests {
    @Test func aHostAndAGuestMeetOnTheSecondRelayWhenTheFirstIsDown() throws {
        let live = try ServeProcess(arguments: ["--clock-offset", "-3.5", "--clock-drift-ppm", "300"])
        defer { live.stop() }
        let dead = try RelayListSocketIOTests.deadPort()
        let clip = SampleClip.h264.path
        let host = try WatchProcess(executable: TandemProcess.executablePath,
                                    arguments: ["host", clip, "--relay", "127.0.0.1:\(dead),127.0.0.1:\(live.port)",
                                                "--name", "ana", "--events", "json"],
                                    name: "ana", acceptsCommands: true)
        defer { host.kill() }
        let invite = try #require(host.waitForLine(startingWith: "tandem://", timeout: 30), "no invite: \(host.standardError)")
        #expect(invite.hasPrefix("tandem://127.0.0.1:\(dead)/"), "the first relay listed comes first: \(invite)")
        #expect(invite.hasSuffix("&r=127.0.0.1:\(live.port)"), "\(invite)")
        let guest = try WatchProcess.join(invite: invite, file: clip, arguments: ["--name", "ben", "--events", "json"], name: "ben",
                                          acceptsCommands: true)
        defer { guest.kill() }
        #expect(guest.waitUntil(timeout: 30) { $0.contains { $0.event == "joined" } }, "\(guest.standardError)")
        #expect(host.send("play") != nil)
        #expect(guest.waitUntil(timeout: 15) { $0.contains { $0.change == "play" } }, "\(guest.lines.suffix(5)) \(guest.standardError)")
        // Playing for a while (a process test: real time), then ended by the guest, whom the
        // host made an operator (only operators end a hosted party).
        _ = guest.waitUntil(timeout: 1.5) { _ in false }
        #expect(host.send("op ben") != nil)
        #expect(guest.waitUntil(timeout: 15) { $0.contains { $0.event == "roles" } }, "\(guest.lines.suffix(5))")
        #expect(guest.send("end") != nil)
        #expect(guest.waitForExit(timeout: 20) == 0, "\(guest.standardError)")
        #expect(host.waitForExit(timeout: 20) == 3, "\(host.standardError)")
        // The guest presented frames: its session clock, probed at the relay it joined, was there.
        let presented = guest.events.compactMap(\.presented).last ?? 0
        #expect(presented >= 10, "the guest presented \(presented) frames")
        for process in [host, guest] {
            #expect(!process.standardError.contains("k="), "\(process.name): \(process.standardError)")
        }
    }
}
