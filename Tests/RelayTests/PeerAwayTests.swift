import Foundation
import TandemNet
import TandemWire
import Testing

/// Issue 15, item 2: a connection closed by its peer is shown to the others as away at once (and
/// as back when it resumes); a silent one is not announced. Pure core, virtual instants.
@Suite("Relay core: away at once when a connection is closed by its peer")
struct PeerAwayTests {
    private let key = [UInt8](repeating: 4, count: 32)
    private let session = UUID()
    private let second: Int64 = 1_000_000_000

    private var admission: CoreAdmission { CoreAdmission(key: key, session: session) }

    /// The away (true) and back (false) reports among `directives` sent to `connection`.
    private func away(_ directives: [RelayDirective], to connection: RelayConnectionID) -> [(UUID, Bool)] {
        CoreAdmission.frames(directives, to: connection).compactMap {
            if case let .participantAway(_, id, away) = $0 { (id, away) } else { nil }
        }
    }

    @Test("closed by its peer: the others hear away at once, the closer nothing; back when it resumes")
    func awayThenBack() {
        var core = RelayCore()
        let (ana, ben, cid) = (TestIdentities.make(), TestIdentities.make(), TestIdentities.make())
        _ = admission.admit(&core, RelayConnectionID(1), ana, create: true, at: 0)
        _ = admission.admit(&core, RelayConnectionID(2), ben, create: false, at: 0)
        _ = admission.admit(&core, RelayConnectionID(3), cid, create: false, at: 0)
        let closed = core.onClose(RelayConnectionID(1), at: second, byPeer: true)
        #expect(away(closed, to: RelayConnectionID(2)).map(\.0) == [ana])
        #expect(away(closed, to: RelayConnectionID(2)).map(\.1) == [true])
        #expect(away(closed, to: RelayConnectionID(3)).map(\.0) == [ana])
        #expect(away(closed, to: RelayConnectionID(1)).isEmpty)
        #expect(core.participants(of: session).contains(ana))
        // Within the short grace period she resumes on a new connection: the others hear she is back.
        let resumed = admission.admit(&core, RelayConnectionID(4), ana, create: false, resume: true, at: 2 * second)
        #expect(CoreAdmission.frames(resumed, to: RelayConnectionID(4)).contains { if case .welcome = $0 { true } else { false } })
        #expect(away(resumed, to: RelayConnectionID(2)).map(\.1) == [false])
        #expect(away(resumed, to: RelayConnectionID(3)).map(\.0) == [ana])
        #expect(away(resumed, to: RelayConnectionID(4)).isEmpty)
        // Resumed, she is not removed when the short grace period would have run out.
        let tick = core.onTick(at: 4 * second)
        #expect(!CoreAdmission.frames(tick, to: RelayConnectionID(2)).contains { if case .participantLeft = $0 { true } else { false } })
        #expect(core.participants(of: session).contains(ana))
    }

    @Test("away reports are sequenced frames the others acknowledge like any other")
    func awayIsSequenced() throws {
        var core = RelayCore()
        let (ana, ben) = (TestIdentities.make(), TestIdentities.make())
        _ = admission.admit(&core, RelayConnectionID(1), ana, create: true, at: 0)
        let joined = admission.admit(&core, RelayConnectionID(2), ben, create: false, at: 0)
        let before = CoreAdmission.frames(core.onClose(RelayConnectionID(1), at: second, byPeer: true), to: RelayConnectionID(2))
        let frame = try #require(before.first)
        #expect(frame.sequence == 1)
        #expect(!joined.isEmpty)
        // Acknowledging it is accepted (not a forged acknowledgement: the connection stays).
        let acknowledged = core.onFrame(.ack(1), from: RelayConnectionID(2), at: second)
        #expect(!acknowledged.contains { if case .close(RelayConnectionID(2)) = $0 { true } else { false } })
    }

    @Test("a connection the shell closed (silent, timed out) is not reported away")
    func silentIsNotAway() {
        var core = RelayCore()
        let (ana, ben) = (TestIdentities.make(), TestIdentities.make())
        _ = admission.admit(&core, RelayConnectionID(1), ana, create: true, at: 0)
        _ = admission.admit(&core, RelayConnectionID(2), ben, create: false, at: 0)
        #expect(away(core.onClose(RelayConnectionID(1), at: second, byPeer: false), to: RelayConnectionID(2)).isEmpty)
        // Nor back when it resumes: nobody was told it went.
        let resumed = admission.admit(&core, RelayConnectionID(3), ana, create: false, resume: true, at: 2 * second)
        #expect(away(resumed, to: RelayConnectionID(2)).isEmpty)
    }

