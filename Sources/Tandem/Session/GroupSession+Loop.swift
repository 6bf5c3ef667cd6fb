import Foundation
import Synchronization
import TandemClock
import TandemNet
import TandemWire

/// What a session hands on, and to whom: the readers of its sequences, confined to its loop.
struct SessionReaders {
    /// `messages(of:)` readers (and the streamed media's), by identity.
    var messages: [Int: MessageSubscriber] = [:]
    /// The one reader of the ordered records (the playback coordinator).
    var ordered: OrderedReader?
    /// Departure handlers called on the loop (the coordinator's), each until it returns false.
    var departureHandlers: [Int: @Sendable (UUID) -> Bool] = [:]
    var chat: [Int: AsyncStream<ChatMessage>.Continuation] = [:]
    var rejections: [Int: AsyncStream<Rejection>.Continuation] = [:]
    var notices: [Int: AsyncStream<GroupSessionEvent>.Continuation] = [:]
    var roleEvents: [Int: AsyncStream<SessionRoleEvent>.Continuation] = [:]
    var chainDivergences: [Int: AsyncStream<OrderedChainDivergence>.Continuation] = [:]
    var sessionTimeJumps: [Int: AsyncStream<SessionTimeJump>.Continuation] = [:]
}

/// A `messages(of:)` reader: the route it wants and where to put matching messages.
struct MessageSubscriber {
    let type: String
    let continuation: AsyncStream<InboundMessage>.Continuation
}

/// The one reader of the ordered deliveries: what to do with each, and how to end it.
struct OrderedReader: Sendable {
    let yield: @Sendable (OrderedRecord) -> Void
    let finish: @Sendable () -> Void
}

/// What the session's loop last decided, as the synchronous API reads it from other threads.
struct SessionView: Sendable {
    var isJoined = false
    var isInvalidated = false
    var link: (any RelayLink)?
    var known: [UUID: Participant] = [:]
    var former: [UUID: Participant] = [:]
    var rejected: [RejectionReason: Int] = [:]
    var clockSource: (any SessionClockSource)?
}

/// Whether this participant's departure has reached the relay, for `departureDelivered`.
final class DepartureSignal: Sendable {
    private struct State {
        var started = false
        var delivered = false
        var waiters: [AsyncStream<Never>.Continuation] = []
    }

    private let state = Mutex(State())

    /// A departure is on its way.
    func start() { state.withLock { $0.started = true } }

    /// It reached the relay (or the link closed).
    func delivered() {
        let waiters = state.withLock { state in
            state.delivered = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.finish() }
    }

    /// Returns once delivered (at once when no departure started), or after `timeout`.
    func wait(timeout: Duration) async {
        let (stream, continuation) = AsyncStream.makeStream(of: Never.self)
        let waits = state.withLock { state in
            guard state.started, !state.delivered else { return false }
            state.waiters.append(continuation)
            return true
        }
        guard waits else { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for await _ in stream {} }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }
}

// The shell's confinement to its loop, and how it carries out the machine's directives.
extension GroupSession {
    /// The loop's clock now, as the machine takes time.
    var now: LocalInstant { loop.clock.instant() }

    /// Runs `body` on the loop: at once when called there, else after what is queued (a call
    /// from elsewhere hops onto the loop, as swift-cluster-membership's `SWIMNIOShell` does).
    func onLoop(_ body: @escaping @Sendable () -> Void) {
        if loop.inLoop { body() } else { loop.execute(body) }
    }

    /// Runs `body` on the loop and returns what it returns, waiting for the loop when another
    /// thread drives it (`SerialEventLoop.runAndWait`): for the calls whose caller reads the
    /// decision at once. The loop never waits on another thread, so this cannot deadlock on a
    /// running loop; a loop that nothing drives (a test's embedded loop between its advances)
    /// runs it on the caller's thread.
    @discardableResult
    func onLoopAndWait<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result {
        // `body` does not throw, so neither does this.
        try! loop.runAndWait(body)
    }

    /// Takes an event of the link's, on the loop.
    func handle(_ event: RelayEvent) {
        loop.preconditionInLoop()
        perform(machine.onRelayEvent(event, at: now))
        reviewRoles()
        publishView()
    }

