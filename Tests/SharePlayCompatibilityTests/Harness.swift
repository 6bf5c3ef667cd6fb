// The test harness, not the patterns: it configures the relay and plays the other participants.
// The pattern files beside it hold GroupActivities code as a SharePlay program has it.
import Foundation
import Synchronization
import Tandem
import TandemTestKit

/// One in-memory relay for the whole target, configured on `ActivityCenter.shared` (which the
/// SharePlay code uses, as it uses the system's), and centers for the other participants.
enum Harness {
    private static let relay = Mutex<TestRelay?>(nil)

    /// Configures the shared center with the in-memory relay (once) and returns the relay.
    static func configureShared() throws -> TestRelay {
        try relay.withLock { relay in
            if let relay { return relay }
            let started = try TestRelay(.inMemory)
            ActivityCenter.shared.displayName = "host"
            ActivityCenter.shared.configure(relay: started.connector, host: started.host, port: started.port)
            relay = started
            return started
        }
    }

    /// Another participant, named `name`, on its own center.
    static func participant(_ name: String) throws -> ActivityCenter {
        let relay = try configureShared()
        let center = ActivityCenter()
        center.displayName = name
        center.configure(relay: relay.connector, host: relay.host, port: relay.port)
        return center
    }

    /// `center` accepts `invitation`; returns the session, not yet joined (the pattern joins it).
    static func accept<Activity: GroupActivity>(_ invitation: Invitation, on center: ActivityCenter,
                                                as type: Activity.Type) async throws -> GroupSession<Activity> {
        try await center.accept(invitation)
        var sessions = center.sessions(for: type).makeAsyncIterator()
        guard let session = await sessions.next() else { throw HarnessError("no session arrived") }
        return session
    }

    /// `center` accepts `invitation` and joins the session; returns it once joined.
    static func join<Activity: GroupActivity>(_ invitation: Invitation, on center: ActivityCenter,
                                              as type: Activity.Type) async throws -> GroupSession<Activity> {
        let session = try await accept(invitation, on: center, as: type)
        session.join()
        try await until(session.$state.values, "joined") { if case .joined = $0 { true } else { false } }
        return session
    }
}

/// A harness failure, with what it waited for.
struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Waits until `sequence` yields an element for which `condition` holds, for at most 10 s
/// (a bound, not a pace: it returns as soon as the element arrives); returns that element.
@discardableResult
func until<S: AsyncSequence & Sendable>(_ sequence: S, _ what: String, _ condition: @escaping @Sendable (S.Element) -> Bool)
    async throws -> S.Element where S.Element: Sendable {
    let found = await withTaskGroup(of: S.Element?.self) { group in
        group.addTask {
            do {
                for try await element in sequence where condition(element) { return element }
            } catch {}
            return nil
        }
        group.addTask {
            try? await Task.sleep(for: .seconds(10))
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
    guard let found else { throw HarnessError("\(what) did not happen within 10 s") }
    return found
}

/// What a pattern prints instead of drawing UI, kept for the test to read.
final class Screen: Sendable {
    private let lines = Mutex<[String]>([])
    private let changes = AsyncStream<Void>.makeStream(bufferingPolicy: .unbounded)

    /// Prints `line` and keeps it.
    func show(_ line: String) {
        print(line)
        lines.withLock { $0.append(line) }
        changes.continuation.yield()
    }

    /// Everything shown so far.
    var shown: [String] { lines.withLock { $0 } }

    /// Waits until a shown line satisfies `condition`.
    func waitFor(_ what: String, _ condition: @escaping @Sendable (String) -> Bool) async throws {
        if shown.contains(where: condition) { return }
        let stream = changes.stream
        try await until(stream, what) { [self] _ in shown.contains(where: condition) }
    }
}
