import Foundation
import Testing
import TandemHarness
import TandemParty
import TandemClock
import TandemTestKit

/// A relay that stops answering is noticed within 2 s, as people would want: the watch says the
/// relay is unavailable ("reconnecting") at once, and available again as soon as it answers,
/// without waiting out the 5 s after which the link reconnects.
@Suite(.serialized) struct RelayQuietProcessTests {
    @Test func aStoppedRelayIsToldWithinTwoSecondsAndItsReturnAtOnce() throws {
        let relay = try ServeProcess()
        defer {
            kill(relay.pid, SIGCONT)
            relay.stop()
        }
        let host = try WatchProcess.host(media: [SampleClip.h264.path], arguments: ["--relay", "127.0.0.1:\(relay.port)"])
        defer { host.kill() }
        #expect(host.invite() != nil, "\(host.standardError)")
        func relayStates() -> [(state: String, at: Int64)] {
            host.events.compactMap { event in
                if case .relay(let fields) = event.payload { (fields.state, event.receivedNanoseconds) } else { nil }
            }
        }
        // Joined and pinging: then the relay stops, as a SIGSTOP or a frozen machine does.
        Thread.sleep(forTimeInterval: 1.2)
        let stopped = SystemClock().now()
        #expect(kill(relay.pid, SIGSTOP) == 0)
        #expect(host.waitUntil(timeout: 5) { _ in relayStates().contains { $0.state == "unavailable" } })
        let told = try #require(relayStates().first { $0.state == "unavailable" })
        // 1.5 s after the relay was last heard (its last pong, within a ping interval of the stop);
        // a little slack for a loaded machine.
        #expect(Double(told.at - stopped) / 1e9 < 2.5, "told \(Double(told.at - stopped) / 1e9) s after the stop")
        let reason = host.events.compactMap { event -> String? in if case .relay(let fields) = event.payload { fields.reason } else { nil } }.first
        #expect(reason == "reconnecting to the relay")

        let resumed = SystemClock().now()
        #expect(kill(relay.pid, SIGCONT) == 0)
        #expect(host.waitUntil(timeout: 5) { _ in relayStates().last?.state == "available" })
        let back = try #require(relayStates().last { $0.state == "available" })
        #expect(Double(back.at - resumed) / 1e9 < 2, "heard again \(Double(back.at - resumed) / 1e9) s after it resumed")
        #expect(host.waitForExit(timeout: 0.1) == nil, "the watch goes on")
    }
}
