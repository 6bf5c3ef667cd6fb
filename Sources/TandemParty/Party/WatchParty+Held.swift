import Foundation
import Synchronization
import Tandem
import TandemClock

/// Changes made while the relay is away: held, then sent on its return if still fresh, or
/// refused with a line (`HeldChanges`), never dropped silently.
extension WatchParty {
    /// What is held: the pure core's identifiers, and what each change does.
    struct HeldState: Sendable {
        var core = HeldChanges()
        var changes: [Int: @Sendable () throws -> Void] = [:]
    }

    /// Carries out `change` to the group now; while the relay is away
    /// (`RelayAvailability.unavailable`), holds it instead.
    func propose(_ change: @escaping @Sendable () throws -> Void) throws {
        guard case .unavailable = session.relayAvailability else {
            try change()
            return
        }
        held.withLock { state in
            let id = state.core.hold(at: Self.monotonicNow)
            state.changes[id] = change
        }
        later { [weak self] in
            try? await Task.sleep(for: .nanoseconds(HeldChanges.freshness.nanoseconds + 1_000_000))
            self?.expireHeldChanges()
        }
        // The relay may have come back between the look and the hold.
        if session.relayAvailability == .available { relayReturned() }
    }

    /// The relay answers again: the fresh changes go out, in order; the stale are refused.
    func relayReturned() {
        let (send, stale) = held.withLock { state -> ([@Sendable () throws -> Void], Int) in
            let (send, refuse) = state.core.relayReturned(at: Self.monotonicNow)
            let changes = send.compactMap { state.changes[$0] }
            state.changes = [:]
            return (changes, refuse.count)
        }
        for _ in 0..<stale { refuse(HeldChanges.refusal) }
        for change in send {
            do {
                try change()
            } catch {
                refuse("\(error)")
            }
        }
    }

    /// Refuses the held changes that are no longer fresh.
    private func expireHeldChanges() {
        let stale = held.withLock { state -> Int in
            let stale = state.core.expire(at: Self.monotonicNow)
            for id in stale { state.changes[id] = nil }
            return stale.count
        }
        for _ in 0..<stale { refuse(HeldChanges.refusal) }
    }

    private static var monotonicNow: LocalInstant { SystemClock().instant() }
}
