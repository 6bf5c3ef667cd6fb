import Foundation
import Synchronization
import Testing
@testable import TandemNet

/// A link's waits (`join()`, a request, `leave()`, `end(reason:)`) each wait on a `OnceWaiter`:
/// they return once, whether the answer comes or whatever held the wait is dropped first (a loop
/// reset with the job still queued, as the suite's in-memory relays do at a test's end, left 18
/// departures suspended for good in one run, each reported as a leaked continuation).
@Suite(.timeLimit(.minutes(1))) struct OnceWaiterIOTests {
    @Test func aWaitWhoseHolderIsDroppedReturnsItsFallback() async {
        // Nothing ever calls resume(returning:): the job holding the waiter is dropped unrun.
        let held = Mutex<[@Sendable () -> Void]>([])
        let value = await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
            let waiter = OnceWaiter(continuation, ifDropped: -1)
            held.withLock { $0.append { waiter.resume(returning: 7) } }
            held.withLock { $0.removeAll() }
        }
        #expect(value == -1)
    }

    @Test func aWaitIsResumedOnceWithTheFirstAnswer() async {
        let value = await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
            let waiter = OnceWaiter(continuation, ifDropped: -1)
            // A second resume of a checked continuation would trap: these are no-ops, and so is
            // the fallback as the waiter goes.
            for answer in 1...3 { waiter.resume(returning: answer) }
        }
        #expect(value == 1)
    }

    /// Its check is the suite's time limit: without the fallback, the wait never returns.
    @Test func aDepartureWhoseHolderIsDroppedReturns() async {
        let held = Mutex<[@Sendable () -> Void]>([])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiter = OnceWaiter(continuation)
            held.withLock { $0.append { waiter.resume() } }
            held.withLock { $0.removeAll() }
        }
    }

    /// The real path: a link's join queued on a loop that is reset before running it.
    @Test func aJoinWhoseJobIsDroppedFailsAsClosed() async throws {
        let loop = try EventLoop(name: "tandem-test-dropped-join")
        let request = RelayJoinRequest(sessionID: UUID(), displayName: "ana",
                                       sessionKey: SigningKeyPair(seed: [UInt8](repeating: 7, count: 32)),
                                       createIfAbsent: true, activity: [])
        let link = RelayClientLink(request: request, configuration: RelayLinkConfiguration(), loop: loop,
                                   transport: NetworkRelayTransport(addresses: [try SocketAddress(host: "127.0.0.1", port: 9)], loop: loop))
        let join = Task { () -> RelayError? in
            do throws(RelayError) {
                try await link.join()
                return nil
            } catch {
                return error
            }
        }
        // The loop never runs (nothing connects to the address): the join's job waits in its
        // queue until the reset drops it.
        let deadline = ContinuousClock.now + .seconds(10)
        while loop.queuedTaskCount == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        #expect(loop.queuedTaskCount == 1)
        loop.reset()
        let error = await join.value
        #expect(error?.code == .closed)
    }
}
