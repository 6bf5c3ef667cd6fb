import Foundation
import Testing
import Tandem
import TandemBench
import TandemClock
import TandemMedia
import TandemMpv
import TandemNet
import TandemPlayback
import TandemMediaTypes
import TandemTestKit

/// The baseline with a real headless mpv, driven from outside by an `OnReceiptFollower`: each
/// change applied when its command arrives, well before its effective instant on a relay with a
/// long lead, and nothing corrects mpv afterwards. The host is the built-in player.
@Suite(.serialized, .timeLimit(.minutes(1))) struct OnReceiptMpvProcessTests {
    /// Starts (without `invitation`) or joins a session on `item` as `name`, driven by `coordinator`.
    static func member(_ name: String, relay: TestRelay, item: String, invitation: Invitation?,
                       coordinator: PlaybackCoordinator) async throws -> GroupSession<WatchTogether> {
        let center = ActivityCenter()
        center.displayName = name
        center.configure(relay: relay.connector, host: relay.host, port: relay.port, sessionClock: .derived(from: SystemClock()))
        var sessions = center.sessions(for: WatchTogether.self).makeAsyncIterator()
        if let invitation { try await center.accept(invitation) } else { try await center.start(WatchTogether(item: item)) }
        let session = try #require(await sessions.next())
        session.join()
        #expect(await awaitValue(session.$state.values) { if case .joined = $0 { true } else { false } })
        coordinator.coordinateWithSession(session)
        return session
    }

    /// The first instant (a reply's midpoint) at which mpv's `property` satisfies `condition`,
    /// polling every 5 ms for at most 5 s.
    static func firstInstant(_ mpv: MpvConnection, _ property: String, where condition: (MpvValue) -> Bool) async throws -> Int64? {
        for _ in 0..<1_000 {
            let reply = try await mpv.command(["get_property", .string(property)])
            if condition(reply.value) { return reply.midpoint }
            try await Task.sleep(for: .milliseconds(5))
        }
        return nil
    }

    /// The raw monotonic instant of `coordinator`'s current anchor (the system clock is raw).
    static func effectiveInstant(_ coordinator: PlaybackCoordinator) throws -> Int64 {
        try #require(coordinator.hostTime(atSessionTime: coordinator.timeline.anchorSessionTime)).nanoseconds
    }

    @Test func mpvAppliesEachChangeWhenItArrivesAndNothingCorrectsIt() async throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let clip = try fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-f", "lavfi", "-i",
                                        "sine=frequency=440:sample_rate=48000", "-t", "20", "-c:v", "libx264", "-preset", "ultrafast",
                                        "-g", "30", "-pix_fmt", "yuv420p", "-c:a", "aac"], output: "long-20s.mp4")
        let item = URL(fileURLWithPath: clip).lastPathComponent
        let logPath = fixtures.path("readings.jsonl")
        let log = try PresentationLog(path: logPath)
        defer { log.close() }
        // A long lead, so that a change's arrival and its effective instant are far apart.
        var configuration = RelayCoreConfiguration()
        configuration.minimumLead = 600_000_000
        let relay = try TestRelay(.inMemory, configuration: configuration)
        defer { relay.shutdown() }
        var builtinOptions = HeadlessPlayer.Options()
        builtinOptions.decodeAudio = false
        let builtin = try HeadlessPlayer(url: clip, options: builtinOptions)
        defer { builtin.close() }
        var options = MpvPlayer.Options()
        options.extraArguments = ["--vo=null", "--ao=null"]
        options.ipcPath = fixtures.path("mpv.sock")
        options.presentationLog = log
        let mpv = try await MpvPlayer.launch(file: clip, options: options)
        let follower = OnReceiptFollower(player: mpv)
        do {
            let host = try await Self.member("host", relay: relay, item: item, invitation: nil, coordinator: builtin.playbackCoordinator)
            _ = try await Self.member("mpv", relay: relay, item: item, invitation: host.invitation, coordinator: follower.coordinator)
            let guest = follower.coordinator
            try builtin.playbackCoordinator.transitionToItem(identifier: item)
            #expect(await awaitTimeline(of: guest) { $0.item == item })
            let other = try MpvConnection(path: mpv.ipcPath)
            defer { other.close() }
            try await Task.sleep(for: .milliseconds(500))

            // Play: mpv starts when the command arrives, not at the change's instant.
            builtin.playbackCoordinator.coordinateRateChange(to: 1)
            let started = try #require(try await Self.firstInstant(other, "pause") { $0.bool == false })
            #expect(await awaitTimeline(of: guest) { $0.rate == 1 })
            let effective = try Self.effectiveInstant(guest)
            #expect(started < effective - 300_000_000, "mpv started \(Double(effective - started) / 1e6) ms before the change's instant")

            // A seek while playing: mpv jumps when the command arrives.
            try await Task.sleep(for: .seconds(1))
            builtin.playbackCoordinator.coordinateSeek(to: ItemTime(nanoseconds: 12_000_000_000))
            let jumped = try #require(try await Self.firstInstant(other, "time-pos") { ($0.double ?? 0) >= 11.5 })
            #expect(await awaitTimeline(of: guest) { $0.anchorMediaTime.nanoseconds == 12_000_000_000 })
            let seekInstant = try Self.effectiveInstant(guest)
            #expect(jumped < seekInstant - 250_000_000, "mpv jumped \(Double(seekInstant - jumped) / 1e6) ms before the seek's instant")

            // Nothing corrects it: its readings (against the follower's timeline) stay ahead of
            // the timeline by what remained of the lead, by the same amount.
            try await Task.sleep(for: .seconds(1))
            let window = HostInstant.now().nanoseconds...(HostInstant.now().nanoseconds + 2_000_000_000)
            try await Task.sleep(for: .seconds(2.1))
            log.flush()
            let readings = try PresentationRecord.read(path: logPath)
                .filter { $0.reading == true && $0.still != true && window.contains($0.presentedNanoseconds) }
            let lateness = readings.map { Double($0.presentedNanoseconds - $0.scheduledNanoseconds) / 1e6 }
            #expect(lateness.count >= 10 && lateness.allSatisfy { $0 < -250 }, "presented − scheduled (ms): \(lateness)")
            // Each reading is one IPC round trip: on a loaded machine one in several is late by
            // tens of ms. The middle 80 % stay within 30 ms.
            let sorted = lateness.sorted()
            let middle = sorted.dropFirst(sorted.count / 10).dropLast(sorted.count / 10)
            #expect((middle.last ?? 0) - (middle.first ?? 0) < 30, "the error changed (ms): \(lateness.map { Int($0) })")
            let statistics = mpv.statistics
            #expect(statistics.nudges == 0 && statistics.correctiveSeeks == 0 && statistics.measurements == 0, "\(statistics)")

            // A pause: mpv pauses when the command arrives, on the group's frame.
            builtin.playbackCoordinator.coordinateRateChange(to: 0)
            let paused = try #require(try await Self.firstInstant(other, "pause") { $0.bool == true })
            #expect(await awaitTimeline(of: guest) { $0.rate == 0 })
            let pauseInstant = try Self.effectiveInstant(guest)
            #expect(paused < pauseInstant - 300_000_000, "mpv paused \(Double(pauseInstant - paused) / 1e6) ms before the pause's instant")
            let pausedAt = guest.timeline.anchorMediaTime.nanoseconds
            var position: Int64 = -1
            for _ in 0..<100 where abs(position - pausedAt) >= 34_000_000 {
                position = Int64(((try? await other.get("time-pos"))?.double ?? -1) * 1e9)
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(abs(position - pausedAt) < 34_000_000, "paused at \(position), the group at \(pausedAt)")
        } catch {
            await mpv.close()
            throw error
        }
        await mpv.close()
        #expect(!mpv.process.isRunning)
    }
}
