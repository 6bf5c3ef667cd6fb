import Foundation
import Testing
import TandemClock
import TandemPlayback
import TandemTestKit
@testable import TandemMpv

/// The pitch-correction policy's decisions: off about rate 1, on at the rates people pick, and an
/// `--audio-pitch-correction` among mpv's extra arguments winning.
@Suite struct MpvPitchCorrectionTests {
    @Test(arguments: [(1.0, false), (1.0001, false), (0.9999, false), (1.004, false), (0.996, false), (0, false), (-1, false),
                      (1.006, true), (0.99, true), (1.5, true), (0.75, true), (0.25, true), (4, true)])
    func followingTheRateCorrectsAwayFromOneOnly(rate: Double, corrects: Bool) {
        #expect(MpvPitchCorrection.followingRate.corrects(atRate: rate) == corrects)
        #expect(MpvPitchCorrection.always.corrects(atRate: rate))
        #expect(!MpvPitchCorrection.never.corrects(atRate: rate))
    }

    @Test func mpvsOwnOptionAmongTheExtraArgumentsWins() {
        let policy = MpvPitchCorrection.followingRate
        #expect(policy.overridden(by: ["--vo=null", "--ao=null"]) == .followingRate)
        #expect(policy.overridden(by: ["--audio-pitch-correction=yes"]) == .always)
        #expect(policy.overridden(by: ["--audio-pitch-correction"]) == .always)
        #expect(policy.overridden(by: ["--audio-pitch-correction=no"]) == .never)
        #expect(policy.overridden(by: ["--no-audio-pitch-correction"]) == .never)
        // The last one wins, as in mpv.
        #expect(policy.overridden(by: ["--audio-pitch-correction=no", "--ao=null", "--audio-pitch-correction=yes"]) == .always)
        // Only the option itself: a file or another option's value naming it is no setting.
        #expect(policy.overridden(by: ["--title=--audio-pitch-correction=no", "audio-pitch-correction"]) == .followingRate)
    }

    @Test func mpvStartsWithoutPitchCorrectionUnlessItIsOnAtRateOne() {
        #expect(MpvPitchCorrection.followingRate.launchArguments == ["--audio-pitch-correction=no"])
        #expect(MpvPitchCorrection.never.launchArguments == ["--audio-pitch-correction=no"])
        #expect(MpvPitchCorrection.always.launchArguments.isEmpty)
    }
}

