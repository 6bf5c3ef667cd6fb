import Foundation
import TandemWire

/// The plaintext of a role record in the ordered stream (sealed as a `.roles` body, signed with
/// a kept retention so that late joiners replay every one): two marker bytes, a tag, then the
/// change's fields, big-endian.
///
///     00 52      marker
///     u8 tag     1 grant, 2 revoke, 3 policy, 4 claim, 5 reinstate, 6 kick, 7 rekey,
///                8 epoch history
///     16         the participant (grant, revoke, kick)
///     u8 u8      playback, ending: 0 everyone, 1 operators (policy)
///     u8 + n×16  the departed operators (claim; at most `RoleBook.maximumOperators`)
///     u16 32     the new epoch and its verifier (kick, rekey), then
///     u16 + n×(16 + 80)  each remaining participant's identity and its sealed box of the
///                secret (at most `EpochChange.maximumBoxes`, sorted by identity)
///     u16 + n×(u16 + 32) each older epoch and its secret (epoch history; at most
///                `maximumHistorySecrets`, the newest: a late joiner finds the older ones in
///                the older epochs' history records, `BodySealer.learnEpochs`)
///     [u8 1, statement]  optionally, last: the maker's signed statement of the change for the
///                        relay (`RelayAuthority`), which whoever accepts the record hands on
package enum RoleRecord {
    /// The two bytes that open every role record.
    static let marker: [UInt8] = [0x00, 0x52]
    /// The largest record: a kick handing the most boxes a change holds.
    static let maximumBytes = marker.count + 1 + 16 + 2 + 32 + 2 + (16 + EpochChange.boxLength) * EpochChange.maximumBoxes
        + 1 + RelayAuthority.maximumLength
    /// The most older epochs' secrets an epoch history carries: the newest of them.
    static let maximumHistorySecrets = 1024

    /// Whether an ordered record's plaintext is a role record: the coordinator passes over these.
    package static func isRoleRecord(_ body: [UInt8]) -> Bool {
        body.count >= marker.count && body[0] == marker[0] && body[1] == marker[1]
    }

    /// `change` as a record's plaintext, with the maker's `statement` of it for the relay.
    static func encode(_ change: RoleChange, statement: RelayAuthority? = nil) -> [UInt8] {
        var writer = ByteWriter(capacity: 32)
        writer.fixed(marker)
        switch change {
        case .grant(let id):
            writer.uint8(1)
            writer.uuid(id)
        case .revoke(let id):
            writer.uint8(2)
            writer.uuid(id)
        case .policy(let policy):
            writer.uint8(3)
            writer.uint8(policy.playback == .operators ? 1 : 0)
            writer.uint8(policy.ending == .operators ? 1 : 0)
        case .claim(let departed):
            writer.uint8(4)
            let named = departed.prefix(RoleBook.maximumOperators)
            writer.uint8(UInt8(named.count))
            for id in named { writer.uuid(id) }
        case .reinstate:
            writer.uint8(5)
        case .kick(let id, let epochChange):
            writer.uint8(6)
            writer.uuid(id)
            write(epochChange, to: &writer)
        case .rekey(let epochChange):
            writer.uint8(7)
            write(epochChange, to: &writer)
        case .epochHistory(let secrets):
            writer.uint8(8)
            let newest = secrets.sorted(by: { $0.key < $1.key }).suffix(maximumHistorySecrets)
            writer.uint16(UInt16(newest.count))
            for (epoch, secret) in newest {
                writer.uint16(epoch)
                writer.fixed(secret.bytes)
            }
        }
        if let statement {
            writer.uint8(1)
            statement.write(into: &writer)
        }
        return writer.bytes
    }

    private static func write(_ change: EpochChange, to writer: inout ByteWriter) {
        writer.uint16(change.epoch)
        writer.fixed(change.verifier, count: 32)
        let boxes = change.boxes.sorted { $0.key.uuidString < $1.key.uuidString }.prefix(EpochChange.maximumBoxes)
        writer.uint16(UInt16(boxes.count))
        for (id, box) in boxes {
            writer.uuid(id)
            writer.fixed(box, count: EpochChange.boxLength)
        }
    }

    private static func readEpochChange(_ reader: inout ByteReader) throws(WireError) -> EpochChange? {
        let epoch = try reader.uint16()
        let verifier = try reader.fixed(32)
        let count = Int(try reader.uint16())
        guard count <= EpochChange.maximumBoxes else { return nil }
        var boxes: [UUID: [UInt8]] = [:]
        for _ in 0..<count {
            let id = try reader.uuid()
            guard boxes.updateValue(try reader.fixed(EpochChange.boxLength), forKey: id) == nil else { return nil }
        }
        return EpochChange(epoch: epoch, verifier: verifier, boxes: boxes)
    }

    /// The change a record holds, nil when it is none (no marker, an unknown tag, a field out of
    /// range, bytes left over, over `maximumBytes`).
    static func decode(_ body: [UInt8]) -> RoleChange? {
        decodeWithStatement(body)?.change
    }

    /// The change a record holds and the maker's statement for the relay when it carries one;
    /// nil when it is no record (as `decode`).
    static func decodeWithStatement(_ body: [UInt8]) -> (change: RoleChange, statement: RelayAuthority?)? {
        guard isRoleRecord(body), body.count <= maximumBytes else { return nil }
        var reader = ByteReader(body[marker.count...], context: "role record")
        do throws(WireError) {
            let change: RoleChange
            switch try reader.uint8() {
            case 1: change = .grant(try reader.uuid())
            case 2: change = .revoke(try reader.uuid())
            case 3:
                guard let playback = control(try reader.uint8()), let ending = control(try reader.uint8()) else { return nil }
                change = .policy(SessionPolicy(playback: playback, ending: ending))
            case 4:
                let count = Int(try reader.uint8())
                guard count <= RoleBook.maximumOperators else { return nil }
                var departed: [UUID] = []
                for _ in 0..<count { departed.append(try reader.uuid()) }
                change = .claim(departed: departed)
            case 5: change = .reinstate
            case 6:
                let id = try reader.uuid()
                guard let epochChange = try readEpochChange(&reader) else { return nil }
                change = .kick(id, epochChange)
            case 7:
                guard let epochChange = try readEpochChange(&reader) else { return nil }
                change = .rekey(epochChange)
            case 8:
                let count = Int(try reader.uint16())
                guard count <= maximumHistorySecrets else { return nil }
                var secrets: [UInt16: SessionSecret] = [:]
                for _ in 0..<count {
                    let epoch = try reader.uint16()
                    guard let secret = SessionSecret(bytes: try reader.fixed(32)),
                          secrets.updateValue(secret, forKey: epoch) == nil else { return nil }
                }
                change = .epochHistory(secrets)
            default: return nil
            }
            var statement: RelayAuthority?
            if reader.remaining > 0 {
                guard try reader.uint8() == 1 else { return nil }
                statement = try RelayAuthority.read(from: &reader)
            }
            try reader.finish()
            return (change, statement)
        } catch {
            return nil
        }
    }

    private static func control(_ byte: UInt8) -> SessionPolicy.Control? {
        switch byte {
        case 0: .everyone
        case 1: .operators
        default: nil
        }
    }
}

extension RoleChange {
    /// What the change is at the relay, which keeps the operators' keys, the epoch's verifier and
    /// who may end, and keeps every role record whose statement it took apart from the
    /// history's caps: nil only for a grant or revocation whose subject's key is not in `keys`.
    func relayChange(keys: [UUID: [UInt8]]) -> RelayAuthority.Change? {
        switch self {
        case .grant(let target): keys[target].map { .grant(publicKey: $0) }
        case .revoke(let target): keys[target].map { .revoke(publicKey: $0) }
        case .claim: .claim
        case .kick(let target, let epochChange): .epoch(epochChange.epoch, verifier: epochChange.verifier, removed: target)
        case .rekey(let epochChange): .epoch(epochChange.epoch, verifier: epochChange.verifier, removed: nil)
        case .policy(let policy): .ending(operatorsOnly: policy.ending == .operators)
        case .reinstate: .reinstate
        case .epochHistory: .epochHistory
        }
    }
}