    /// Publishes what the machine decided for readers on other threads.
    func publishView() {
        let machine = machine
        let link = link
        let clockSource = clockSource
        view.withLock { view in
            view.isJoined = machine.isJoined
            view.isInvalidated = machine.isInvalidated
            view.link = machine.isInvalidated ? nil : link
            view.known = machine.known
            view.former = machine.former
            view.rejected = machine.rejected
            view.clockSource = clockSource
        }
    }

    /// Carries out the machine's directives after an event, in order.
    func perform(_ directives: [SessionMachine<Activity>.EventDirective]) {
        loop.preconditionInLoop()
        for directive in directives {
            switch directive {
            case .sendPresence(let recipients):
                sendPresence(to: recipients)
            case .publishActive(let active):
                $activeParticipants.storage.value = active
            case .publishAway(let away):
                $awayParticipants.storage.value = away
            case .publishJournal(let entries):
                attachmentsStorage.value = entries.map { entry in
                    GroupSessionJournal.Attachment(id: entry.id, name: entry.name, size: entry.size, owner: entry.owner,
                                                   contentType: entry.contentType, metadata: entry.metadata,
                                                   source: AttachmentSource(session: self))
                }
            case .publishAvailability(let availability):
                $relayAvailability.storage.value = availability
            case .announceDeparture(let id):
                for (key, handler) in readers.departureHandlers where !handler(id) {
                    readers.departureHandlers.removeValue(forKey: key)
                }
            case .deliver(let message, let route):
                for subscriber in readers.messages.values where subscriber.type == route {
                    subscriber.continuation.yield(message)
                }
            case .deliverOrdered(let record):
                readers.ordered?.yield(record)
            case .chat(let message):
                for reader in readers.chat.values { reader.yield(message) }
            case .showActivity(let activity):
                $activity.storage.value = activity
            case .reject(let rejection):
                for reader in readers.rejections.values { reader.yield(rejection) }
            case .roleEvent(let event):
                for reader in readers.roleEvents.values { reader.yield(event) }
            case .publishRoles(let roles):
                $roles.storage.value = roles
            case .sendRoleRecord(let change):
                _ = try? sendRoleRecord(change)
            case .announceAuthority(let statement):
                (link as? RelayClientLink)?.announce(statement)
            case .followClock:
                followClock()
            case .chainDivergence(let divergence):
                let found = OrderedChainDivergence(participant: divergence.participant, order: divergence.order)
                for reader in readers.chainDivergences.values { reader.yield(found) }
            case .sessionTimeAhead(let jump):
                for reader in readers.sessionTimeJumps.values { reader.yield(jump) }
            case .invalidate(let reason):
                // One removed leaves the relay at once: nothing it could send would be taken.
                if reason.code == .removed, let link { depart(link, reason: nil) }
                finish(reason)
            }
        }
    }

    /// Sends this participant's signed presence to `recipients`.
    func sendPresence(to recipients: Recipients) {
        try? link?.send(presence(to: recipients), to: recipients, reliable: true)
    }

    /// What assigning `activity` does (`SessionMachine.onActivityAssigned()`): once joined,
    /// proposes it to the group and shows it here at once; before joining, sets it here alone.
    /// Returns whether the session took the assignment.
    ///
    /// The group's order settles concurrent changes the same way for everyone: the last in
    /// order wins. Shown at once, this participant's change stands until it comes back in that
    /// order; a change from someone else ordered before it is not shown in between.
    func assign(_ activity: Activity) -> Bool {
        onLoopAndWait { [self] () -> Bool in
            switch machine.onActivityAssigned() {
            case .ignore:
                return true
            case .keepLocally:
                return false
            case .propose:
                // An assignment cannot throw: one that cannot be sent (the link just failed, the
                // session is ending) leaves the activity as it was, as the session's state then
                // says why.
                guard (try? sendOrdered(try ActivityChange.encode(activity), retention: .kept)) != nil else {
                    machine.onActivityProposalFailed()
                    return true
                }
                $activity.storage.value = activity
                return true
            }
        }
    }

    /// Registers a reader on the loop with `register`, unless the session is over, when
    /// `finish` ends it instead. Any thread.
    func addReader(_ register: @escaping @Sendable () -> Void, else finish: @escaping @Sendable () -> Void) {
        onLoop { [self] in
            if machine.isInvalidated { finish() } else { register() }
        }
    }

    /// A fresh identity for a reader.
    func readerID() -> Int { nextReader.add(1, ordering: .relaxed).oldValue }
}
