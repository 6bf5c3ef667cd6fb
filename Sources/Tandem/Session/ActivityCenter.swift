import Foundation
import Synchronization
import TandemClock
import TandemNet

/// Where a program's group activities meet a relay: Tandem's stand-in for the system service
/// that runs SharePlay on Apple platforms.
///
/// Configure it once with a relay (`configure(relay:host:port:)`); then `activate()` starts
/// sessions and `accept(_:)` joins them from invites, and both arrive in `Activity.sessions()`.
/// Programs use `ActivityCenter.shared`; tests make one per simulated participant.
public final class ActivityCenter: Sendable {
    /// The center that `GroupActivity.sessions()`, `activate()` and `GroupStateObserver` use.
    public static let shared = ActivityCenter()

    struct Relay: Sendable {
        let connector: any RelayConnector
        let host: String
        let port: UInt16
        let sessionClock: SessionClockSetting
        /// The relays after the first that invites name (`configure(relay:relays:sessionClock:)`).
        var furtherRelays: [RelayEndpoint] = []
    }

    private struct State {
        var relay: Relay?
        var displayName = ProcessInfo.processInfo.environment["USER"] ?? "someone"
        var inviteLifetime: TimeSpan?
        var localClock: any MonotonicDerivedClock = SystemClock()
        /// Sessions not yet handed to a `sessions()` reader, by activity identifier.
        var undelivered: [String: [any AnySession]] = [:]
        var readers: [String: [Int: AsyncStream<any AnySession>.Continuation]] = [:]
        var nextReader = 0
        /// How to open an accepted invite's activity, by identifier (registered by `sessions()`).
        var openers: [String: Opener] = [:]
        /// Invites accepted before any `sessions()` of their activity was iterated, by identifier:
        /// opened and delivered when one is.
        var pending: [String: [PendingAccept]] = [:]
        /// The sessions joined here and not yet invalidated, for `activate()` while in one.
        var live: [ObjectIdentifier: WeakSession] = [:]
    }

    typealias Opener = @Sendable (RelayWelcome, any RelayLink, Invitation, BodySealer, ActivityCenter) throws -> any AnySession

    /// An accepted invite whose activity type nobody has asked for yet.
    struct PendingAccept: Sendable {
        let link: any RelayLink
        let invitation: Invitation
        let bodies: BodySealer
    }

    /// A joined session, held weakly.
    struct WeakSession: Sendable {
        weak var session: (any AnySession)?
    }

    private let state = Mutex(State())
    let eligibility = PublishedStorage(false)

    /// A center with no relay yet.
    public init() {}

    /// Uses `connector` to reach the relay at `host`:`port` (the address written into invites).
    ///
    /// - Parameters:
    ///   - connector: how to reach the relay.
    ///   - host: the relay's host, as invites name it.
    ///   - port: the relay's port, as invites name it.
    ///   - sessionClock: how sessions learn the session clock: by probing the relay's time
    ///     service (the default), or directly when the relay runs in this process.
    public func configure(relay connector: any RelayConnector, host: String, port: UInt16,
                          sessionClock: SessionClockSetting = .probe) {
        state.withLock { $0.relay = Relay(connector: connector, host: host, port: port, sessionClock: sessionClock) }
        eligibility.value = true
    }

    /// Uses `connector` to reach the relays `relays` (the addresses written into invites, the
    /// first where new sessions are created; a repeated one counts once, and at most
    /// `RelayEndpoint.maximumCount` are named). An empty list is a programming error: it traps.
    ///
    /// - Parameters:
    ///   - connector: how to reach the relays (a `NetworkRelayConnector` over the same list).
    ///   - relays: the relays, as invites name them.
    ///   - sessionClock: how sessions learn the session clock (`configure(relay:host:port:sessionClock:)`).
    public func configure(relay connector: any RelayConnector, relays: [RelayEndpoint], sessionClock: SessionClockSetting = .probe) {
        precondition(!relays.isEmpty, "configure a relay at least")
        var relay = Relay(connector: connector, host: relays[0].host, port: relays[0].port, sessionClock: sessionClock)
        var unique: [RelayEndpoint] = []
        for endpoint in relays { unique = RelayEndpoint.appending(endpoint, to: unique) }
        relay.furtherRelays = Array(unique.dropFirst().prefix(RelayEndpoint.maximumCount - 1))
        state.withLock { $0.relay = relay }
        eligibility.value = true
    }

    /// This participant's local clock: the system's monotonic clock, or (as a benchmarking aid)
    /// one with an injected offset and drift, so that clock synchronisation has real work to do
    /// even when every participant runs on one machine. Set it before joining sessions.
    public var localClock: any MonotonicDerivedClock {
        get { state.withLock { $0.localClock } }
        set { state.withLock { $0.localClock = newValue } }
    }

    /// Forgets the relay: sessions can no longer be started or joined.
    public func removeRelay() {
        state.withLock { $0.relay = nil }
        eligibility.value = false
    }

