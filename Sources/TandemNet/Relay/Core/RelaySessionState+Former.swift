import TandemWire

extension RelaySessionState {
    /// Remembers a participant who left, with its signed presence, for late joiners: records it
    /// signed (ordered history, journal attachments) outlive its stay, and a joiner verifies
    /// them against the key in each record and names their signer from this presence. At most
    /// `RelayWireLimits.maximumFormerParticipants` are kept, the oldest forgotten first, each of
    /// at most `maximumPresence` bytes.
    mutating func rememberFormer(_ entry: RelayParticipantEntry) {
        var departed = entry
        departed.departed = true
        former.removeAll { $0.id == entry.id }
        former.append(departed)
        if former.count > RelayWireLimits.maximumFormerParticipants {
            former.removeFirst(former.count - RelayWireLimits.maximumFormerParticipants)
        }
    }

    /// Everyone a welcome lists: former participants first (departed), then those present, in
    /// the order they joined.
    var welcomeList: [RelayParticipantEntry] {
        former + order.compactMap { participants[$0]?.entry }
    }
}