    @Test("away, then departed after the short grace period: left follows away")
    func awayThenLeft() {
        var core = RelayCore()
        let (ana, ben) = (TestIdentities.make(), TestIdentities.make())
        _ = admission.admit(&core, RelayConnectionID(1), ana, create: true, at: 0)
        _ = admission.admit(&core, RelayConnectionID(2), ben, create: false, at: 0)
        #expect(away(core.onClose(RelayConnectionID(1), at: 0, byPeer: true), to: RelayConnectionID(2)).map(\.0) == [ana])
        let frames = CoreAdmission.frames(core.onTick(at: 3 * second), to: RelayConnectionID(2))
        #expect(frames.contains { if case .participantLeft(_, ana) = $0 { true } else { false } })
    }

    @Test("a late joiner hears who is away already, in sequenced frames right after its welcome and history")
    func lateJoinerHearsAway() throws {
        var core = RelayCore()
        let (ana, ben, cid, dan) = (TestIdentities.make(), TestIdentities.make(), TestIdentities.make(), TestIdentities.make())
        _ = admission.admit(&core, RelayConnectionID(1), ana, create: true, at: 0)
        _ = admission.admit(&core, RelayConnectionID(2), ben, create: false, at: 0)
        _ = admission.admit(&core, RelayConnectionID(3), cid, create: false, at: 0)
        _ = core.onFrame(.proposal(sequence: 1, retention: .playback, body: [1]), from: RelayConnectionID(1), at: 0)
        // Ben's process exits (away); Cid's connection goes silent and the shell cuts it (not announced).
        _ = core.onClose(RelayConnectionID(2), at: second, byPeer: true)
        _ = core.onClose(RelayConnectionID(3), at: second, byPeer: false)
        let joined = admission.admit(&core, RelayConnectionID(4), dan, create: false, at: 2 * second)
        let frames = CoreAdmission.frames(joined, to: RelayConnectionID(4))
        #expect(away(joined, to: RelayConnectionID(4)).map(\.0) == [ben])
        #expect(away(joined, to: RelayConnectionID(4)).map(\.1) == [true])
        // After the welcome and the history it announces, numbered as the relay's frames to Dan are.
        let welcome = try #require(frames.firstIndex { if case .welcome = $0 { true } else { false } })
        let history = try #require(frames.lastIndex { if case .historyEntry = $0 { true } else { false } })
        let report = try #require(frames.firstIndex { if case .participantAway = $0 { true } else { false } })
        #expect(welcome < history && history < report)
        #expect(frames[report].sequence == 1)
        // Nobody else hears it again.
        #expect(away(joined, to: RelayConnectionID(1)).isEmpty)
        // Dan acknowledges it like any frame of the relay's.
        #expect(!core.onFrame(.ack(1), from: RelayConnectionID(4), at: 2 * second).contains { if case .close = $0 { true } else { false } })
    }

    @Test("a joiner after the away one resumed, or departed, hears of no one away")
    func lateJoinerAfterBackOrGone() {
        var core = RelayCore()
        let (ana, ben, cid, dan) = (TestIdentities.make(), TestIdentities.make(), TestIdentities.make(), TestIdentities.make())
        _ = admission.admit(&core, RelayConnectionID(1), ana, create: true, at: 0)
        _ = admission.admit(&core, RelayConnectionID(2), ben, create: false, at: 0)
        _ = core.onClose(RelayConnectionID(2), at: second, byPeer: true)
        _ = admission.admit(&core, RelayConnectionID(3), ben, create: false, resume: true, at: 2 * second)
        #expect(away(admission.admit(&core, RelayConnectionID(4), cid, create: false, at: 2 * second), to: RelayConnectionID(4)).isEmpty)
        // Away again, then gone after the short grace: the next joiner sees Ben departed, not away.
        _ = core.onClose(RelayConnectionID(3), at: 3 * second, byPeer: true)
        _ = core.onTick(at: 7 * second)
        let joined = admission.admit(&core, RelayConnectionID(5), dan, create: false, at: 7 * second)
        #expect(away(joined, to: RelayConnectionID(5)).isEmpty)
        let welcome = CoreAdmission.frames(joined, to: RelayConnectionID(5)).compactMap { if case let .welcome(welcome) = $0 { welcome } else { nil } }.first
        #expect(welcome?.participants.first { $0.id == ben }?.departed == true)
    }

    @Test("the last one closing by its peer has nobody to tell")
    func aloneIsQuiet() {
        var core = RelayCore()
        _ = admission.admit(&core, RelayConnectionID(1), TestIdentities.make(), create: true, at: 0)
        #expect(core.onClose(RelayConnectionID(1), at: 0, byPeer: true).isEmpty)
    }

    @Test("a version 5 hello is refused in version 5's own refusal")
    func oldPeerRefused() {
        var core = RelayCore()
        _ = core.onOpen(RelayConnectionID(1), entropy: [UInt8](repeating: 1, count: RelayCore.entropyLength), at: 0)
        let directives = core.onMalformed(WireError.unsupportedVersion(5, context: "relay frame"), from: RelayConnectionID(1), at: 0)
        #expect(RelayFrame.version >= 6)
        #expect(directives.contains { if case .send(_, .versionRefusal(5, _)) = $0 { true } else { false } })
    }
}