    /// The name others see for this participant.
    public var displayName: String {
        get { state.withLock { $0.displayName } }
        set { state.withLock { $0.displayName = newValue } }
    }

    /// How long the invites of sessions this participant starts from now on admit joiners, nil
    /// (the default) for as long as the session lives. The relay checks each joiner's ticket
    /// (`Invitation.ticket`, signed with the creator's key) on its own clock; participants
    /// admitted before the expiry stay.
    public var inviteLifetime: TimeSpan? {
        get { state.withLock { $0.inviteLifetime } }
        set { state.withLock { $0.inviteLifetime = newValue } }
    }

    /// Whether group sessions are possible now: a relay is configured and was reachable.
    public var isEligible: Bool { eligibility.value }

    /// Records whether the relay answered, for `GroupStateObserver`.
    func relayAnswered(_ reachable: Bool) {
        let configured = state.withLock { $0.relay != nil }
        eligibility.value = configured && reachable
    }

    var relay: Relay? { state.withLock { $0.relay } }


    func activate<Activity: GroupActivity>(_ activity: Activity) async throws -> Bool {
        _ = try await activatedSession(activity)
        return true
    }

    /// Activates `activity` as `activate(_:)` does and returns the session it is in: a new one,
    /// handed to the activity type's `sessions()`, or the session of that type this participant
    /// is in already (whose activity it becomes).
    func activatedSession<Activity: GroupActivity>(_ activity: Activity) async throws -> GroupSession<Activity> {
        // In a session of this activity type already: its activity is replaced for the group, as
        // SharePlay replaces the current activity rather than starting a second session.
        let current = state.withLock { state in
            state.live.values.lazy.compactMap { $0.session as? GroupSession<Activity> }.first
        }
        if let current {
            current.activity = activity
            return current
        }
        guard let relay else { throw GroupSessionError(.noRelay, "no relay is configured: start one with `tandem serve`, or host one") }
        let first = RelayEndpoint(host: relay.host, port: relay.port)
        // Deduplicated and bounded by `configure`: the list is valid for an invite.
        var invitation = (try? Invitation(relays: [first] + relay.furtherRelays, sessionID: UUID(), secret: SessionSecret()))
            ?? Invitation(host: relay.host, port: relay.port, sessionID: UUID(), secret: SessionSecret())
        let bodies = BodySealer(secret: invitation.secret, sessionID: invitation.sessionID, identity: SigningKeyPair())
        // The creator is the first operator: every invitee learns it from the invite.
        invitation.creator = bodies.localID
        if let lifetime = inviteLifetime {
            let expiry = UInt64(max(0, Date().timeIntervalSince1970 + lifetime.seconds))
            let seconds = UInt32(min(Double(UInt32.max), max(1, lifetime.seconds.rounded(.up))))
            invitation.ticket = InviteTicket.make(sessionID: invitation.sessionID, expiry: expiry, lifetime: seconds, key: bodies.identity)
        }
        let session = try GroupSession(center: self, activity: activity, invitation: invitation, bodies: bodies, link: nil, welcome: nil)
        deliver(session, identifier: Activity.activityIdentifier)
        return session
    }

    /// Joins the session of `invitation` at its relay and hands it to the `sessions()` of its
    /// activity's type, waiting to be joined. Returns the session's activity identifier.
    ///
    /// It works whether or not `sessions()` is being iterated yet: a session accepted before is
    /// delivered to the first `sessions()` of its type, as SharePlay delivers sessions.
    ///
    /// The relay is reached through the configured connector; configure one for the invite's
    /// relay first (`configure(relay:host:port:)`).
    @discardableResult
    public func accept(_ invitation: Invitation) async throws -> String {
        guard let connector = relay?.connector else {
            throw GroupSessionError(.noRelay, "no relay is configured to reach \(invitation.host):\(invitation.port)")
        }
        // A fresh key, hence a fresh identity, for each session: kept in memory only.
        let bodies = BodySealer(secret: invitation.secret, sessionID: invitation.sessionID, identity: SigningKeyPair(),
                                epoch: invitation.epoch)
        var request = RelayJoinRequest(
            sessionID: invitation.sessionID, displayName: displayName, identity: bodies.identity,
            sessionKey: invitation.secret.signingKey, createIfAbsent: false, activity: [],
            presence: bodies.keptPresence(name: displayName)
        )
        request.ticket = invitation.ticket
        let link: any RelayLink
        do {
            link = try await connector.join(request)
        } catch {
            throw GroupSessionError.from(error)
        }
        // An invite of a later epoch opens the activity (sealed when the session began) with the
        // older keys the history hands on.
        bodies.learnEpochs(from: link.welcome.orderedHistory)
        let description: ActivityDescription
        do {
            description = try ActivityDescription.open(link.welcome.activity, bodies: bodies)
        } catch {
            await link.leave()
            throw error
        }
        let pendingAccept = PendingAccept(link: link, invitation: invitation, bodies: bodies)
        let opener = state.withLock { state -> Opener? in
            guard let opener = state.openers[description.identifier] else {
                // Nobody iterates this activity's sessions yet: the session waits for the first
                // `sessions()` of its type, as SharePlay delivers sessions received before.
                state.pending[description.identifier, default: []].append(pendingAccept)
                return nil
            }
            return opener
        }
        if let opener {
            do {
                deliver(try opener(link.welcome, link, invitation, bodies, self), identifier: description.identifier)
            } catch {
                await link.leave()
                throw error
            }
        }
        return description.identifier
    }

