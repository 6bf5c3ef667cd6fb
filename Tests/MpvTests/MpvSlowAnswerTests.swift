import Foundation
import Testing
import TandemNet
import TandemPlayback
import TandemTestKit
import TandemMpv

/// A person's seek in mpv while the group plays, when the group's answer takes effect late: the
/// relay's lead follows the slowest participant's round trip, up to a second on a busy machine
/// (the frame-flip probe's short script failed so: the peer that seeked in its own mpv stood
/// still until the group's change took effect, about 50 frames shown of 90). mpv plays on from
/// where the person put it until its start must begin, then starts on the group's timeline.
@Suite(.serialized, .timeLimit(.minutes(1))) struct MpvSlowAnswerProcessTests {
    /// mpv's `time-pos` (ns) over its IPC, as another tool would read it.
    static func position(_ mpv: MpvConnection) async throws -> Int64? {
        try await mpv.get("time-pos").seconds.map { Int64($0 * 1e9) }
    }

    @Test func aPersonsSeekPlaysOnWhileTheGroupsAnswerIsFarOff() async throws {
        var relay = RelayCoreConfiguration()
        // Every change takes effect 0.9 s after the relay orders it.
        relay.minimumLead = 900_000_000
        try await MpvGroup.with(relay: relay) { host, guest, mpv, _, other in
            host.coordinator.coordinateRateChange(to: 1)
            #expect(await eventually { (try? await other.get("pause"))?.bool == false })
            try await Task.sleep(for: .seconds(1))

            // The person seeks 3 s on in mpv: the group's answer takes effect 0.9 s later.
            let before = try #require(try await Self.position(other))
            let version = guest.coordinator.timeline.version
            try await other.command(["seek", 3, "relative", "exact"])
            #expect(await awaitTimeline(of: guest.coordinator) { $0.version > version })
            // Meanwhile mpv plays on from the person's seek (stopped, it would show one frame).
            try await Task.sleep(for: .milliseconds(100))
            let first = try #require(try await Self.position(other))
            try await Task.sleep(for: .milliseconds(400))
            let second = try #require(try await Self.position(other))
            #expect(first > before + 2_500_000_000, "mpv at \(first) ns after a seek of 3 s from \(before) ns")
            #expect(second - first > 250_000_000, "mpv moved \(second - first) ns in 400 ms while the answer was due")

            // Once the answer is in force, mpv is on the group's timeline.
            try await Task.sleep(for: .seconds(1.5))
            let errors = try await MpvCoordinationProcessTests.errors(of: other, against: guest.coordinator, count: 4)
            #expect(errors.count == 4 && errors.allSatisfy { abs($0) < MpvCoordinationProcessTests.tolerance },
                    "errors after the answer (ms): \(MpvCoordinationProcessTests.milliseconds(errors))")
            #expect(mpv.statistics.userProposals == 1)
        }
    }
}