// test-tier: alone
/// A real headless mpv following a group through rate changes: pitch correction off while the
/// group plays at 1 (the correction loop's nudges included), on at 1.5, switched while mpv is
/// lined up for the change, and mpv on the timeline either way; alone, the transport's rate
/// switches it with the speed; mpv's own option, given, holds at every rate.
@Suite(.serialized, .timeLimit(.minutes(1))) struct MpvPitchCorrectionProcessTests {
    typealias Member = MpvGroup.Member

    /// mpv's `audio-pitch-correction`, read from outside.
    static func correctsPitch(_ mpv: MpvConnection) async -> Bool? {
        (try? await mpv.get("audio-pitch-correction"))?.bool
    }

    /// mpv's error against the timeline (ns; positive: ahead), by its audio clock at the round
    /// trip's midpoint.
    static func error(of mpv: MpvConnection, against coordinator: PlaybackCoordinator) async -> Int64? {
        guard let reply = try? await mpv.command(["get_property", "audio-pts"]), let seconds = reply.value.double,
              let expected = coordinator.expectedItemTime(atHostTime: HostInstant(nanoseconds: reply.midpoint)) else { return nil }
        return Int64((seconds * 1e9).rounded()) - expected.nanoseconds
    }

    /// How far from the timeline mpv may be (ns) once started (as `MpvCoordinationProcessTests`).
    static let tolerance: Int64 = 5_000_000

    /// Samples mpv's pitch correction and error `count` times, 100 ms apart.
    static func watch(_ mpv: MpvConnection, against coordinator: PlaybackCoordinator,
                      count: Int) async throws -> (pitch: [Bool?], errors: [Int64]) {
        var pitch: [Bool?] = []
        var errors: [Int64] = []
        for _ in 0..<count {
            pitch.append(await correctsPitch(mpv))
            if let error = await error(of: mpv, against: coordinator) { errors.append(error) }
            try await Task.sleep(for: .milliseconds(100))
        }
        return (pitch, errors)
    }

    @Test func aGroupAtRateOnePlaysWithoutPitchCorrectionAndAtOnePointFiveWithIt() async throws {
        try await MpvGroup.with { host, guest, mpv, _, other in
            #expect(await Self.correctsPitch(other) == false, "launched for rate 1")
            host.coordinator.coordinateRateChange(to: 1)
            #expect(await other.awaitProperty("pause") { $0.bool == false })
            try await Task.sleep(for: .seconds(1))
            let one = try await Self.watch(other, against: guest.coordinator, count: 8)
            #expect(one.pitch.allSatisfy { $0 == false }, "at rate 1: \(one.pitch)")
            #expect(one.errors.count == 8 && one.errors.allSatisfy { abs($0) < Self.tolerance }, "errors at 1 (ns): \(one.errors)")

            let starts = mpv.statistics.starts
            host.coordinator.coordinateRateChange(to: 1.5)
            #expect(await awaitTimeline(of: guest.coordinator) { $0.rate == 1.5 })
            #expect(await eventually { mpv.statistics.starts > starts })
            try await Task.sleep(for: .seconds(1))
            let faster = try await Self.watch(other, against: guest.coordinator, count: 8)
            #expect(faster.pitch.allSatisfy { $0 == true }, "at rate 1.5: \(faster.pitch)")
            #expect(faster.errors.count == 8 && faster.errors.allSatisfy { abs($0) < Self.tolerance }, "errors at 1.5 (ns): \(faster.errors)")
            let speed = try #require(try await other.get("speed").double)
            #expect(abs(speed - 1.5) < 0.08, "speed \(speed)")

            host.coordinator.coordinateRateChange(to: 1)
            #expect(await awaitTimeline(of: guest.coordinator) { $0.rate == 1 })
            #expect(await other.awaitProperty("audio-pitch-correction") { $0.bool == false })
            try await Task.sleep(for: .seconds(1))
            let back = try await Self.watch(other, against: guest.coordinator, count: 5)
            #expect(back.pitch.allSatisfy { $0 == false }, "back at rate 1: \(back.pitch)")
            #expect(back.errors.count == 5 && back.errors.allSatisfy { abs($0) < Self.tolerance }, "errors back at 1 (ns): \(back.errors)")
            #expect(mpv.statistics.userProposals == 0)
        }
    }

    @Test func aloneTheTransportsRateSwitchesItWithTheSpeed() async throws {
        let mpv = try await MpvPlayer.launch(file: try MpvFixture.longClip(), options: MpvFixture.headless(ipcPath: MpvFixture.socketPath()))
        do {
            let other = try MpvConnection(path: mpv.ipcPath)
            defer { other.close() }
            try await mpv.play(rate: 1)
            #expect(await Self.correctsPitch(other) == false)
            try await mpv.setRate(0.75)
            #expect(try await other.get("speed").double == 0.75)
            #expect(await Self.correctsPitch(other) == true)
            try await mpv.setRate(1)
            #expect(await Self.correctsPitch(other) == false)
            try await mpv.setRate(0)
        } catch {
            await mpv.close()
            throw error
        }
        await mpv.close()
    }

    @Test func mpvsOwnOptionHoldsAtEveryRate() async throws {
        var options = MpvFixture.headless(ipcPath: MpvFixture.socketPath())
        #expect(options.effectivePitchCorrection == .followingRate)
        options.extraArguments.append("--audio-pitch-correction=yes")
        #expect(options.effectivePitchCorrection == .always)
        let mpv = try await MpvPlayer.launch(file: try MpvFixture.longClip(), options: options)
        do {
            let other = try MpvConnection(path: mpv.ipcPath)
            defer { other.close() }
            // On, with the tempo filter kept in the chain so that mpv never inserts or removes it.
            #expect(await Self.correctsPitch(other) == true)
            let filters = try await other.get("af")
            guard case .array(let chain) = filters else {
                Issue.record("af is \(filters)")
                return
            }
            #expect(chain.contains { $0["name"]?.string == "scaletempo2" }, "af: \(chain)")
            try await mpv.play(rate: 1)
            try await mpv.setRate(1.5)
            try await mpv.setRate(1)
            #expect(await Self.correctsPitch(other) == true)
            try await mpv.setRate(0)
        } catch {
            await mpv.close()
            throw error
        }
        await mpv.close()
    }
}