    /// Records a joined session (for `activate()` while in one).
    func sessionJoined(_ session: any AnySession) {
        state.withLock { $0.live[ObjectIdentifier(session)] = WeakSession(session: session) }
    }

    /// Forgets an invalidated session.
    func sessionEnded(_ session: any AnySession) {
        _ = state.withLock { $0.live.removeValue(forKey: ObjectIdentifier(session)) }
    }

    /// Registers `Activity` for accepted invites and returns its sessions as they arrive.
    func sessions<Activity: GroupActivity>(of type: Activity.Type) -> AsyncStream<any AnySession> {
        let (stream, continuation) = AsyncStream.makeStream(of: (any AnySession).self)
        let identifier = Activity.activityIdentifier
        let opener: Opener = { welcome, link, invitation, bodies, center in
            let description = try ActivityDescription.open(welcome.activity, bodies: bodies)
            let activity = try description.decode(Activity.self)
            return try GroupSession(center: center, activity: activity, invitation: invitation, bodies: bodies, link: link, welcome: welcome)
        }
        let (id, backlog, pending) = state.withLock { state in
            state.openers[identifier] = opener
            let id = state.nextReader
            state.nextReader += 1
            state.readers[identifier, default: [:]][id] = continuation
            return (id, state.undelivered.removeValue(forKey: identifier) ?? [], state.pending.removeValue(forKey: identifier) ?? [])
        }
        for session in backlog { continuation.yield(session) }
        for accepted in pending {
            // Decoded now that the type is known; one that does not decode as it is dropped.
            if let session = try? opener(accepted.link.welcome, accepted.link, accepted.invitation, accepted.bodies, self) {
                continuation.yield(session)
            } else {
                Task { await accepted.link.leave() }
            }
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.readers[identifier]?.removeValue(forKey: id) }
        }
        return stream
    }

    private func deliver(_ session: any AnySession, identifier: String) {
        let readers = state.withLock { state in
            let readers = Array(state.readers[identifier, default: [:]].values)
            if readers.isEmpty { state.undelivered[identifier, default: []].append(session) }
            return readers
        }
        for reader in readers { reader.yield(session) }
    }
}

/// A session of any activity type, as the center keeps them before handing them out.
protocol AnySession: AnyObject, Sendable {}

/// An activity as the relay keeps it for joiners: its identifier and its JSON, sealed.
struct ActivityDescription: Codable {
    var identifier: String
    var activity: Data

    init<Activity: GroupActivity>(_ activity: Activity) throws {
        identifier = Activity.activityIdentifier
        do {
            self.activity = try JSONEncoder().encode(activity)
        } catch {
            throw GroupSessionError(.encoding, "cannot encode the activity: \(error)")
        }
    }

    func sealed(with bodies: BodySealer) throws -> [UInt8] {
        bodies.seal(Array(try JSONEncoder().encode(self)), kind: .activity, path: .journal)
    }

    /// Who signed the description in `sealed` (whoever created the session), or nil when it does
    /// not open as one.
    static func signer(of sealed: [UInt8], bodies: BodySealer) -> UUID? {
        let expectation = BodySealer.Expectation(path: .journal, kinds: [.activity], sender: nil, attachment: nil, checksReplay: false)
        guard case .success(let body) = bodies.open(sealed, expecting: expectation) else { return nil }
        return body.sender
    }

    /// The description in `sealed`: signed by a participant (whoever created the session) for
    /// this session, as an activity.
    static func open(_ sealed: [UInt8], bodies: BodySealer) throws -> ActivityDescription {
        let expectation = BodySealer.Expectation(path: .journal, kinds: [.activity], sender: nil, attachment: nil, checksReplay: false)
        let plaintext: [UInt8]
        switch bodies.open(sealed, expecting: expectation) {
        case .success(let body): plaintext = body.payload
        case .failure(.malformed):
            throw GroupSessionError(.encoding, "the session's activity cannot be read with this invite's secret")
        case .failure(let reason):
            throw GroupSessionError(.encoding, "the session's activity is not signed for this session (\(reason))")
        }
        do {
            return try JSONDecoder().decode(ActivityDescription.self, from: Data(plaintext))
        } catch {
            throw GroupSessionError(.encoding, "the session's activity is malformed: \(error)")
        }
    }

    func decode<Activity: GroupActivity>(_ type: Activity.Type) throws -> Activity {
        do {
            return try JSONDecoder().decode(Activity.self, from: activity)
        } catch {
            throw GroupSessionError(.encoding, "the session's \(identifier) activity does not decode: \(error)")
        }
    }
}
