import Foundation
import TandemWire

extension RelayCore {
    /// The lead an ordered broadcast in `session` gets now: the slowest connected participant's
    /// latest round trip plus the margin, within the configuration's bounds (see
    /// `RelayCoreConfiguration.lead(forRoundTrip:)`).
    public func orderingLead(in session: UUID) -> Int64 {
        let roundTrips = sessions[session]?.participants.values.compactMap { participant in
            participant.connection == nil ? nil : participant.roundTrip
        } ?? []
        return configuration.lead(forRoundTrip: roundTrips.max())
    }

    /// The latest round trip the relay measured to `participant` of `session`, in nanoseconds.
    public func roundTrip(of participant: UUID, in session: UUID) -> Int64? {
        sessions[session]?.participants[participant]?.roundTrip
    }

    /// How many ordered broadcasts `session` keeps for late joiners.
    public func orderedHistoryCount(of session: UUID) -> Int {
        sessions[session]?.orderedHistory.count ?? 0
    }

    /// How many of them are role records kept apart from the history's caps
    /// (`RelayOrderedHistory`, pinned).
    public func pinnedHistoryCount(of session: UUID) -> Int {
        sessions[session]?.orderedHistory.pinnedCount ?? 0
    }

    /// The bytes of the bodies that `session` keeps for late joiners (what its history counts
    /// against the memory budget).
    public func orderedHistoryBytes(of session: UUID) -> Int {
        sessions[session]?.orderedHistory.bodyBytes ?? 0
    }

    /// Orders a proposal: the next number, the relay's time and an effective time, then to
    /// everyone in the session, the proposer included, and into the history for late joiners,
    /// kept there by its `retention` (see `RelayOrderedHistory`), or apart from the caps when
    /// `pinned` (a role record whose statement the relay took, `orderAuthored`).
    ///
    /// A snapshot must reflect an order below the one it gets (an honest proposer has seen only
    /// orders already given): otherwise it is malformed, nothing is ordered, and the connection
    /// is dropped as a protocol violation, as for any frame the relay cannot take.
    ///
    /// `stamped` gives the ordering and effective instants a clustered relay stamped when it
    /// submitted the proposal (`RelayCore+Cluster.swift`); the effective one never precedes the
    /// last, as here.
    mutating func order(_ body: [UInt8], retention: OrderedRetention, pinned: Bool = false, from key: ParticipantKey,
                        on connection: RelayConnectionID, at now: Int64,
                        stamped: (orderedAt: Int64, effectiveAt: Int64)? = nil) -> [RelayDirective] {
        guard let nextOrder = sessions[key.session]?.nextOrder, let lastEffectiveAt = sessions[key.session]?.lastEffectiveAt,
              let before = sessions[key.session]?.orderedHistory.bodyBytes else { return [] }
        if let reflecting = retention.reflectedOrder, reflecting >= nextOrder {
            return drop(connection, fault: RelayFault(
                .protocolViolation, "a snapshot at order \(nextOrder) cannot reflect order \(reflecting)"), at: now)
        }
        let lead = orderingLead(in: key.session)
        let (computed, overflow) = now.addingReportingOverflow(lead)
        let wanted = stamped?.effectiveAt ?? computed
        let entry = RelayOrderedEntry(
            sender: key.participant, order: nextOrder, orderedAt: stamped?.orderedAt ?? now,
            effectiveAt: max(overflow && stamped == nil ? .max : wanted, lastEffectiveAt), retention: retention, body: body)
        sessions[key.session]?.nextOrder += 1
        if sessions[key.session]?.participants[key.participant]?.firstOrder == nil {
            sessions[key.session]?.participants[key.participant]?.firstOrder = nextOrder
        }
        sessions[key.session]?.lastEffectiveAt = entry.effectiveInstant.nanoseconds
        // In place: the history grows at the cost of one entry, not of everything it holds.
        sessions[key.session]?.orderedHistory.append(entry, pinned: pinned, maximumCount: configuration.maximumOrderedHistory,
                                                     maximumBytes: configuration.maximumOrderedHistoryBytes)
        account(key.session, (sessions[key.session]?.orderedHistory.bodyBytes ?? before) - before)
        guard let order = sessions[key.session]?.order else { return [] }
        return broadcast(in: key.session, to: order, at: now) { .ordered(sequence: $0, entry: entry) }
    }

    /// Pings a joined connection with the relay's time, to measure its round trip by the pong.
    mutating func probe(_ connection: RelayConnectionID, at now: Int64) -> RelayDirective {
        connections[connection]?.pingSentAt = now
        connections[connection]?.lastProbe = now
        return .send(connection, .ping(UInt64(bitPattern: now)))
    }

    /// A pong: when it echoes the relay's outstanding ping, the participant's round trip is the
    /// time since. Pongs to the participant's own pings never come, and others are ignored.
    mutating func measure(_ value: UInt64, from key: ParticipantKey, on connection: RelayConnectionID, at now: Int64) {
        guard let sent = connections[connection]?.pingSentAt, value == UInt64(bitPattern: sent) else { return }
        connections[connection]?.pingSentAt = nil
        sessions[key.session]?.participants[key.participant]?.roundTrip = max(0, now - sent)
    }

    /// The history frames that follow a welcome, oldest first.
    func historyFrames(of session: RelaySessionState, to connection: RelayConnectionID) -> [RelayDirective] {
        session.orderedHistory.all.map { .send(connection, .historyEntry($0)) }
    }
}
