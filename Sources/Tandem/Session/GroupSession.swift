import Foundation
import Synchronization
import TandemNet

/// A live activity shared by a group, as SharePlay's `GroupSession`: join it, watch who is
/// active, send messages with a `GroupSessionMessenger`, share files with a
/// `GroupSessionJournal`, and leave (the others go on) or end it for everyone.
///
/// `state` and `activeParticipants` are observable without Combine:
/// `for await state in session.$state.values { ... }`.
///
/// It is safe to use from any thread or actor: its state lives behind a lock or in `Published`
/// storage (the wrappers' own fields are constants, hence `@unchecked`).
public final class GroupSession<Activity: GroupActivity>: AnySession, @unchecked Sendable, Identifiable {
    /// Where a session stands for this participant.
    public enum State: Sendable, CustomStringConvertible {
        /// Not joined yet.
        case waiting
        /// Joined: messages flow.
        case joined
        /// Over for this participant, with the reason (left, ended by someone, the relay lost).
        case invalidated(reason: GroupSessionError)

        /// A line for people to read.
        public var description: String {
            switch self {
            case .waiting: "waiting"
            case .joined: "joined"
            case .invalidated(let reason): "invalidated (\(reason))"
            }
        }
    }

    /// The session's identity.
    public let id: UUID
    /// The activity being shared. Assigning it proposes the new activity to the group, in the
    /// session's order, as SharePlay does: everyone's `activity` becomes it, late joiners'
    /// included, and `$activity.values` observes each change. (Before joining, the assignment
    /// is this participant's alone: it is what the session starts with.)
    @Published public var activity: Activity
    /// Whether this participant started it (`activate()`), rather than accepting an invite.
    public let isLocallyInitiated: Bool
    /// This participant.
    public let localParticipant: Participant
    /// The invite that lets others join: pass it on (`invitation.url`).
    public let invitation: Invitation

    /// Where the session stands for this participant.
    @Published public private(set) var state: State = .waiting
    /// The participants who have joined the activity, this one included once joined.
    @Published public private(set) var activeParticipants: Set<Participant> = []
    /// The others whose connection the relay saw closed by their peer (a process that exited or
    /// was killed, a dropped network): still in `activeParticipants`, departed within the
    /// relay's short grace period (3 s) unless they resume first, when they leave this set.
    @Published public private(set) var awayParticipants: Set<Participant> = []
    /// Whether the relay can order the session's changes now: `.unavailable` while a relay of a
    /// cluster has lost NATS (or the session's stream takes nothing), `.available` again once it
    /// is back. The session stays joined; what is sent meanwhile takes effect late, in order.
    @Published public private(set) var relayAvailability: RelayAvailability = .available

    let center: ActivityCenter
    /// Signs and seals what this participant sends; opens and checks what it receives.
    let bodies: BodySealer
    let core: Mutex<SessionCore>
    /// The delivery of this participant's `leave()` or `end()` to the relay, once either is called.
    private let departure = Mutex<Task<Void, Never>?>(nil)

    /// What the session keeps under its lock.
    struct SessionCore {
        var link: (any RelayLink)?
        var joinRequested = false
        var invalidated = false
        /// Everyone the relay says is connected, by identity.
        var known: [UUID: Participant] = [:]
        /// Those who left but may have signed records this participant receives, by identity.
        var former: [UUID: Participant] = [:]
        var active: Set<UUID> = []
        /// Those the relay reported away (`RelayEvent.participantAway`), by identity.
        var away: Set<UUID> = []
        var subscribers: [Int: MessageSubscriber] = [:]
        var nextSubscriber = 0
        var attachments: [UUID: GroupSessionJournal.Attachment] = [:]
        var attachmentOrder: [UUID] = []
        var clockSource: (any SessionClockSource)?
        /// Ordered records not yet taken by the coordinator (the history first), placeholders
        /// included.
        var ordered: [OrderedRecord] = []
        var orderedReader: OrderedReader?
        var departureReaders: [Int: AsyncStream<UUID>.Continuation] = [:]
        /// Bodies dropped on arrival, by reason.
        var rejected: [RejectionReason: Int] = [:]
        var rejectionReaders: [Int: AsyncStream<Rejection>.Continuation] = [:]
        /// The activity's metadata's `lifetimePolicy`, as read when this participant joined.
        var lifetimePolicy = GroupActivityMetadata.LifetimePolicy.automatic
        /// Who started the session: this participant, or the signer of the activity the relay
        /// welcomed it with (nil when that could not be read).
        var initiator: UUID?
        /// The readers of `notices` (`GroupSession+Notices.swift`).
        var noticeReaders: [Int: AsyncStream<GroupSessionEvent>.Continuation] = [:]
        /// This participant's activity changes sent but not yet back in the group's order.
        var pendingActivityChanges = 0
        /// The chat's last lines and readers (`GroupSession+Chat.swift`).
        var chat = SessionChat()
    }

