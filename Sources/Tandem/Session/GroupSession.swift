import Foundation
import Synchronization
import TandemClock
import TandemNet

/// A live activity shared by a group, as SharePlay's `GroupSession`: join it, watch who is
/// active, send messages with a `GroupSessionMessenger`, share files with a
/// `GroupSessionJournal`, and leave (the others go on) or end it for everyone.
///
/// `state` and `activeParticipants` are observable without Combine:
/// `for await state in session.$state.values { ... }`.
///
/// It is safe to use from any thread or actor. Its decisions are a `SessionMachine`'s, made on
/// the participant's event loop (the loop its relay link runs on), which also reads the link's
/// events, one at a time, with no task in between; the class is `@unchecked Sendable` because
/// every field it changes is confined to that loop (asserted) or lives in `Published` storage
/// and a lock-held view for readers elsewhere. A call from another thread hops onto the loop;
/// the few whose caller reads the decision at once (`leave()`, `end()`, assigning `activity`)
/// wait for the loop to take it.
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
    /// included, and `$activity.values` observes each change. (Until this participant has
    /// joined, the assignment is its alone: it is what the session starts with.)
    @Published public var activity: Activity
    /// Whether this participant started it (`activate()`), rather than accepting an invite.
    public let isLocallyInitiated: Bool
    /// This participant.
    public let localParticipant: Participant
    /// The invite the session began with: pass it on (`invitation.url`) until an operator
    /// removes someone or rekeys, after which `currentInvitation` is the one that admits.
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
    /// Who runs the session: its operators and its policy (`SessionRoles`), as every
    /// participant holds them after the role records received so far. The creator is the first
    /// operator; `makeOperator(_:)`, `revokeOperator(_:)` and `setPolicy(_:)` change them, and
    /// `roleEvents()` tells what each change did.
    @Published public private(set) var roles: SessionRoles

    let center: ActivityCenter
    /// Signs and seals what this participant sends; opens and checks what it receives.
    let bodies: BodySealer
    /// The participant's loop: the link's, where the machine decides and the shell acts.
    let loop: any SerialEventLoop

    // Confined to the loop.
    var machine: SessionMachine<Activity>
    var link: (any RelayLink)?
    var clockSource: (any SessionClockSource)?
    var readers = SessionReaders()

    /// What the loop last decided, for the synchronous API on other threads.
    let view = Mutex(SessionView())
    /// Identities of readers (of messages, the chat, notices and the rest), from any thread.
    let nextReader = Atomic<Int>(0)
    /// The delivery of this participant's `leave()` or `end()` to the relay.
    let departure = DepartureSignal()
    let attachmentsStorage = PublishedStorage<[GroupSessionJournal.Attachment]>([])

    /// A session of `activity`; `bodies` holds this participant's own key for it (fresh for
    /// each session), whose public key certifies `localParticipant`'s identity. It runs on
    /// `link`'s loop, or (started here, with no link yet) on the loop its relay names.
    init(center: ActivityCenter, activity: Activity, invitation: Invitation, bodies: BodySealer,
         link: (any RelayLink)?, welcome: RelayWelcome?) throws(GroupSessionError) {
        self.center = center
        _activity = Published(wrappedValue: activity)
        self.invitation = invitation
        self.id = invitation.sessionID
        self.isLocallyInitiated = link == nil
        self.bodies = bodies
        let local = Participant(id: bodies.localID, displayName: center.displayName)
        self.localParticipant = local
        let creator = invitation.creator ?? (link == nil ? local.id : nil)
        machine = SessionMachine(localParticipant: local, bodies: bodies, isLocallyInitiated: link == nil, creator: creator)
        _roles = Published(wrappedValue: machine.roleBook.current)
        loop = try Self.participantLoop(link: link, connector: center.relay?.connector)
        $activity.storage.interceptAssignments { [weak self] activity in
            self?.assign(activity) ?? true
        }
        if let link, let welcome {
            // Taken before the session is handed out, so that it shows the welcome's activity and journal.
            onLoopAndWait { [self] in adopt(link, welcome: welcome) }
        }
    }

    /// The loop a session runs on: its link's, else the one its connector names for a new
    /// participant, else one of the process's shared participant loops.
    private static func participantLoop(link: (any RelayLink)?, connector: (any RelayConnector)?) throws(GroupSessionError) -> any SerialEventLoop {
        if let client = link as? RelayClientLink { return client.eventLoop }
        do throws(RelayError) {
            if let chooser = connector as? any ParticipantLoopConnector { return try chooser.participantLoop() }
            return try RelayClientLoops.participantLoop()
        } catch {
            throw GroupSessionError.from(error)
        }
    }

    /// Joins the session: connects to the relay (creating the session there if this participant
    /// started it) and tells the others. `state` becomes `.joined`, or `.invalidated` with the
    /// reason it could not.
    public func join() {
        onLoop { [self] in
            for directive in machine.onJoinRequested(at: now) {
                switch directive {
                case .prepare(let connect):
                    // The activity's metadata is read asynchronously, and a connection is made so:
                    // the bridge to Swift concurrency, at the public edge.
                    Task { await self.prepare(connect: connect) }
                }
            }
        }
    }

    /// Joins as `join()` does, with the activity's lifetime policy given instead of read from its
    /// metadata (which is asynchronous): for a session whose link has joined already (an
    /// accepted invite's), everything happens on the loop, with no task, so that a session on a
    /// test's embedded loop joins as that loop runs. A session still to connect joins as
    /// `join()` does.
    package func join(lifetimePolicy policy: GroupActivityMetadata.LifetimePolicy) {
        onLoop { [self] in
            guard link != nil else {
                join()
                return
            }
            for case .prepare in machine.onJoinRequested(at: now) {
                machine.onLifetimePolicy(policy)
                announce()
            }
        }
    }

    /// Leaves the session; the others go on. The initiator of an activity whose metadata's
    /// `lifetimePolicy` is `.endsWhenInitiatorLeaves` (as it was when the initiator joined) ends
    /// it for everyone instead, as SharePlay does.
    public func leave() {
        onLoopAndWait { [self] in depart(machine.onLeaveRequested(at: now)) }
    }

    /// Ends the session for everyone; each participant's session is invalidated with the reason.
    /// Under a policy that lets operators alone end it (`SessionPolicy.ending`), a participant
    /// that is no operator leaves instead (the others go on): `roles.mayEnd(_:)` with this
    /// participant's identity says which it will be.
    public func end() {
        let reason = GroupSessionError(.ended, "\(localParticipant) ended the session")
        onLoopAndWait { [self] in
            let permitted = machine.roleBook.current.mayEnd(localParticipant.id)
            depart(permitted ? machine.onEndRequested(reason, at: now) : machine.onLeaveRequested(at: now))
        }
    }

    /// Waits until this participant's `leave()` or `end()` has reached the relay (at once when
    /// neither was called), for at most `timeout`. A program about to exit calls it, so that the
    /// others hear of its departure from the relay, not from a connection that went silent.
    public func departureDelivered(timeout: Duration = .seconds(2)) async {
        await departure.wait(timeout: timeout)
    }

    /// Reads the lifetime policy, connects when asked, then announces this participant: the
    /// asynchronous part of `join()`, each result handed back to the loop.
    private func prepare(connect: Bool) async {
        let policy = await activity.metadata.lifetimePolicy
        onLoop { [self] in machine.onLifetimePolicy(policy) }
        guard connect else {
            onLoop { [self] in announce() }
            return
        }
        guard let relay = center.relay else {
            onLoop { [self] in perform(machine.onJoinFailed(GroupSessionError(.noRelay, "no relay is configured"))) }
            return
        }
        let description: [UInt8]
        do {
            description = try ActivityDescription(activity).sealed(with: bodies)
        } catch {
            let reason = error as? GroupSessionError ?? GroupSessionError(.encoding, "\(error)")
            onLoop { [self] in perform(machine.onJoinFailed(reason)) }
            return
        }
        var request = RelayJoinRequest(
            sessionID: id, displayName: localParticipant.displayName, identity: bodies.identity,
            sessionKey: invitation.secret.signingKey, createIfAbsent: isLocallyInitiated, activity: description,
            presence: bodies.keptPresence(name: localParticipant.displayName)
        )
        request.ticket = invitation.ticket
        do throws(RelayError) {
            let link: any RelayLink
            if let chooser = relay.connector as? any ParticipantLoopConnector {
                link = try await chooser.join(request, on: loop)
            } else {
                link = try await relay.connector.join(request)
            }
            center.relayAnswered(true)
            onLoop { [self] in
                adopt(link, welcome: link.welcome)
                announce()
            }
        } catch {
            if error.code == .unreachable { center.relayAnswered(false) }
            onLoop { [self] in perform(machine.onJoinFailed(GroupSessionError.from(error))) }
        }
    }

    /// Announces this participant to the group, once joining and linked.
    private func announce() {
        loop.preconditionInLoop()
        for directive in machine.onAnnounce(at: now) {
            switch directive {
            case .sendPresence(let recipients): sendPresence(to: recipients)
            case .publishActive(let active): $activeParticipants.storage.value = active
            case .publishJoined:
                publishView()
                state = .joined
                center.sessionJoined(self)
            }
        }
        reviewRoles()
        publishView()
    }

    /// Takes over a joined link: who is there, the journal and the ordered history so far, the
    /// session clock, and the link's events from now on, read on this loop. A link that joined
    /// after the session ended is left at once.
    private func adopt(_ link: any RelayLink, welcome: RelayWelcome) {
        loop.preconditionInLoop()
        guard !machine.isInvalidated else {
            depart(link, reason: nil)
            return
        }
        self.link = link
        // The relay of the invite's list that the link joined on (a joiner starts at a random one).
        clockSource = makeClockSource(relay: (link as? RelayClientLink)?.currentRelay ?? 0)
        perform(machine.onWelcome(welcome, at: now))
        publishView()
        read(link)
    }

    /// Reads `link`'s events: on this loop as the link emits them when it runs here; hopped
    /// here from the link's own loop, or from a task for a link of another kind.
    private func read(_ link: any RelayLink) {
        guard let client = link as? RelayClientLink else {
            Task { [self] in
                for await event in link.events { onLoop { [self] in handle(event) } }
            }
            return
        }
        if client.eventLoop === loop {
            client.takeEvents { [self] event in handle(event) }
        } else {
            client.eventLoop.execute { [self] in
                client.takeEvents { [self] event in onLoop { [self] in handle(event) } }
            }
        }
    }

    /// Carries out what leaving or ending decided.
    private func depart(_ directives: [SessionMachine<Activity>.DepartureDirective]) {
        loop.preconditionInLoop()
        for directive in directives {
            switch directive {
            case .invalidate(let reason): finish(reason)
            case .leaveRelay: if let link { depart(link, reason: nil) }
            case .endRelay(let reason): if let link { depart(link, reason: reason) }
            }
        }
    }

    /// Tells the relay this participant leaves (`reason` nil) or ends the session for everyone.
    func depart(_ link: any RelayLink, reason: String?) {
        departure.start()
        let departure = departure
        switch (link as? RelayClientLink, reason) {
        case (let client?, nil): client.beginLeave { departure.delivered() }
        case (let client?, let reason?): client.beginEnd(reason: reason) { departure.delivered() }
        case (nil, let reason):
            Task {
                if let reason { await link.end(reason: reason) } else { await link.leave() }
                departure.delivered()
            }
        }
    }

    /// Ends the session for this participant: `state` and every open sequence finish.
    func finish(_ reason: GroupSessionError) {
        loop.preconditionInLoop()
        center.sessionEnded(self)
        let finished = readers
        readers = SessionReaders()
        for subscriber in finished.messages.values { subscriber.continuation.finish() }
        finished.ordered?.finish()
        clockSource?.stop()
        clockSource = nil
        for reader in finished.chat.values { reader.finish() }
        for reader in finished.rejections.values { reader.finish() }
        for reader in finished.notices.values { reader.finish() }
        for reader in finished.roleEvents.values { reader.finish() }
        for reader in finished.chainDivergences.values { reader.finish() }
        for reader in finished.sessionTimeJumps.values { reader.finish() }
        publishView()
        activeParticipants = []
        awayParticipants = []
        state = .invalidated(reason: reason)
        $state.storage.finish()
        $activeParticipants.storage.finish()
        $awayParticipants.storage.finish()
        $roles.storage.finish()
        $activity.storage.finish()
        attachmentsStorage.finish()
    }
}
