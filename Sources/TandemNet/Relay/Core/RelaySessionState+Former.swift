import Foundation
import TandemWire

extension RelaySessionState {
    /// Remembers a participant who left, with its signed presence, for late joiners: records it
    /// signed (ordered history, journal attachments) outlive its stay, and a joiner verifies
    /// them against the key in each record and names their signer from this presence. At most
    /// `RelayWireLimits.maximumFormerParticipants` are kept, the oldest forgotten first, each of
    /// at most `maximumPresence` bytes. Returns how many bytes that added to what the session
    /// holds (less when older ones were forgotten), for the relay's memory budget.
    mutating func rememberFormer(_ entry: RelayParticipantEntry) -> Int {
        var departed = entry
        departed.departed = true
        let before = former.reduce(0) { $0 + Self.formerSize($1) }
        former.removeAll { $0.id == entry.id }
        former.append(departed)
        if former.count > RelayWireLimits.maximumFormerParticipants {
            former.removeFirst(former.count - RelayWireLimits.maximumFormerParticipants)
        }
        return former.reduce(0) { $0 + Self.formerSize($1) } - before
    }

    /// Forgets `id` as a former participant (it joined again); returns the bytes that releases.
    mutating func forgetFormer(_ id: UUID) -> Int {
        let before = former.reduce(0) { $0 + Self.formerSize($1) }
        former.removeAll { $0.id == id }
        return before - former.reduce(0) { $0 + Self.formerSize($1) }
    }

    /// The bytes a remembered participant holds: its presence, name and key, and its identity.
    private static func formerSize(_ entry: RelayParticipantEntry) -> Int {
        entry.presence.count + entry.displayName.utf8.count + entry.publicKey.count + 16
    }

    /// Everyone a welcome lists: former participants first (departed), then those present, in
    /// the order they joined, as many as fit in `welcomeListBytes`; the others present follow
    /// the welcome as `participantJoined` frames (`welcomeOverflow`), so that the welcome of a
    /// session at every limit still fits in a frame.
    var welcomeList: [RelayParticipantEntry] { welcomeSplit.listed }

    /// The order of the first record each participant present proposed, for those that have
    /// proposed one: what a welcome tells a joiner of how long each has been present.
    var firstOrders: [UUID: UInt64] {
        participants.reduce(into: [:]) { orders, each in
            if let first = each.value.firstOrder { orders[each.key] = first }
        }
    }

    /// Those present whom the welcome cannot list, in the order they joined: each follows the
    /// welcome in a `participantJoined` frame of its own.
    var welcomeOverflow: [RelayParticipantEntry] { welcomeSplit.following }

    /// How many bytes of participant entries a welcome holds at most: half a frame, which
    /// leaves room for the largest activity description and every other field. The former
    /// participants always fit (at most `maximumFormerParticipants` of at most about 1.4 KB).
    static let welcomeListBytes = RelayWireLimits.maximumFrameLength / 2

    private var welcomeSplit: (listed: [RelayParticipantEntry], following: [RelayParticipantEntry]) {
        var listed = former
        var bytes = former.reduce(0) { $0 + Self.entrySize($1) }
        var following: [RelayParticipantEntry] = []
        for id in order {
            guard let entry = participants[id]?.entry else { continue }
            bytes += Self.entrySize(entry)
            if following.isEmpty, bytes <= Self.welcomeListBytes { listed.append(entry) } else { following.append(entry) }
        }
        return (listed, following)
    }

    /// What an entry takes in a welcome, with room for its length prefixes and flags.
    private static func entrySize(_ entry: RelayParticipantEntry) -> Int { formerSize(entry) + 16 }

    /// How many drops a session remembers (`drops`).
    static let rememberedDrops = 16

    /// Remembers that the relay dropped `id` for `fault`.
    mutating func rememberDrop(_ id: UUID, _ fault: RelayFault) {
        drops.removeAll { $0.id == id }
        drops.append((id, fault))
        if drops.count > Self.rememberedDrops { drops.removeFirst(drops.count - Self.rememberedDrops) }
    }

    /// What a participant resuming as `id`, which the session no longer holds, is refused with:
    /// why it was dropped, if the relay did, else that it was gone longer than the grace period.
    func resumptionRefusal(_ id: UUID) -> RelayFault {
        if let fault = drops.last(where: { $0.id == id })?.fault {
            return RelayFault(.disconnected, "participant \(id.uuidString) was dropped by the relay: \(fault.text)")
        }
        return RelayFault(.disconnected, "participant \(id.uuidString) was gone longer than the grace period")
    }
}
