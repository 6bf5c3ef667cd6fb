import Foundation
import Synchronization
@testable import Tandem
import TandemClock
import TandemNet
import TandemTestKit
import Testing

/// A probed session clock tells of its changes as its prober takes samples from a real relay's
/// time service, so that nobody polls it; a clock that never changes tells of nothing.
@Suite struct SessionClockPushIOTests {
    @Test func aProbedClockTellsOfTheSamplesItTakes() async throws {
        let relay = try RelayServer(address: try SocketAddress(host: "127.0.0.1", port: 0))
        relay.start()
        defer { relay.stop() }
        let local = SystemClock()
        let clock = try ProbedSessionClock(server: try SocketAddress(host: "127.0.0.1", port: relay.port), localClock: local)
        defer { clock.stop() }
        // Whether an estimate was there each time the clock told of a change.
        let (changes, telling) = AsyncStream.makeStream(of: Bool.self)
        let told = StreamRecording(changes)
        #expect(clock.observeChanges { telling.yield(clock.sessionTime(atLocal: local.instant().nanoseconds) != nil) })
        #expect(await told.awaitCount(3), "told of \(told.elements.count) samples")
        #expect(told.elements.last == true, "told of a change with no estimate to read")

        let derived = DerivedSessionClock(relayClock: local, localClock: local)
        #expect(!derived.observeChanges {})
    }
}
