import Foundation
import TandemMedia
import TandemTestKit
import TandemClock

/// Every presentation with its item, its frame's number (read from the pixels) and instants;
/// a test waits for what it needs with `wait(timeout:until:)`, woken by each presentation (no
/// polling), and bounded in time.
final class ItemRecorder: VideoSink, @unchecked Sendable {
    struct Entry {
        let item: String
        let pts: Int64
        let number: Int
        let presentation: Presentation
    }

    private let condition = NSCondition()
    private var entries: [Entry] = []

    func present(_ frame: VideoFrame, _ presentation: Presentation) {
        let number = (try? FrameNumber.read(frame)) ?? -1
        condition.lock()
        entries.append(Entry(item: presentation.item, pts: frame.presentationTime, number: number, presentation: presentation))
        condition.broadcast()
        condition.unlock()
    }

    var all: [Entry] {
        condition.lock()
        defer { condition.unlock() }
        return entries
    }

    /// Waits until `predicate` holds for the entries so far, or `timeout` seconds; returns whether it held.
    @discardableResult
    func wait(timeout: Double, until predicate: ([Entry]) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(entries) {
            guard condition.wait(until: deadline) else { return predicate(entries) }
        }
        return true
    }
}

/// Stall changes as a player's handler raises them, waited for in the same way.
final class StallRecorder: @unchecked Sendable {
    private let condition = NSCondition()
    private var changes: [PlayerStall] = []

    func record(_ change: PlayerStall) {
        condition.lock()
        changes.append(change)
        condition.broadcast()
        condition.unlock()
    }

    var all: [PlayerStall] {
        condition.lock()
        defer { condition.unlock() }
        return changes
    }

    /// Waits until `count` changes have been raised, or `timeout` seconds; returns whether they were.
    @discardableResult
    func wait(forCount count: Int, timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while changes.count < count {
            guard condition.wait(until: deadline) else { return changes.count >= count }
        }
        return true
    }
}
