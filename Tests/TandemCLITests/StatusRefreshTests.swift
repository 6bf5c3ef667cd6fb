import Testing
import Synchronization
@testable import TandemCLI

/// The status line's refresh, drawn four times a second for as long as a session lasts.
@Suite struct StatusRefreshTests {
    /// 300,000 draws are nearly 21 hours of a status line; a draw that left its closure one
    /// conversion deeper every time would overflow the stack within these.
    @Test func drawsAtTheSameDepthHoweverLongItRuns() {
        let refresh = StatusRefresh()
        let draws = Mutex(0)
        refresh.start { draws.withLock { $0 += 1 } }
        for _ in 0..<300_000 { refresh.draw() }
        refresh.stop()
        refresh.draw()
        #expect(draws.withLock { $0 } == 300_000)
    }
}
