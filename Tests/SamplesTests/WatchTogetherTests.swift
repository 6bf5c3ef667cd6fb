import Foundation
import Testing

/// WatchTogether with three processes playing the sample clip: the session manager tracks who
/// joined and left, and each timeline change reaches everyone with who made it.
@Suite(.serialized, .timeLimit(.minutes(2))) struct WatchTogetherProcessTests {
    /// The frames a `status` line reports, and its position in seconds.
    static func status(_ line: String?) -> (position: Double, frames: Int)? {
        guard let line else { return nil }
        let words = line.split(separator: " ")
        guard words.count >= 7, let position = Double(words[1]), let frames = Int(words[5]) else { return nil }
        return (position, frames)
    }

    @Test func playbackIsCoordinatedAndParticipantsAreTracked() throws {
        let host = try SampleProcess("WatchTogether", name: "host")
        let invite = try host.invite()
        #expect(host.waitFor("watching watch-together.mp4 as host") != nil, "\(host.transcript)")
        let ana = try SampleProcess("WatchTogether", name: "ana", relay: invite)
        #expect(host.waitFor("joined: ana") != nil, "\(host.transcript)")
        #expect(ana.waitFor("watching watch-together.mp4 as ana") != nil, "\(ana.transcript)")

        host.send("play")
        #expect(host.waitFor { $0.hasPrefix("timeline v") && $0.contains(": play by host; playing at 1.0x") } != nil, "\(host.transcript)")
        #expect(ana.waitFor { $0.hasPrefix("timeline v") && $0.contains(": play by host; playing at 1.0x") } != nil, "\(ana.transcript)")
        ana.send("seek 2")
        let seek = "seek to 2.000 s by ana; playing at 1.0x from 2.000 s"
        #expect(host.waitFor(seek) != nil, "\(host.transcript)")
        #expect(ana.waitFor(seek) != nil, "\(ana.transcript)")

        // Bob comes late: he sees who is there and the history of the timeline, and plays along.
        let bob = try SampleProcess("WatchTogether", name: "bob", relay: invite)
        #expect(bob.waitFor("joined: host") != nil, "\(bob.transcript)")
        #expect(bob.waitFor("joined: ana") != nil, "\(bob.transcript)")
        #expect(bob.waitFor(seek) != nil, "\(bob.transcript)")
        #expect(host.waitFor("joined: bob") != nil, "\(host.transcript)")
        Thread.sleep(forTimeInterval: 1)
        bob.send("status")
        let bobStatus = Self.status(bob.waitFor("position "))
        #expect((bobStatus?.position ?? 0) > 2, "\(bob.transcript)")
        #expect((bobStatus?.frames ?? 0) > 0, "\(bob.transcript)")

        // A pause lands at one media time, the same for everyone.
        host.send("pause")
        let pause = host.waitFor { $0.contains(": pause by host; paused at") }
        #expect(pause != nil, "\(host.transcript)")
        if let pause {
            #expect(ana.waitFor(pause) != nil, "\(ana.transcript)")
            #expect(bob.waitFor(pause) != nil, "\(bob.transcript)")
        }

        ana.send("quit")
        #expect(ana.waitForExit() == 0, "\(ana.transcript)")
        #expect(host.waitFor("left: ana") != nil, "\(host.transcript)")
        #expect(bob.waitFor("left: ana") != nil, "\(bob.transcript)")

        host.send("end")
        #expect(bob.waitFor("session over: host ended the session") != nil, "\(bob.transcript)")
        #expect(host.waitForExit() == 0, "\(host.transcript)")
        #expect(bob.waitForExit() == 0, "\(bob.transcript)")
    }

    @Test func badCommandsGetAUsageLine() throws {
        let host = try SampleProcess("WatchTogether", name: "host")
        _ = try host.invite()
        #expect(host.waitFor("watching watch-together.mp4 as host") != nil, "\(host.transcript)")
        host.send("seek soon")
        #expect(host.waitFor("usage: seek SECONDS") != nil, "\(host.transcript)")
        host.send("rate 9")
        #expect(host.waitFor("usage: rate R (0.25 to 4)") != nil, "\(host.transcript)")
        host.send("quit")
        #expect(host.waitForExit() == 0, "\(host.transcript)")

        let lost = try SampleProcess("WatchTogether", name: "lost", extra: ["--media", "/nonexistent/film.mp4"])
        #expect(lost.waitForExit() == 1, "\(lost.transcript)")
        #expect(lost.process.standardError.contains("cannot read /nonexistent/film.mp4"), "\(lost.transcript)")
    }
}
