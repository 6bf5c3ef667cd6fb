import Foundation
import Testing
import TandemHarness
import TandemParty
import TandemClock
import TandemTestKit

/// A relay that stops answering is noticed within 2 s by every participant, as people would
/// want: each watch says the relay is unavailable ("reconnecting") at once, and available again
/// as soon as it answers, without waiting out the 5 s after which the link reconnects.
@Suite(.serialized) struct RelayQuietProcessTests {
    @Test func aStoppedRelayIsToldWithinTwoSecondsAndItsReturnAtOnce() throws {
        let relay = try ServeProcess()
        defer {
            kill(relay.pid, SIGCONT)
            relay.stop()
        }
        let host = try WatchProcess.host(media: [SampleClip.h264.path], arguments: ["--relay", "127.0.0.1:\(relay.port)"])
        defer { host.kill() }
        let invite = try #require(host.invite(), "\(host.standardError)")
        let ben = try WatchProcess.join(invite: invite, media: [SampleClip.h264.path], name: "ben")
        defer { ben.kill() }
        #expect(host.waitUntilJoined() && ben.waitUntilJoined(), "\(host.standardError)\n\(ben.standardError)")
        func relayStates(_ process: WatchProcess) -> [(state: String, at: Int64)] {
            process.events.compactMap { event in
                if case .relay(let fields) = event.payload { (fields.state, event.receivedNanoseconds) } else { nil }
            }
        }
        // Joined and pinging: then the relay stops, as a SIGSTOP or a frozen machine does.
        Thread.sleep(forTimeInterval: 1.2)
        let stopped = SystemClock().instant().nanoseconds
        #expect(kill(relay.pid, SIGSTOP) == 0)
        for process in [host, ben] {
            #expect(process.waitUntil(timeout: 5) { _ in relayStates(process).contains { $0.state == "unavailable" } }, "\(process.name)")
            let told = try #require(relayStates(process).first { $0.state == "unavailable" })
            // 1.5 s after the relay was last heard (its last answer, within half a second of the
            // stop); a little slack for a loaded machine.
            let seconds = Double(told.at - stopped) / 1e9
            print("\(process.name) told the relay was away \(seconds) s after the stop")
            #expect(seconds < 2.5, "\(process.name) told \(seconds) s after the stop")
            let reason = process.events.compactMap { event -> String? in if case .relay(let fields) = event.payload { fields.reason } else { nil } }.first
            #expect(reason == "reconnecting to the relay")
        }

        let resumed = SystemClock().instant().nanoseconds
        #expect(kill(relay.pid, SIGCONT) == 0)
        for process in [host, ben] {
            #expect(process.waitUntil(timeout: 5) { _ in relayStates(process).last?.state == "available" }, "\(process.name)")
            let back = try #require(relayStates(process).last { $0.state == "available" })
            #expect(Double(back.at - resumed) / 1e9 < 2, "\(process.name) heard it again \(Double(back.at - resumed) / 1e9) s after it resumed")
            #expect(process.waitForExit(timeout: 0.1) == nil, "\(process.name)'s watch goes on")
        }
    }
}
