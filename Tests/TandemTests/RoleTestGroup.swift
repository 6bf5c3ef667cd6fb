import Foundation
import Testing
@testable import Tandem
import TandemClock
import TandemNet
import TandemWire

/// A session for the roles' and the removal's tests: its members' keys, the relay's order, and a
/// clock that moves only when the test says so.
struct RoleTestGroup {
    let secret = SessionSecret()
    let sessionID = UUID()
    let now = LocalInstant(nanoseconds: 1_000_000_000)
    private var order: UInt64 = 0
    /// Each member's public key, by identity.
    private(set) var keys: [UUID: [UInt8]] = [:]

    mutating func member() -> BodySealer {
        let member = BodySealer(secret: secret, sessionID: sessionID, identity: SigningKeyPair())
        keys[member.localID] = member.identity.publicKey
        return member
    }

    func record(_ member: BodySealer, _ name: String) -> ParticipantRecord {
        ParticipantRecord(id: member.localID, publicKey: member.identity.publicKey, displayName: name,
                          presence: member.keptPresence(name: name))
    }

    /// A joined machine for `member`, in a session `creator` created, with `others` present; its
    /// welcome holds `history` and says when each participant first proposed (`firstOrders`).
    func joined(_ member: BodySealer, _ name: String, creator: BodySealer, others: [(BodySealer, String)],
                history: [OrderedDelivery] = [], firstOrders: [UUID: UInt64] = [:]) throws -> SessionMachine<Quiz> {
        var machine = SessionMachine<Quiz>(localParticipant: Participant(id: member.localID, displayName: name), bodies: member,
                                           isLocallyInitiated: member.localID == creator.localID, creator: creator.localID)
        let welcome = RelayWelcome(sessionID: sessionID, participants: others.map { record($0.0, $0.1) } + [record(member, name)],
                                   activity: try ActivityDescription(Quiz(topic: "rivers")).sealed(with: creator),
                                   attachments: [], created: false, orderedHistory: history, firstOrders: firstOrders)
        _ = machine.onWelcome(welcome, at: now)
        _ = machine.onJoinRequested(at: now)
        _ = machine.onAnnounce(at: now)
        return machine
    }

    /// The next ordered delivery of `change`, signed by `member`, with `member`'s statement of
    /// it for the relay under the record's order as its counter, as a participant's record
    /// carries one (`SessionMachine.recordBytes(for:)`).
    mutating func role(_ change: RoleChange, by member: BodySealer, retention: OrderedRetention = .kept) -> OrderedDelivery {
        ordered(RoleRecord.encode(change, statement: statement(of: change, by: member, counter: order + 1)), by: member,
                kind: .roles, retention: retention)
    }

    /// `member`'s signed statement of `change` for the relay, nil for a change the relay does
    /// not mirror.
    func statement(of change: RoleChange, by member: BodySealer, counter: UInt64) -> RelayAuthority? {
        change.relayChange(keys: keys).map { RelayAuthority.signed($0, session: sessionID, counter: counter, by: member.identity) }
    }

    /// The ordered delivery of `payload` under `order` (later deliveries count on from it),
    /// signed by `member` as a playback record.
    mutating func ordered(_ payload: [UInt8], by member: BodySealer, at order: UInt64) -> OrderedDelivery {
        self.order = order - 1
        return ordered(payload, by: member)
    }

    /// The next ordered delivery of `payload`, signed by `member` as `kind`.
    mutating func ordered(_ payload: [UInt8], by member: BodySealer, kind: BodyKind = .playbackProposal,
                          retention: OrderedRetention = .playback) -> OrderedDelivery {
        order += 1
        return OrderedDelivery(sender: member.localID, order: order, orderedAt: now.nanoseconds, effectiveAt: now.nanoseconds,
                               retention: retention, body: member.seal(payload, kind: kind, path: .ordered, retention: retention))
    }
}

/// The statements the directives hand on to the relay, in order.
func statements(_ directives: [SessionMachine<Quiz>.EventDirective]) -> [RelayAuthority] {
    directives.compactMap { if case .announceAuthority(let statement) = $0 { statement } else { nil } }
}

/// The directives' role events, in order.
func roleEvents(_ directives: [SessionMachine<Quiz>.EventDirective]) -> [SessionRoleEvent] {
    directives.compactMap { if case .roleEvent(let event) = $0 { event } else { nil } }
}
