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
        let told = Mutex<[Bool]>([])
        #expect(clock.observeChanges { told.withLock { $0.append(clock.sessionTime(atLocal: local.instant().nanoseconds) != nil) } })
        #expect(await eventually { told.withLock { $0.count } >= 3 }, "told of \(told.withLock { $0.count }) samples")
        #expect(told.withLock { $0.last } == true, "told of a change with no estimate to read")

        let derived = DerivedSessionClock(relayClock: local, localClock: local)
        #expect(!derived.observeChanges {})
    }
}
