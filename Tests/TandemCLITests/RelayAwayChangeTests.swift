import Foundation
import Testing
import TandemHarness
import TandemMpv
import TandemTestKit

/// A change pressed while the relay does not answer (stopped with SIGSTOP, as a frozen machine
/// would be) is held: refused with a line once it is 2 s old, or sent as the relay answers
/// again if it is still fresh then; never dropped silently, never applied stale. The same holds
/// for a key pressed in mpv's window.
@Suite(.serialized, .timeLimit(.minutes(2))) struct RelayAwayChangeProcessTests {
    /// The states of the relay `process` reported (`relay` events), in order.
    static func relayStates(_ process: WatchProcess) -> [String] {
        process.events.compactMap { event in if case .relay(let fields) = event.payload { fields.state } else { nil } }
    }

    /// The line a change held past its freshness is refused with.
    static let refusal = "not sent: the relay was away for more than 2 s"

    /// Plays, then stops `relay` (SIGSTOP, as a frozen machine) and waits until `host` says
    /// the relay is away.
    static func playThenStop(_ relay: ServeProcess, under host: WatchProcess) {
        #expect(host.send("play") != nil)
        #expect(host.waitUntil(timeout: 10) { $0.contains { $0.event == "timeline" && $0.change == "play" } }, "\(host.standardError)")
        #expect(kill(relay.pid, SIGSTOP) == 0)
        #expect(host.waitUntil(timeout: 5) { _ in relayStates(host).last == "unavailable" })
    }
    @Test func aStaleChangeIsRefusedAndAFreshOneGoesOutOnTheRelaysReturn() throws {
        let relay = try ServeProcess()
        defer {
            kill(relay.pid, SIGCONT)
            relay.stop()
        }
        let host = try WatchProcess.host(media: [SampleClip.h264.path], arguments: ["--relay", "127.0.0.1:\(relay.port)"])
        defer { host.kill() }
        #expect(host.invite() != nil, "\(host.standardError)")
        Self.playThenStop(relay, under: host)
        #expect(host.send("pause") != nil)
        #expect(host.waitUntil(timeout: 5) { $0.contains { $0.event == "error" && $0.message == Self.refusal } },
                "\(host.lines.suffix(5))")

        // Pressed while still away, and the relay back within 2 s: it goes out.
        #expect(host.send("seek 3") != nil)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(kill(relay.pid, SIGCONT) == 0)
        #expect(host.waitUntil(timeout: 10) { $0.contains { $0.event == "timeline" && $0.change == "seek 3.000" } }, "\(host.lines.suffix(5))")
        #expect(Self.relayStates(host).last == "available")
        // The refused pause never took effect: the seek kept the group playing.
        #expect(!host.events.contains { $0.event == "timeline" && $0.change == "pause" }, "\(host.lines)")
        #expect(host.events.last { $0.event == "timeline" }?.rate == 1)
        #expect(host.send("end") != nil)
        host.closeInput()
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
    }

    @Test func aKeyPressedInMpvIsHeldAsATypedChangeIs() async throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let relay = try ServeProcess()
        defer {
            kill(relay.pid, SIGCONT)
            relay.stop()
        }
        let socket = fixtures.path("host.sock")
        let host = try WatchProcess.host(media: [SampleClip.directory + "/watch-together.mp4"], mpv: .init(socket: socket),
                                         arguments: ["--relay", "127.0.0.1:\(relay.port)"])
        defer { host.kill() }
        #expect(host.invite() != nil, "\(host.standardError)")
        #expect(host.waitUntilJoined(), "\(host.standardError)")
        let mpv = try await MpvConnection.connect(path: socket, timeout: .seconds(20))
        defer { mpv.close() }
        Self.playThenStop(relay, under: host)
        _ = try await mpv.command(["keypress", "SPACE"])
        #expect(host.waitUntil(timeout: 5) { $0.contains { $0.event == "error" && $0.message == Self.refusal } },
                "\(host.lines.suffix(5))")
        #expect(kill(relay.pid, SIGCONT) == 0)
        #expect(host.waitUntil(timeout: 10) { _ in Self.relayStates(host).last == "available" }, "\(host.lines.suffix(5))")
        // The pause pressed in mpv never reached the group, late or otherwise, and mpv plays
        // with the group again.
        try await Task.sleep(for: .seconds(1))
        #expect(!host.events.contains { $0.event == "timeline" && $0.change == "pause" }, "\(host.lines)")
        var playing = false
        for _ in 0..<40 where !playing {
            playing = try await mpv.command(["get_property", "pause"]).value == .bool(false)
            if !playing { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(playing, "mpv stayed paused after the refusal")
        #expect(host.send("end") != nil)
        host.closeInput()
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
    }
}
