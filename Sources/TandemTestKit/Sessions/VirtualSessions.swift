import Foundation
import Tandem
import TandemClock
import TandemHarness
import TandemNet

/// Whole participants' sessions on a `VirtualRelayWorld`: each a real `GroupSession` (the shell
/// and its session machine: sealing, signing, opening, presences, the journal's records, the
/// ordered stream) over the world's joined link, on the world's embedded loop, with the relay's
/// clock read directly as the session clock. A `PlaybackCoordinator` that coordinates with one of
/// them runs on that loop too. Nothing runs by itself and nothing waits on real time: the
/// sessions move only when the test advances the world, deterministically.
///
/// Each participant joins as an accepted invite's does (`ActivityCenter.accept`: the link joins
/// first, then the session opens the welcome's activity), and joins the session with its
/// lifetime policy given rather than read asynchronously from the activity's metadata
/// (`GroupSession.join(lifetimePolicy:)`). Clocks have no offset nor drift: the loop's clock is
/// every participant's. Drive it from one thread.
public final class VirtualSessions<Activity: GroupActivity> {
    /// A participant: its session, its link in the world and its activity center.
    public struct Member: Sendable {
        /// Its session.
        public let session: GroupSession<Activity>
        /// Its link, and what it received.
        public let participant: VirtualRelayWorld.Participant
        /// The center its session belongs to.
        public let center: ActivityCenter
    }

    /// The relay's clock, which the world's loop runs on, as the clock sessions derive theirs
    /// from and as each participant's local clock.
    struct WorldClock: MonotonicDerivedClock {
        let clock: VirtualClock
        func instant() -> LocalInstant { clock.instant() }
        func hostInstant(atLocal local: LocalInstant) -> HostInstant { HostInstant(nanoseconds: local.nanoseconds) }
        func localInstant(atHost host: HostInstant) -> LocalInstant { LocalInstant(nanoseconds: host.nanoseconds) }
    }

    /// A connector no participant of the world uses: each joins through the world.
    struct NoConnector: RelayConnector {
        func join(_ request: RelayJoinRequest) async throws(RelayError) -> any RelayLink {
            throw RelayError(.unreachable, "a virtual session joins through its world")
        }
    }

    /// A millisecond, in the world's nanoseconds.
    public static var millisecond: Int64 { 1_000_000 }
    /// The world: the in-memory relay and the links, on one embedded loop.
    public let world: VirtualRelayWorld
    /// The session's invite; it names its creator (the first participant, the first operator)
    /// once that one has joined.
    public private(set) var invitation: Invitation
    /// The participants so far, in the order they came.
    public private(set) var members: [Member] = []
    private let activity: Activity
    private var seeds: SeededRandom

    /// A world for a session of `activity` whose relay checks joiners against a fresh invite's
    /// secret; `seed` fixes the world and the participants' keys.
    public init(activity: Activity, seed: UInt64 = 1) {
        let secret = SessionSecret()
        world = VirtualRelayWorld(seed: seed, sessionKey: secret.signingKey)
        invitation = Invitation(host: "virtual.invalid", port: 1, sessionID: world.sessionID, secret: secret)
        self.activity = activity
        seeds = SeededRandom(seed: seed ^ 0x5E55)
    }

    /// Makes `name` a participant: the first creates the session, the others accept the invite
    /// and take the activity the welcome holds; each then joins the session (unless `joining`
    /// is false: it waits, accepted, as a program that has not called `join()` yet).
    @discardableResult
    public func join(_ name: String, joining: Bool = true,
                     lifetimePolicy: GroupActivityMetadata.LifetimePolicy = .automatic) throws -> Member {
        let identity = SigningKeyPair(seed: (0..<32).map { _ in UInt8(truncatingIfNeeded: seeds.next()) })
        if members.isEmpty { invitation.creator = RelayAuthenticator.participantID(for: identity.publicKey) }
        let credentials = SessionCredentials(invitation: invitation, identity: identity)
        let participant = try world.join(name, activity: try credentials.sealedDescription(of: activity),
                                         presence: credentials.presence(name: name), identity: identity)
        let center = ActivityCenter()
        center.displayName = name
        center.localClock = WorldClock(clock: world.loop.virtualClock)
        center.configure(relay: NoConnector(), host: invitation.host, port: invitation.port,
                         sessionClock: .derived(from: WorldClock(clock: world.loop.virtualClock)))
        let session = try GroupSession<Activity>.accepted(link: participant.link, credentials: credentials,
                                                          invitation: invitation, center: center)
        if joining { session.join(lifetimePolicy: lifetimePolicy) }
        world.run()
        let member = Member(session: session, participant: participant, center: center)
        members.append(member)
        return member
    }

    /// Moves virtual time on by `milliseconds`, running all that falls due.
    public func run(for milliseconds: Int64) { world.advance(by: milliseconds * Self.millisecond) }

    /// Runs what is due now (what the calls since the last advance handed the loop).
    public func run() { world.run() }

    /// Stops the relay.
    public func shutdown() { world.shutdown() }
}
