import Foundation
import TandemClock
import TandemNet
import TandemWire

/// A participant's key for a session and what it joins the relay with, for a session whose link
/// joins elsewhere than through `ActivityCenter` (a test's virtual relay): the sealer that signs
/// its activity description and presence is the one its session goes on signing with, so that
/// its counters carry on.
package struct SessionCredentials: Sendable {
    let bodies: BodySealer

    /// A participant's credentials for the session of `invitation`, with `identity` as its key.
    package init(invitation: Invitation, identity: SigningKeyPair) {
        bodies = BodySealer(secret: invitation.secret, sessionID: invitation.sessionID, identity: identity, epoch: invitation.epoch)
    }

    /// `activity`'s description, signed and sealed, as the participant that creates the session
    /// hands it to the relay.
    package func sealedDescription<Activity: GroupActivity>(of activity: Activity) throws -> [UInt8] {
        try ActivityDescription(activity).sealed(with: bodies)
    }

    /// The participant's presence as `name`, signed and sealed, as it joins with it.
    package func presence(name: String) -> [UInt8] { bodies.keptPresence(name: name) }
}

extension GroupSession {
    /// The session of `invitation` over `link`, which joined the relay with `credentials`
    /// elsewhere, as `ActivityCenter.accept(_:)` makes it: the activity opened from the
    /// welcome's, the session waiting for `join()` (or `join(lifetimePolicy:)`) on `link`'s loop.
    package static func accepted(link: any RelayLink, credentials: SessionCredentials, invitation: Invitation,
                                 center: ActivityCenter) throws -> GroupSession<Activity> {
        let welcome = link.welcome
        credentials.bodies.learnEpochs(from: welcome.orderedHistory)
        let activity = try ActivityDescription.open(welcome.activity, bodies: credentials.bodies).decode(Activity.self)
        return try GroupSession(center: center, activity: activity, invitation: invitation, bodies: credentials.bodies,
                                link: link, welcome: welcome)
    }
}
