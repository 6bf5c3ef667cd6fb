import Foundation
import TandemWire

/// A session whose log a relay loaded empty while joins waited for it: the joins wait a little
/// longer for the stream's follower to deliver it, and are refused "no session" only then.
extension RelayCore {
    /// How long a join or resumption waits after its session's log was loaded empty, for the
    /// stream's follower to deliver the session, before it is refused "no session".
    ///
    /// A load's read of the log's end (`STREAM.MSG.GET` of the subject's last message) is
    /// answered from the stream leader's own store, while the entry that created the session
    /// was acknowledged to its creator's relay by a follower consumer that may run on another
    /// replica (nats-server places an R1 consumer on any peer of the stream). A leader that
    /// has not applied a committed entry yet (just elected, or its apply behind on a loaded
    /// machine) reads the log of a live session as empty; its stream information lags with it.
    /// The follower of this relay delivers every stored message, so the session's creation
    /// comes through it: a creator's hello goes on at once (its claim goes through the log,
    /// which decides), the others wait for it this long.
    public static let clusterAbsenceHold: Int64 = 3_000_000_000

    /// Greets again the hellos that waited for a session, those still greeting.
    mutating func greet(_ waiting: [(RelayConnectionID, RelayHello)], at now: Int64) -> [RelayDirective] {
        var directives: [RelayDirective] = []
        for (connection, hello) in waiting {
            guard case .greeting? = connections[connection]?.phase else { continue }
            directives += greet(connection, .hello(hello), at: now)
        }
        return directives
    }

    /// The hellos that wait for `session` to appear, answered once the replica holds it.
    mutating func clusterSessionAppeared(_ session: UUID, at now: Int64) -> [RelayDirective] {
        guard cluster?.confirming[session] != nil, sessions[session] != nil else { return [] }
        cluster?.confirming[session] = nil
        return greet(cluster?.loading.removeValue(forKey: session) ?? [], at: now)
    }

    /// The sessions whose hold ended without them: their hellos are refused "no session", and
    /// the sessions are no longer followed.
    mutating func clusterAbsencesConfirmed(at now: Int64) -> [RelayDirective] {
        guard let confirming = cluster?.confirming, !confirming.isEmpty else { return [] }
        var directives: [RelayDirective] = []
        for (session, until) in confirming where until <= now {
            cluster?.confirming[session] = nil
            directives += greet(cluster?.loading.removeValue(forKey: session) ?? [], at: now)
            if releaseClusterSession(session) { cluster?.output.released.append(session) }
        }
        return directives
    }
}
