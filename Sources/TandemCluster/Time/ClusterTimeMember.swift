import Foundation
import TandemNet

/// A relay of a cluster as the cluster's time protocol knows it: who it is, since when it runs,
/// where its time service answers, and whether its clock already keeps the cluster's time.
public struct ClusterTimeMember: Sendable, Hashable, Codable {
    /// A name unique in the cluster (1…64 printable ASCII characters).
    public var id: String
    /// When the relay started, in nanoseconds of the wall clock since 1970: the order of age.
    /// Every relay compares the same announced numbers, so all agree on who is oldest even when
    /// the wall clocks of their machines disagree.
    public var started: Int64
    /// The UDP address of its time service (a relay's shared port), as other relays reach it.
    public var timeService: SocketAddress
    /// Whether its clock keeps the cluster's time: it is the authority, or it has followed one.
    public var ready: Bool

    /// A member.
    public init(id: String, started: Int64, timeService: SocketAddress, ready: Bool = false) {
        self.id = id
        self.started = started
        self.timeService = timeService
        self.ready = ready
    }

    /// Whether this member ranks before `other` for authority: started earlier, the id breaking
    /// a tie.
    public func isOlder(than other: ClusterTimeMember) -> Bool {
        (started, id) < (other.started, other.id)
    }

    private enum CodingKeys: String, CodingKey { case id, started, timeService = "time", ready }

    /// Decodes a member; the time service is `HOST:PORT`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        started = try container.decode(Int64.self, forKey: .started)
        let address = try container.decode(String.self, forKey: .timeService)
        do {
            timeService = try SocketAddress(parsing: address)
        } catch {
            throw DecodingError.dataCorruptedError(forKey: .timeService, in: container, debugDescription: "not HOST:PORT: \(error)")
        }
        ready = try container.decode(Bool.self, forKey: .ready)
    }

    /// Encodes a member; the time service as `HOST:PORT`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(started, forKey: .started)
        try container.encode(timeService.description, forKey: .timeService)
        try container.encode(ready, forKey: .ready)
    }
}

/// What one relay tells the others over core NATS, on `ClusterTimeConfiguration.subject`.
///
/// The payload is a small JSON object: `{"v":1,"kind":"hello","member":{…},"authority":"ID"}`.
/// NATS is trusted as a relay is (SECURITY.md); a payload that does not decode, names another
/// version, or is out of bounds is counted and ignored, and the relay goes on.
public struct ClusterTimeAnnouncement: Sendable, Hashable, Codable {
    /// Why it is sent.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// A relay that starts, or came back to NATS: everyone answers with a heartbeat at once.
        case hello
        /// The periodic proof of life, also the answer to a hello.
        case heartbeat
        /// A relay that stops on purpose: it is gone now, not after the liveness timeout.
        case goodbye
    }

    /// The protocol's version; others are ignored.
    public static let version = 1
    /// The largest payload accepted.
    public static let maximumSize = 1_024

    /// The version this announcement speaks.
    public var v: Int
    /// Why it is sent.
    public var kind: Kind
    /// The sender.
    public var member: ClusterTimeMember
    /// The authority the sender follows or is, if it has one (for reports; never trusted for the
    /// choice, which each relay makes from what it heard).
    public var authority: String?

    /// An announcement of the current version.
    public init(kind: Kind, member: ClusterTimeMember, authority: String?) {
        v = ClusterTimeAnnouncement.version
        self.kind = kind
        self.member = member
        self.authority = authority
    }

    /// The payload on NATS.
    public func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // Encoding these fields cannot fail.
        return Array((try? encoder.encode(self)) ?? Data())
    }

    /// Decodes and checks a payload; nil with the reason for anything out of bounds.
    public static func decode(_ payload: [UInt8]) -> Result<ClusterTimeAnnouncement, ClusterTimeError> {
        guard payload.count <= maximumSize else {
            return .failure(.malformedAnnouncement("\(payload.count) bytes, above \(maximumSize)"))
        }
        let announcement: ClusterTimeAnnouncement
        do {
            announcement = try JSONDecoder().decode(ClusterTimeAnnouncement.self, from: Data(payload))
        } catch {
            return .failure(.malformedAnnouncement("not an announcement: \(error)"))
        }
        guard announcement.v == version else {
            return .failure(.malformedAnnouncement("version \(announcement.v), not \(version)"))
        }
        guard isValidID(announcement.member.id), announcement.authority.map(isValidID) ?? true else {
            return .failure(.malformedAnnouncement("an id is not 1…64 printable ASCII characters"))
        }
        guard announcement.member.timeService.port != 0 else {
            return .failure(.malformedAnnouncement("time service on port 0"))
        }
        return .success(announcement)
    }

    /// Whether `id` is 1…64 printable ASCII characters with no space.
    public static func isValidID(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count) && id.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }
}
