import Foundation
import Synchronization
@testable import Tandem
import TandemClock
import TandemNet
import TandemTestKit
import TandemWire
import TandemHarness

/// Whole participants' sessions on a `VirtualRelayWorld`: each a real `GroupSession` (the shell
/// and its `SessionMachine`, sealing, signing, opening) over the world's joined link, on the
/// world's embedded loop, with the relay's clock read directly as the session clock. Nothing runs
/// by itself and nothing waits on real time: the session moves only when the test advances the
/// world, so that what it asserts holds deterministically.
///
/// Each participant joins as an accepted invite's does (`ActivityCenter.accept`: the link joins
/// first, then the session opens the welcome's activity and joins on it), its lifetime policy
/// given rather than read asynchronously from the activity's metadata
/// (`GroupSession.join(lifetimePolicy:)`). Clocks have no offset nor drift here: the loop's
/// clock is every participant's.
final class VirtualSessions: @unchecked Sendable {
    /// A participant: its session and its link in the world.
    struct Member {
        let session: GroupSession<Quiz>
        let participant: VirtualRelayWorld.Participant
        let center: ActivityCenter
    }

    /// The relay's clock, which the world's loop runs on, as a clock sessions derive from.
    struct WorldClock: MonotonicDerivedClock {
        let clock: VirtualClock
        func now() -> Int64 { clock.now() }
        func monotonicTime(atLocal localTime: Int64) -> Int64 { localTime }
        func localTime(atMonotonic monotonicTime: Int64) -> Int64 { monotonicTime }
    }

    /// A connector no participant of the world uses: each joins through the world.
    struct NoConnector: RelayConnector {
        func join(_ request: RelayJoinRequest) async throws(RelayError) -> any RelayLink {
            throw RelayError(.unreachable, "a virtual session joins through its world")
        }
    }

    static let ms: Int64 = 1_000_000
    let world: VirtualRelayWorld
    let secret: SessionSecret
    let invitation: Invitation
    private(set) var members: [Member] = []
    private var seeds: SeededRandom

    /// A world whose relay checks joiners against the invite's secret; `seed` fixes the
    /// participants' keys.
    init(seed: UInt64 = 1) {
        secret = SessionSecret()
        world = VirtualRelayWorld(seed: seed, sessionKey: secret.signingKey)
        invitation = Invitation(host: "virtual.invalid", port: 1, sessionID: world.sessionID, secret: secret)
        seeds = SeededRandom(seed: seed ^ 0x5E55)
    }

    /// Makes `name` a participant: the first creates the session with `activity`, the others
    /// accept the invite and take the activity the welcome holds; each then joins the session
    /// (unless `joining` is false: it waits, accepted, as a program that has not called
    /// `join()` yet).
    @discardableResult
    func join(_ name: String, activity: Quiz = Quiz(topic: "rivers"), joining: Bool = true,
              lifetimePolicy: GroupActivityMetadata.LifetimePolicy = .automatic) throws -> Member {
        let identity = SigningKeyPair(seed: (0..<32).map { _ in UInt8(truncatingIfNeeded: seeds.next()) })
        let bodies = BodySealer(secret: secret, sessionID: world.sessionID, identity: identity)
        let participant = try world.join(name, activity: try ActivityDescription(activity).sealed(with: bodies),
                                         presence: bodies.keptPresence(name: name), identity: identity)
        let center = ActivityCenter()
        center.displayName = name
        center.localClock = WorldClock(clock: world.loop.virtualClock)
        center.configure(relay: NoConnector(), host: invitation.host, port: invitation.port,
                         sessionClock: .derived(from: WorldClock(clock: world.loop.virtualClock)))
        let welcome = participant.welcome
        bodies.learnEpochs(from: welcome.orderedHistory)
        let opened = try ActivityDescription.open(welcome.activity, bodies: bodies).decode(Quiz.self)
        let session = try GroupSession(center: center, activity: opened, invitation: invitation, bodies: bodies,
                                       link: participant.link, welcome: welcome)
        if joining { session.join(lifetimePolicy: lifetimePolicy) }
        world.run()
        let member = Member(session: session, participant: participant, center: center)
        members.append(member)
        return member
    }

    /// Moves virtual time on by `milliseconds`, running all that falls due.
    func run(for milliseconds: Int64) { world.advance(by: milliseconds * Self.ms) }

    /// Stops the relay.
    func shutdown() { world.shutdown() }
}
