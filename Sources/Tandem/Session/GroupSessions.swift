/// The sessions of one activity type as they arrive, from `Activity.sessions()`: one for each
/// `activate()` in this program, and one for each invite accepted with `ActivityCenter.accept`.
public struct GroupSessions<Activity: GroupActivity>: AsyncSequence, Sendable {
    /// A session of the activity.
    public typealias Element = GroupSession<Activity>
    /// Waiting for sessions never fails.
    public typealias Failure = Never

    private let center: ActivityCenter

    init(center: ActivityCenter) {
        self.center = center
    }

    /// Iterates the sessions as they arrive.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: center.sessions(of: Activity.self).makeAsyncIterator())
    }

    /// Hands out each session as it arrives.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<any AnySession>.Iterator

        /// The next session.
        public mutating func next() async -> GroupSession<Activity>? {
            await next(isolation: #isolation)
        }

        /// The next session, on the caller's actor.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> GroupSession<Activity>? {
            while let session = await base.next(isolation: actor) {
                if let typed = session as? GroupSession<Activity> { return typed }
            }
            return nil
        }
    }
}

extension ActivityCenter {
    /// The sessions of `Activity` on this center as they arrive (what `Activity.sessions()` does
    /// on the shared center).
    public func sessions<Activity: GroupActivity>(for type: Activity.Type) -> GroupSessions<Activity> {
        GroupSessions(center: self)
    }

    /// Starts `activity` for the group on this center (what `activity.activate()` does on the
    /// shared center).
    @discardableResult
    public func start<Activity: GroupActivity>(_ activity: Activity) async throws -> Bool {
        try await activate(activity)
    }
}
