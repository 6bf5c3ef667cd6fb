import Foundation
import Synchronization
import Tandem
import TandemClock

/// `relay-time-jump` events for the forward jumps of the relay's session time against this
/// participant's own clock (`GroupSession.sessionTimeJumps()`), at most a line an interval
/// (`TimeJumpTally`).
extension WatchParty {
    /// Follows the session's time jumps for as long as the session lasts.
    func followTimeJumps() async {
        let jumps = session.sessionTimeJumps()
        let shared = SharedTimeJumpTally()
        let say: @Sendable ([TimeJumpTally.Count]) -> Void = { [weak self] counts in
            for count in counts {
                self?.emit(.relayTimeJump(.init(order: count.order, aheadMilliseconds: Int(count.ahead.nanoseconds / 1_000_000),
                                                count: count.count)))
            }
        }
        await withDiscardingTaskGroup { flusher in
            flusher.addTask {
                while !Task.isCancelled {
                    let now = SystemClock().instant()
                    let wait = shared.tally.withLock { $0.nextFlush }.map { max(.milliseconds(1), $0 - now) } ?? TimeJumpTally.defaultInterval
                    try? await Task.sleep(for: .nanoseconds(wait.nanoseconds))
                    say(shared.tally.withLock { $0.flush(now: SystemClock().instant()) }.map { [$0] } ?? [])
                }
            }
            for await jump in jumps {
                say(shared.tally.withLock { $0.record(jump, now: SystemClock().instant()) })
            }
            flusher.cancelAll()
        }
    }
}

/// The tally that the jumps' reader and its flusher share.
private final class SharedTimeJumpTally: Sendable {
    let tally = Mutex(TimeJumpTally())
}
