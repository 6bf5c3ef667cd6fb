import Foundation
import Testing
import TandemHarness
import TandemTestKit

/// The sound's own distance from the group's timeline in everyone's health: a host playing sound
/// into a PulseAudio server the test starts reports how late its sound reaches the output, and
/// a joiner without sound reports none.
@Suite(.serialized, .timeLimit(.minutes(1))) struct SoundHealthProcessTests {
    /// The `health` events `process` printed about `from`, as JSON objects.
    static func reports(in process: WatchProcess, from: String) -> [[String: Any]] {
        process.lines.compactMap { line in
            guard line.contains(#""event":"health""#),
                  let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  object["from"] as? String == from else { return nil }
            return object
        }
    }

    @Test func aPlayerWithSoundReportsHowLateItsSoundIsAndOneWithoutReportsNone() throws {
        let server = try PulseAudioServer.start()
        defer { server.stop() }
        _ = try server.loadNullSink(name: "out", channels: 2, channelMap: ["front-left", "front-right"])
        let clip = SampleClip.directory + "/watch-together.mp4"
        let host = try WatchProcess.host(media: [clip], arguments: ["--audio", "pulse", "--audio-device", "out"],
                                         environment: server.environment.mapValues { $0 })
        defer { host.kill() }
        let invite = try #require(host.invite(), "no invite: \(host.standardError)")
        let ben = try WatchProcess.join(invite: invite, media: [clip], name: "ben")
        defer { ben.kill() }
        #expect(host.waitUntilJoined() && ben.waitUntilJoined(), "\(host.standardError)\n\(ben.standardError)")
        #expect(host.send("play") != nil)

        // Ben hears the host's sound measured, within a millisecond of the timeline from the
        // first report on: the host plays at once on a server that has just started, and its
        // output places no media before the server's first timing report.
        #expect(ben.waitUntil(timeout: 15) { _ in
            Self.reports(in: ben, from: "ana").filter { $0["state"] as? String == "playing" && $0["sound_lateness_us"] != nil }.count >= 3
        }, "\(Self.reports(in: ben, from: "ana"))")
        let sound = Self.reports(in: ben, from: "ana").compactMap { $0["sound_lateness_us"] as? Int }
        #expect(sound.allSatisfy { abs($0) < 1_000 }, "\(sound)")
        // The host hears Ben playing, without sound to report.
        #expect(host.waitUntil(timeout: 15) { _ in
            Self.reports(in: host, from: "ben").contains { $0["state"] as? String == "playing" }
        }, "\(Self.reports(in: host, from: "ben"))")
        #expect(Self.reports(in: host, from: "ben").allSatisfy { $0["sound_lateness_us"] == nil })

        #expect(host.send("end") != nil)
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
    }
}