    /// The one reader of the ordered deliveries: what to do with each, and how to end it.
    struct OrderedReader: Sendable {
        let yield: @Sendable (OrderedRecord) -> Void
        let finish: @Sendable () -> Void
    }

    /// A `messages(of:)` reader: the type name it wants and where to put matching messages.
    struct MessageSubscriber {
        let type: String
        let continuation: AsyncStream<InboundMessage>.Continuation
    }

    let attachmentsStorage = PublishedStorage<[GroupSessionJournal.Attachment]>([])

    /// A session of `activity`; `bodies` holds this participant's own key for it (fresh for
    /// each session), whose public key certifies `localParticipant`'s identity.
    init(center: ActivityCenter, activity: Activity, invitation: Invitation, bodies: BodySealer,
         link: (any RelayLink)?, welcome: RelayWelcome?) {
        self.center = center
        _activity = Published(wrappedValue: activity)
        self.invitation = invitation
        self.id = invitation.sessionID
        self.isLocallyInitiated = link == nil
        self.bodies = bodies
        self.localParticipant = Participant(id: bodies.localID, displayName: center.displayName)
        var core = SessionCore(link: link)
        core.initiator = link == nil ? bodies.localID : welcome.flatMap { ActivityDescription.signer(of: $0.activity, bodies: bodies) }
        self.core = Mutex(core)
        $activity.storage.interceptAssignments { [weak self] activity in
            self?.propose(activity) ?? true
        }
        if let link, let welcome {
            adopt(link, welcome: welcome)
        }
    }

    /// Joins the session: connects to the relay (creating the session there if this participant
    /// started it) and tells the others. `state` becomes `.joined`, or `.invalidated` with the
    /// reason it could not.
    public func join() {
        let proceed = core.withLock { core in
            defer { core.joinRequested = true }
            return !core.joinRequested && !core.invalidated
        }
        guard proceed else { return }
        Task { await self.connectAndJoin() }
    }

    /// Leaves the session; the others go on. The initiator of an activity whose metadata's
    /// `lifetimePolicy` is `.endsWhenInitiatorLeaves` (as it was when the initiator joined) ends
    /// it for everyone instead, as SharePlay does.
    public func leave() {
        if isLocallyInitiated, core.withLock({ $0.lifetimePolicy }) == .endsWhenInitiatorLeaves {
            end(GroupSessionError(.ended, "\(localParticipant), who started it, left: the activity ends with them"))
            return
        }
        let link = core.withLock { core -> (any RelayLink)? in
            guard !core.invalidated else { return nil }
            return core.link
        }
        invalidate(GroupSessionError(.left, "\(localParticipant) left the session"))
        if let link { departure.withLock { $0 = Task { await link.leave() } } }
    }

    /// Ends the session for everyone; each participant's session is invalidated with the reason.
    public func end() {
        end(GroupSessionError(.ended, "\(localParticipant) ended the session"))
    }

    /// Ends the session for everyone with `reason`.
    private func end(_ reason: GroupSessionError) {
        let link = core.withLock { core -> (any RelayLink)? in
            guard !core.invalidated else { return nil }
            return core.link
        }
        invalidate(reason)
        if let link { departure.withLock { $0 = Task { await link.end(reason: reason.detail) } } }
    }

