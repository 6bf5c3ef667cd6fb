import Foundation
import Synchronization
import Tandem
import TandemNet
import TandemPlayback
import TandemWire

/// A participant of a scenario's session inside the bench process, joined with the host's
/// invite through the library, that makes many proposals: reports of its item (`.state`, which
/// change no timeline) sealed and ordered like any coordinator's, kept by the relay as
/// `.playback` records. It makes a long session's history for a late joiner to catch up on.
struct RawProposer {
    /// What it did.
    struct Outcome: Equatable {
        /// Proposals handed to the relay.
        var sent: Int
        /// From the first to the last, seconds.
        var seconds: Double
        /// Its own proposals that came back ordered before it left (how far the relay got).
        var echoed: Int
    }

    /// How many proposals it makes.
    var count: Int
    /// Proposals per second at most: under the relay's flood limit (20,000 frames a second per
    /// connection) and its fan-out budget (200,000 deliveries a second for the whole relay).
    var rate = 10_000.0
    /// Proposals sent back to back before pacing.
    var batch = 200
    /// Proposals sent and not yet back ordered at most: under the link's own queue cap
    /// (`RelayLinkConfiguration.maximumQueuedFrames`, 10,000), which a relay slower than `rate`
    /// (a loaded machine) would otherwise fill, failing the run.
    var window = 4_000
    /// The whole run, joining included, seconds at most.
    var timeout = 90.0

    /// Joins the session of `invite`, makes `count` proposals, waits (within the timeout) until
    /// the relay ordered them all, and leaves. Blocks the calling thread.
    func run(invite: String) throws -> Outcome {
        let invitation: Invitation
        do {
            invitation = try Invitation(parsing: invite)
        } catch {
            throw BenchmarkError("the raw client cannot read the invite: \(error)")
        }
        let result = Mutex<Result<Outcome, BenchmarkError>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let proposer = self
        let task = Task.detached {
            do {
                let outcome = try await proposer.propose(invitation)
                result.withLock { $0 = .success(outcome) }
            } catch let error as BenchmarkError {
                result.withLock { $0 = .failure(error) }
            } catch {
                result.withLock { $0 = .failure(BenchmarkError("the raw client failed: \(error)")) }
            }
            finished.signal()
        }
        guard finished.wait(timeout: .now() + timeout) == .success else {
            task.cancel()
            throw BenchmarkError("the raw client did not finish its \(count) proposals within \(Int(timeout)) s")
        }
        return try result.withLock { $0! }.get()
    }

    private func propose(_ invitation: Invitation) async throws -> Outcome {
        let center = ActivityCenter()
        center.displayName = "raw-client"
        center.configure(relay: NetworkRelayConnector(relays: invitation.relays), relays: invitation.relays)
        var sessions = center.sessions(for: WatchTogether.self).makeAsyncIterator()
        _ = try await center.accept(invitation)
        guard let session = await sessions.next() else { throw BenchmarkError("the raw client's session did not arrive") }
        session.join()
        for await state in session.$state.values {
            if case .joined = state { break }
            if case .invalidated(let reason) = state { throw BenchmarkError("the raw client could not join: \(reason.detail)") }
        }
        // Its own proposals come back ordered: counted, so that it leaves once the relay has them all.
        let me = session.localParticipant.id
        let echoed = EchoCount()
        let deliveries = session.orderedDeliveries()
        defer { session.leave() }
        // A child task counts the echoes while this one proposes.
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await delivery in deliveries where delivery.sender == me {
                    echoed.count.add(1, ordering: .relaxed)
                }
            }
            defer { group.cancelAll() }
            return try await proposeAll(session, echoed: echoed)
        }
    }

    /// Makes the proposals on `session`, paced, and waits until `echoed` counts them all.
    private func proposeAll(_ session: GroupSession<WatchTogether>, echoed: EchoCount) async throws -> Outcome {
        let body = Array(try JSONEncoder().encode(PlaybackProposal.state(item: session.activity.item, identity: nil, ready: true)))
        let clock = ContinuousClock()
        let start = clock.now
        var sent = 0
        while sent < count {
            try Task.checkCancellation()
            // Bounded by the caller's timeout, as the wait for the echoes below is.
            while sent - echoed.count.load(ordering: .relaxed) > window { try await Task.sleep(for: .milliseconds(5)) }
            for _ in 0..<min(batch, count - sent) {
                try session.sendOrdered(body, retention: .playback)
                sent += 1
            }
            let due = start + .seconds(Double(sent) / rate)
            if due > clock.now { try await Task.sleep(until: due, clock: clock) }
        }
        let elapsed = start.duration(to: clock.now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        // Until the relay ordered everything (bounded by the caller's timeout).
        while echoed.count.load(ordering: .relaxed) < sent {
            try await Task.sleep(for: .milliseconds(20))
        }
        return Outcome(sent: sent, seconds: seconds, echoed: echoed.count.load(ordering: .relaxed))
    }
}

/// The proposer's own proposals seen back ordered, counted by the task that reads them.
private final class EchoCount: Sendable {
    let count = Atomic<Int>(0)
}
