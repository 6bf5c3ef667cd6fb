import Foundation
import Synchronization
import TandemPlayback

/// A streamed item's bytes, read from the session's holders (`SessionStreaming.item(identity:)`):
/// a `SeekableByteSource` for the built-in player, and what `MpvPlayer` serves to mpv (`MpvByteServer`).
///
/// `read(at:into:)` blocks until the block holding the offset has arrived and the item's ends
/// have been checked against its identity (`StreamReaderCore`), for as long as it takes: while no
/// holder is left, reads wait (`onSuspension` says so) until one comes back or `close()`.
/// Any thread may read; each read takes the item's lock only to consult its core.
///
/// A read waiting for a block tests `state` with `condition` held and waits on `condition`;
/// whatever may end the wait (an arrival, a suspension, `close()`) changes `state` first and then
/// broadcasts with `condition` held, so that no change falls between a test and a wait.
public final class StreamedItem: SeekableByteSource, Sendable {
    /// The item's content identity.
    public let identity: String
    /// Its size.
    public var size: Int64? { total }

    private let total: Int64
    private struct State {
        var core: StreamReaderCore
        var closed = false
        var wakeAt: Int64?
    }

    private let state: Mutex<State>
    /// Held by a waiting read while it tests `state`, and by whoever wakes it.
    private let condition = NSCondition()
    private let timers: DispatchQueue
    private let send: @Sendable (StreamMessage, UUID) -> Void
    private let now: @Sendable () -> Int64
    private let events: @Sendable (StreamEvent) -> Void

    init(core: StreamReaderCore, send: @escaping @Sendable (StreamMessage, UUID) -> Void, now: @escaping @Sendable () -> Int64,
         events: @escaping @Sendable (StreamEvent) -> Void) {
        self.identity = core.identity
        total = core.size
        state = Mutex(State(core: core))
        self.send = send
        self.now = now
        self.events = events
        timers = DispatchQueue(label: "tandem.streamed-item.timers")
    }

    /// The reader's counts so far.
    public var statistics: StreamReaderCore.Statistics { state.withLock { $0.core.statistics } }
    /// Whether no holder is left now.
    public var isSuspended: Bool { state.withLock { $0.core.isSuspended } }
    /// The holders, in the order they are asked.
    public var holders: [UUID] { state.withLock { $0.core.holders } }

    /// Reads up to `buffer.count` bytes at `offset`; 0 at the end. Throws once closed.
    public func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard buffer.count > 0 else { return 0 }
        while true {
            let read = state.withLock { state -> (StreamReaderCore.ReadOutcome, [StreamReaderCore.Directive])? in
                guard !state.closed else { return nil }
                return state.core.onRead(offset: offset, now: now())
            }
            guard let (outcome, directives) = read else { throw StreamingError.closed(identity) }
            let block: Int
            switch outcome {
            case .end:
                carryOut(directives)
                return 0
            case .available(let start, let bytes):
                carryOut(directives)
                let from = Int(offset - start)
                let count = min(buffer.count, bytes.count - from)
                bytes.withUnsafeBytes { source in
                    buffer.baseAddress!.copyMemory(from: source.baseAddress! + from, byteCount: count)
                }
                return count
            case .pending(let waited):
                block = waited
            }
            carryOut(directives)
            condition.lock()
            while !state.withLock({ $0.closed || $0.core.cachedBlock(block) != nil }) {
                // Woken by arrivals, suspensions and close; the deadline only guards a lost wake-up.
                _ = condition.wait(until: Date().addingTimeInterval(0.5))
            }
            condition.unlock()
        }
    }

    /// Ends the item: reads waiting and to come throw.
    public func close() {
        state.withLock { $0.closed = true }
        condition.withLock { condition.broadcast() }
    }

    /// A message from `sender` for this item.
    func receive(_ message: StreamMessage, from sender: UUID) {
        let directives = state.withLock { $0.core.onMessage(message, from: sender, now: now()) }
        carryOut(directives)
    }

    /// `holder` holds it (`host`: it started the session).
    func holder(_ holder: UUID, host: Bool) {
        let directives = state.withLock { $0.core.onHolder(holder, host: host, now: now()) }
        carryOut(directives)
    }

    /// `holder` is gone.
    func holderGone(_ holder: UUID) {
        let directives = state.withLock { $0.core.onHolderGone(holder, now: now()) }
        carryOut(directives)
    }

    private func tick() {
        let directives = state.withLock { state in
            state.wakeAt = nil
            return state.closed ? [] : state.core.onTick(now: now())
        }
        carryOut(directives)
    }

    private func carryOut(_ directives: [StreamReaderCore.Directive]) {
        for directive in directives {
            switch directive {
            case .send(let message, let holder):
                send(message, holder)
            case .blockArrived:
                condition.withLock { condition.broadcast() }
            case .suspended:
                condition.withLock { condition.broadcast() }
                events(.suspended(identity: identity))
            case .resumed:
                events(.resumed(identity: identity))
            case .rejectedHolder(let holder):
                events(.rejectedHolder(holder, identity: identity))
            case .wake(let at):
                let schedule = state.withLock { state -> Bool in
                    guard state.wakeAt.map({ at < $0 }) ?? true else { return false }
                    state.wakeAt = at
                    return true
                }
                if schedule {
                    let delay = max(0, at - now())
                    timers.asyncAfter(deadline: .now() + .nanoseconds(Int(min(delay, 10_000_000_000)))) { [weak self] in self?.tick() }
                }
            }
        }
    }
}

/// What streaming tells the program.
public enum StreamEvent: Sendable, Equatable {
    /// No holder of the item is left: its reads wait.
    case suspended(identity: String)
    /// A holder of the item is back.
    case resumed(identity: String)
    /// A holder's copy did not match the item's identity: it is asked no more.
    case rejectedHolder(UUID, identity: String)
}

/// A streaming failure.
public struct StreamingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public let description: String

    /// An error saying `description`.
    public init(description: String) { self.description = description }

    /// The item was closed while (or before) it was read.
    public static func closed(_ identity: String) -> StreamingError {
        StreamingError(description: "the streamed item \(identity) was closed")
    }

    /// An identity that names no size cannot be streamed.
    public static func noSize(_ identity: String) -> StreamingError {
        StreamingError(description: "the identity \(identity) names no size: it cannot be streamed")
    }

    /// A file to serve could not be opened.
    public static func unreadable(_ path: String, _ reason: String) -> StreamingError {
        StreamingError(description: "cannot serve \(path): \(reason)")
    }
}