    /// Waits until this participant's `leave()` or `end()` has reached the relay (at once when
    /// neither was called), for at most `timeout`. A program about to exit calls it, so that the
    /// others hear of its departure from the relay, not from a connection that went silent.
    public func departureDelivered(timeout: Duration = .seconds(2)) async {
        guard let delivery = departure.withLock({ $0 }) else { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await delivery.value }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    private func connectAndJoin() async {
        // Read once here, where the activity's (async) metadata can be: `leave()` is synchronous.
        let policy = await activity.metadata.lifetimePolicy
        core.withLock { $0.lifetimePolicy = policy }
        if core.withLock({ $0.link == nil }) {
            guard let relay = center.relay else {
                invalidate(GroupSessionError(.noRelay, "no relay is configured"))
                return
            }
            let description: [UInt8]
            do {
                description = try ActivityDescription(activity).sealed(with: bodies)
            } catch {
                invalidate(error as? GroupSessionError ?? GroupSessionError(.encoding, "\(error)"))
                return
            }
            let request = RelayJoinRequest(
                sessionID: id, displayName: localParticipant.displayName, identity: bodies.identity,
                sessionKey: invitation.secret.signingKey, createIfAbsent: isLocallyInitiated, activity: description,
                presence: bodies.keptPresence(name: localParticipant.displayName)
            )
            do {
                let link = try await relay.connector.join(request)
                center.relayAnswered(true)
                adopt(link, welcome: link.welcome)
            } catch {
                if error.code == .unreachable { center.relayAnswered(false) }
                invalidate(GroupSessionError.from(error))
                return
            }
        }
        guard let link = core.withLock({ $0.invalidated ? nil : $0.link }) else { return }
        try? link.send(presence(to: .everyone), to: .everyone, reliable: true)
        core.withLock { core in
            core.active.insert(localParticipant.id)
            return ()
        }
        publishActive()
        state = .joined
        center.sessionJoined(self)
    }

    /// Takes over a joined link: who is there, the journal and the ordered history so far, the
    /// session clock, and the link's events from now on.
    private func adopt(_ link: any RelayLink, welcome: RelayWelcome) {
        // The relay of the invite's list that the link joined on (a joiner starts at a random one).
        let clockSource = makeClockSource(relay: (link as? RelayClientLink)?.currentRelay ?? 0)
        let participants = welcome.participants.compactMap(verified)
        core.withLock { core in
            core.link = link
            core.clockSource = clockSource
            for (participant, departed) in participants {
                if departed { core.former[participant.id] = participant } else { core.known[participant.id] = participant }
            }
        }
        for record in welcome.attachments { attachmentAdded(record) }
        receiveOrderedHistory(welcome.orderedHistory)
        Task { await pump(link) }
    }

    private func pump(_ link: any RelayLink) async {
        for await event in link.events {
            handle(event, link: link)
        }
    }

    func activeSetLocked(_ core: SessionCore) -> Set<Participant> {
        Set(core.active.compactMap { core.known[$0] ?? ($0 == localParticipant.id ? localParticipant : nil) })
    }

    /// Ends the session for this participant: `state` and every open sequence finish.
    func invalidate(_ reason: GroupSessionError) {
        let subscribers = core.withLock { core -> [MessageSubscriber]? in
            guard !core.invalidated else { return nil }
            core.invalidated = true
            defer { core.subscribers.removeAll() }
            return Array(core.subscribers.values)
        }
        guard let subscribers else { return }
        center.sessionEnded(self)
        for subscriber in subscribers { subscriber.continuation.finish() }
        finishCoordination()
        finishChat()
        finishRejections()
        finishNotices()
        activeParticipants = []
        awayParticipants = []
        state = .invalidated(reason: reason)
        $state.storage.finish()
        $activeParticipants.storage.finish()
        $awayParticipants.storage.finish()
        $activity.storage.finish()
        attachmentsStorage.finish()
    }
}
