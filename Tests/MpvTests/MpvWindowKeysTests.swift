import Foundation
import Testing
import TandemClock
import TandemPlayback
import TandemNet
import TandemTestKit
import TandemMpv
import TandemMediaTypes

/// The terminal's key table in mpv's own window: a real headless mpv in a group, its keys pressed
/// over its IPC (`keypress`, as a person's), and the group's timeline read on the other member.
@Suite(.serialized, .timeLimit(.minutes(1))) struct MpvWindowKeysProcessTests {
    @Test func theTransportKeysMoveTheGroupAsAtTheTerminal() async throws {
        try await MpvGroup.with { host, guest, _, _, other in
            host.coordinator.coordinateRateChange(to: 1)
            #expect(await other.awaitProperty("pause") { $0.bool == false })
            // By tenths, as the terminal's `[` and `]` (mpv's own would make 1.21, then 1.1 × 0.91).
            for (key, rate) in [("]", 1.1), ("]", 1.2), ("[", 1.1), ("BS", 1.0)] {
                _ = try await other.command(["keypress", .string(key)])
                #expect(await awaitTimeline(of: host.coordinator) { abs($0.rate - rate) < 1e-9 }, "\(key): \(host.coordinator.timeline.rate)")
                // The next key steps from there.
                #expect(await awaitTimeline(of: guest.coordinator) { abs($0.rate - rate) < 1e-9 })
            }
            // `p` (and space) is the group's play or pause, as at the terminal: pressed at once,
            // while this mpv still starts on the last change (a pause, a seek, a resume of its own),
            // it is a pause, and mpv pauses at the group's instant.
            _ = try await other.command(["keypress", "p"])
            #expect(await awaitTimeline(of: host.coordinator) { $0.rate == 0 }, "\(host.coordinator.timeline)")
            #expect(await other.awaitProperty("pause") { $0.bool == true })
            // → is the group's seek 5 s on; space plays again.
            let paused = host.coordinator.timeline.anchorMediaTime
            _ = try await other.command(["keypress", "RIGHT"])
            #expect(await awaitTimeline(of: host.coordinator) { ($0.anchorMediaTime - paused - .seconds(5)).magnitude < .milliseconds(50) },
                    "\(host.coordinator.timeline) from \(paused)")
            _ = try await other.command(["keypress", "SPACE"])
            #expect(await awaitTimeline(of: host.coordinator) { $0.rate == 1 }, "\(host.coordinator.timeline)")
            #expect(await other.awaitProperty("pause") { $0.bool == false })
        }
    }

    @Test func aRateKeyStepsByATenthWithinTheProposableRates() {
        #expect(MpvPlayer.steppedRate(from: 1, by: 0.1) == 1.1)
        #expect(MpvPlayer.steppedRate(from: 1.25, by: -0.1) == 1.2)
        #expect(MpvPlayer.steppedRate(from: 3.95, by: 0.1) == 4)
        #expect(MpvPlayer.steppedRate(from: 4, by: 0.1) == 4)
        #expect(MpvPlayer.steppedRate(from: 0.3, by: -0.1) == 0.3)
        #expect(MpvPlayer.steppedRate(from: 0.25, by: -0.1) == 0.3)
    }
}

/// Text on mpv's screen (`MpvPlayer.showOnScreen(_:for:)`): mpv 0.35 cannot read its OSD back, so
/// what it received is read from its own log, where it writes each command it runs (`cplayer`
/// at trace level).
@Suite(.serialized, .timeLimit(.minutes(1))) struct MpvOnScreenProcessTests {
    @Test func mpvShowsTheLinesAsGivenWithoutControlCharactersOrExpansion() async throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let log = fixtures.path("mpv.log")
        var options = MpvFixture.headless()
        options.extraArguments += ["--log-file=\(log)", "--msg-level=cplayer=trace"]
        let mpv = try await MpvPlayer.launch(file: try MpvFixture.longClip(), options: options)
        let long = String(repeating: "x", count: 400)
        let accepted = await mpv.showOnScreen(["Ana paused at 0:03", "Ben: hi\u{7}\tthere ${path}", long], for: .seconds(4))
        await mpv.close()
        #expect(accepted)
        let text = try String(contentsOfFile: log, encoding: .utf8)
        let command = try #require(text.split(separator: "\n").first { $0.contains("Run command: show-text") }, "no show-text in mpv's log")
        let cut = String(repeating: "x", count: MpvPlayer.onScreenLineLimit - 1) + "…"
        #expect(command.contains(#"text="Ana paused at 0:03\nBen: hi there ${path}\n\#(cut)", duration="4000""#), "\(command)")
        // Closed, it shows nothing.
        #expect(await mpv.showOnScreen(["late"]) == false)
    }
}
