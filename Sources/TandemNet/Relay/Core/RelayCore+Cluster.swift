import Foundation
import TandemWire

/// What a clustered core asks its shell to carry to NATS, taken with `takeClusterOutput()`.
public struct RelayClusterOutput: Sendable {
    /// Entries to append to their sessions' logs, in the order they were made.
    public var entries: [ClusterLogEntry] = []
    /// Datagrams for the other relays' participants (core NATS).
    public var datagrams: [ClusterDatagram] = []
    /// Sessions this relay does not hold and was asked for: replay each from its log, follow it,
    /// then call `onClusterSessionLoaded`.
    public var follow: [UUID] = []
    /// Sessions no longer held nor wanted here: stop following their logs (the core has
    /// released them, `releaseClusterSession`). Carried before `follow`.
    public var released: [UUID] = []

    /// Whether there is nothing to carry.
    public var isEmpty: Bool { entries.isEmpty && datagrams.isEmpty && follow.isEmpty && released.isEmpty }
}

/// A clustered core's own state: what it has submitted and not yet seen applied, the
/// connections waiting for their admission to come back from the log, the sessions it follows.
struct RelayClusterState: Sendable {
    /// This relay in the entries it appends.
    let relay: UInt64
    /// How far ahead of the ordering instant an effective instant is put beyond the lead, to
    /// cover a JetStream commit and the fan-out on the other relays.
    let commitMargin: Int64
    /// The most bytes a session's log may hold (`RelayCore+ClusterLogCap.swift`).
    var sessionLogLimit = RelayCore.defaultClusterSessionLogLimit
    /// The bytes of each loaded session's log applied here, the same on every relay.
    var logBytes: [UUID: Int] = [:]
    /// The bytes of this relay's entries of each session submitted and not yet applied.
    var pendingLogBytes: [UUID: Int] = [:]
    /// How many bytes of entries since a session's last snapshot start a compaction, at least
    /// (`RelayCore+ClusterCompaction.swift`).
    var compactionThreshold = RelayCore.defaultClusterCompactionThreshold
    /// The bytes of each loaded session's entries applied since its last snapshot (all of them
    /// when it has none), the same on every relay.
    var tailBytes: [UUID: Int] = [:]
    /// How many entries since a session's last snapshot start a compaction, once they take at
    /// least as many bytes as that snapshot (`RelayCore+ClusterCompaction.swift`).
    var compactionEntries = RelayCore.defaultClusterCompactionEntries
    /// How many of each loaded session's entries were applied since its last snapshot (all of
    /// them when it has none), the same on every relay.
    var tailEntries: [UUID: Int] = [:]
    /// The bytes each loaded session's last snapshot takes in its log.
    var snapshotBytes: [UUID: Int] = [:]
    /// Sessions whose log this relay is to compact (`takeClusterCompaction`).
    var compactions: Set<UUID> = []
    /// Whether NATS is reachable: while not, nobody new is admitted.
    var available = true
    var output = RelayClusterOutput()
    /// The last sequence number of each local participant's frames submitted to the log.
    var submitted: [RelayCore.ParticipantKey: UInt64] = [:]
    /// Connections whose admission (`joined` or `resumed`) is on its way through the log.
    var joining: [RelayConnectionID: RelayHello] = [:]
    /// Sessions whose log this relay has replayed and follows.
    var loaded: Set<UUID> = []
    /// Hellos for sessions being replayed, answered once they are loaded (or, for a session
    /// being confirmed absent, once it appears or its hold ends).
    var loading: [UUID: [(RelayConnectionID, RelayHello)]] = [:]
    /// Sessions whose log was loaded empty while hellos that need the session waited, and the
    /// instant until which those hellos wait for it to appear (`clusterAbsenceHold`).
    var confirming: [UUID: Int64] = [:]
    /// Local participants whose removal was submitted.
    var departing: Set<RelayCore.ParticipantKey> = []
    /// The cursor last submitted for each local participant.
    var cursors: [RelayCore.ParticipantKey: UInt64] = [:]
    /// When cursors were last submitted.
    var lastCursors: Int64?
    /// The relay each participant was last admitted or resumed at.
    var homes: [RelayCore.ParticipantKey: UInt64] = [:]
    /// When each relay was last heard from (its heartbeat, or an entry of its applied).
    var relaysHeard: [UInt64: Int64] = [:]
    /// Remote participants whose relay fell silent: disconnected here, as if their connection
    /// had been closed, unless they resume somewhere.
    var stranded: Set<RelayCore.ParticipantKey> = []
    /// How many of this relay's entries of each session are submitted and not yet seen applied.
    var outstanding: [UUID: Int] = [:]
    /// When each session with outstanding entries last made progress (an entry of this relay's
    /// submitted while none was outstanding, or one applied); nil until the next tick notes it.
    var progressAt: [UUID: Int64?] = [:]
    /// Sessions whose log has taken none of this relay's entries for `clusterStallTimeout`.
    var stalled: Set<UUID> = []
    /// When NATS was lost, while it is.
    var lostAt: Int64?
    /// Whether the loss has lasted `clusterLossHoldOff` and the participants were told.
    var lossTold = false
    /// Sessions whose participants here were last told the relay is unavailable.
    var told: Set<UUID> = []
    /// Sessions that an entry of this relay's ended or emptied, whose subject this relay purges
    /// (`takeClusterPurge`): one relay for each, the same on every replica.
    var purges: Set<UUID> = []
    /// Local participants whose outbox goes to their connection a window at a time (a journal
    /// load, a resumption with much to replay): the first sequence number not yet sent. Frames
    /// from there on wait in the outbox until the connection drains (`clusterDrained`).
    var backlog: [RelayCore.ParticipantKey: UInt64] = [:]
}

/// Cluster mode: the session is a deterministic function of its log.
///
/// A clustered core never changes a session on the strength of a local event alone. Each event
/// that changes a session becomes a `ClusterLogEntry` for the shell to append to the session's
/// JetStream subject; every relay following the session, this one included, applies the entries
/// in log order (`applyCluster`), and only then do frames go out. What stays local: handshakes
/// (checked against the replica's verifier and keys), flood control, acknowledgements to the
/// relay's own connections, datagram registrations, and the connections themselves. A remote
/// participant is held like a connected one without a connection here: its outbox is numbered
/// as on its own relay, so that it can resume on any relay.
extension RelayCore {
    /// How often local participants' delivery cursors go to the log at most.
    static let clusterCursorInterval: Int64 = 1_000_000_000
    /// How long a relay may go unheard before its participants are treated as disconnected
    /// (relays say they are alive every second: `onClusterHeartbeat`).
    static let clusterRelayTimeout: Int64 = 3_000_000_000
    /// The connection an applied entry names when its participant has none on this relay:
    /// directives to it are dropped by the shell.
    static let clusterAbsentConnection = RelayConnectionID(.max)
    /// How long a session's log may take none of this relay's submitted entries before its
    /// participants here are told the relay is unavailable (`RelayNotice`): longer than a
    /// commit under load, shorter than a JetStream leader election (4 to 9 s).
    public static let clusterStallTimeout: Int64 = 2_000_000_000

    /// Turns on cluster mode, as relay `relay` (a random number, unique in the cluster), with
    /// `commitMargin` ns added to each ordering lead. Before the first event.
    /// `sessionLogLimit` is the most bytes one session's log may hold (`RelayCore+ClusterLogCap.swift`).
    /// A session's log is compacted once `compactionThreshold` bytes of entries (or as many as
    /// its last snapshot took, when more) follow its last snapshot; nil: the smaller of
    /// `defaultClusterCompactionThreshold` and a quarter of `sessionLogLimit`; or once
    /// `compactionEntries` entries (nil: `defaultClusterCompactionEntries`) follow it and take
    /// at least as many bytes as it (`RelayCore+ClusterCompaction.swift`).
    public mutating func enableCluster(relay: UInt64, commitMargin: Int64 = 10_000_000,
                                       sessionLogLimit: Int = RelayCore.defaultClusterSessionLogLimit,
                                       compactionThreshold: Int? = nil, compactionEntries: Int? = nil) {
        cluster = RelayClusterState(relay: relay, commitMargin: commitMargin)
        cluster?.sessionLogLimit = sessionLogLimit
        cluster?.compactionThreshold = max(compactionThreshold ?? min(RelayCore.defaultClusterCompactionThreshold, sessionLogLimit / 4), 1)
        cluster?.compactionEntries = max(compactionEntries ?? RelayCore.defaultClusterCompactionEntries, 1)
    }

    /// Whether the core runs in cluster mode.
    public var isClustered: Bool { cluster != nil }

    /// The relay's number in cluster mode.
    public var clusterRelay: UInt64? { cluster?.relay }

    /// Whether NATS is reachable, as the shell last said.
    public var isClusterAvailable: Bool { cluster?.available ?? false }

    /// What waits to go to NATS; the shell calls this after each event.
    public mutating func takeClusterOutput() -> RelayClusterOutput {
        guard let output = cluster?.output, !output.isEmpty else { return RelayClusterOutput() }
        cluster?.output = RelayClusterOutput()
        return output
    }

    /// The last log position a session's replica has applied, as the shell keeps it; not the
    /// core's business, but the replica's sessions are: whether `session` exists here.
    public func holdsSession(_ session: UUID) -> Bool { sessions[session] != nil }

    /// Forgets that `session` is loaded when the replica no longer holds it (everyone left, or it
    /// ended) and nothing here waits on it; whether the shell may stop following its log. A
    /// later hello replays the log again (an ended session is then refused as ended).
    public mutating func releaseClusterSession(_ session: UUID) -> Bool {
        guard let cluster, sessions[session] == nil, cluster.loading[session] == nil,
              !cluster.joining.values.contains(where: { $0.sessionID == session }),
              // A hello challenged for it (a creation awaiting its proof) still wants it.
              !connections.values.contains(where: { if case let .challenged(hello, _) = $0.phase { hello.sessionID == session } else { false } }),
              !cluster.output.entries.contains(where: { $0.session == session }) else { return false }
        self.cluster?.loaded.remove(session)
        self.cluster?.confirming[session] = nil
        self.cluster?.outstanding[session] = nil
        self.cluster?.progressAt[session] = nil
        self.cluster?.stalled.remove(session)
        self.cluster?.told.remove(session)
        forgetClusterLog(session)
        return true
    }

    /// `session`'s log has been replayed to its end: the hellos that waited for it are answered.
    /// When the replica does not hold it (its log was read empty), the hellos that would be
    /// refused "no session" (joins and resumptions) wait for it for `clusterAbsenceHold`; a
    /// creator's is answered at once.
    public mutating func onClusterSessionLoaded(_ session: UUID, at now: Int64) -> [RelayDirective] {
        guard cluster != nil else { return [] }
        cluster?.loaded.insert(session)
        var waiting = cluster?.loading.removeValue(forKey: session) ?? []
        if sessions[session] == nil, endedSessions[session] == nil, waiting.contains(where: { !$0.1.create }) {
            cluster?.loading[session] = waiting.filter { !$0.1.create }
            cluster?.confirming[session] = now.saturatingAdding(RelayCore.clusterAbsenceHold)
            waiting = waiting.filter { $0.1.create }
        }
        return greet(waiting, at: now)
    }

    /// The shell could not read `session`'s log (NATS stayed away): the hellos waiting for it are
    /// refused as unavailable, and it is not loaded.
    public mutating func onClusterSessionUnavailable(_ session: UUID, at now: Int64) -> [RelayDirective] {
        guard cluster != nil else { return [] }
        let waiting = cluster?.loading.removeValue(forKey: session) ?? []
        let fault = RelayFault(.unavailable, "the relay cluster is unavailable (the session's log cannot be read); try again")
        var directives: [RelayDirective] = []
        for (connection, _) in waiting {
            guard case .greeting? = connections[connection]?.phase else { continue }
            directives += refuse(connection, fault)
        }
        return directives
    }

    /// The shell could not append `entries` (NATS stayed away past the retry window): waiting
    /// admissions are refused as unavailable, and a local participant whose frames were lost is
    /// disconnected so that it resumes and sends them again.
    public mutating func onClusterPublishFailed(_ entries: [ClusterLogEntry], reason: String, at now: Int64) -> [RelayDirective] {
        guard let relay = cluster?.relay else { return [] }
        let fault = RelayFault(.unavailable, "the relay cluster is unavailable: \(reason)")
        var directives: [RelayDirective] = []
        for entry in entries where entry.relay == relay {
            noteClusterLogLost(entry)
            // Never to be applied: no longer outstanding. A session left with nothing on its way is
            // no longer stalled (nothing of its waits on the log; the next entry that waits too long
            // stalls it again), so an idle session is not left unavailable for good.
            if let outstanding = cluster?.outstanding[entry.session] {
                cluster?.outstanding[entry.session] = outstanding > 1 ? outstanding - 1 : nil
                if outstanding <= 1 { cluster?.progressAt[entry.session] = nil }
            }
            let key = ParticipantKey(session: entry.session, participant: entry.participant)
            switch entry.event {
            case .joined, .resumed:
                let connection = RelayConnectionID(entry.connection)
                if cluster?.joining.removeValue(forKey: connection) != nil { directives += refuse(connection, fault) }
            case .frame:
                cluster?.submitted[key] = nil
                if let connection = sessions[key.session]?.participants[key.participant]?.connection,
                   case .joined? = connections[connection]?.phase {
                    connections[connection]?.phase = .closing
                    directives += [.send(connection, .error(fault)), .close(connection)]
                    // Disconnected here as a silent connection is: it may resume within the grace period.
                    sessions[key.session]?.participants[key.participant]?.connection = nil
                    sessions[key.session]?.participants[key.participant]?.disconnectedAt = now
                    sessions[key.session]?.participants[key.participant]?.grace = configuration.gracePeriod
                    scheduleTick(key)
                }
            case .departed:
                cluster?.departing.remove(key)
            case .away, .cursor:
                break
            }
        }
        for session in Set(entries.map(\.session)) where cluster?.outstanding[session] == nil && cluster?.stalled.contains(session) == true {
            cluster?.stalled.remove(session)
            directives += clusterReconcile(session)
        }
        return directives
    }

    // MARK: Local events become entries

    /// Appends an entry of `session` from `connection` to what goes to the log.
    /// It is outstanding until applied: should the log take none for `clusterStallTimeout`, the
    /// session's participants here hear that the relay is unavailable.
    private mutating func submit(_ session: UUID, _ event: ClusterLogEntry.Event, from connection: RelayConnectionID) {
        guard let relay = cluster?.relay else { return }
        let entry = ClusterLogEntry(session: session, relay: relay, connection: connection.value, event: event)
        cluster?.output.entries.append(entry)
        noteClusterLogSubmitted(entry)
        let outstanding = cluster?.outstanding[session] ?? 0
        cluster?.outstanding[session] = outstanding + 1
        // The clock starts at the next tick (a submission carries no time of its own here).
        if outstanding == 0 { cluster?.progressAt[session] = .some(nil) }
    }

    /// A sequenced frame from a local participant: checked as the relay always checks it, then
    /// submitted; it takes effect when applied.
    mutating func clusterHandle(_ frame: RelayFrame, sequence: UInt64, from key: ParticipantKey, on connection: RelayConnectionID,
                                at now: Int64) -> [RelayDirective] {
        let received = sessions[key.session]?.participants[key.participant]?.received ?? 0
        let last = max(received, cluster?.submitted[key] ?? 0)
        // Sent again after a resumption: already on its way, or applied.
        if sequence <= last { return [] }
        guard sequence == last + 1 else {
            return drop(connection, fault: RelayFault(.protocolViolation, "sequence \(sequence) after \(last)"), at: now)
        }
        var orderedAt: Int64 = 0
        var effectiveAt: Int64 = 0
        switch frame {
        case let .attachmentAdd(_, entry) where !accountedBudgetFits(RelayCore.journalCost(of: entry)):
            // The relay's own accounted budget, checked before the log (applying decides alike
            // everywhere, and a relay's budget is its own): over it, the uploader is dropped. The
            // footprint alone drops nobody (SECURITY.md): over it with the budget under, the
            // upload goes to the log as any other, since the log's answer cannot depend on one
            // relay's resident memory; new sessions and joins are still refused by it.
            limitCounts.memory += 1
            return drop(connection, fault: RelayFault(.limitReached, "the relay is at its memory limit of \(configuration.memoryLimit) bytes"), at: now)
        case .message, .attachmentAdd, .attachmentChunk, .attachmentRemove, .loadRequest, .leave, .end, .authority:
            break
        case .proposal, .authoredProposal:
            orderedAt = now
            let (wanted, overflow) = now.addingReportingOverflow(orderingLead(in: key.session) &+ (cluster?.commitMargin ?? 0))
            effectiveAt = overflow ? .max : wanted
        default:
            return drop(connection, fault: RelayFault(.protocolViolation, "frame \(frame.typeName) is not for the relay"), at: now)
        }
        // The session's log has room for what a participant adds to it, or the sender goes
        // (`RelayCore+ClusterLogCap.swift`).
        let event = ClusterLogEntry.Event.frame(participant: key.participant, frame: frame, orderedAt: orderedAt, effectiveAt: effectiveAt)
        if let fault = clusterLogRefusal(key.session, frame, event) {
            limitCounts.clusterLog += 1
            return drop(connection, fault: fault, at: now)
        }
        cluster?.submitted[key] = sequence
        submit(key.session, event, from: connection)
        return []
    }

    /// A proven hello (a join, a creation with `verifier`, or a resumption): submitted; the
    /// welcome goes once it is applied.
    mutating func clusterAdmit(_ connection: RelayConnectionID, _ hello: RelayHello, verifier: [UInt8]?, at now: Int64) -> [RelayDirective] {
        guard cluster?.available == true else {
            return refuse(connection, RelayFault(.unavailable, "the relay cluster is unavailable (NATS cannot be reached); try again"))
        }
        guard let token = connections[connection]?.token else { return [] }
        cluster?.joining[connection] = hello
        if hello.resume {
            submit(hello.sessionID, .resumed(participant: hello.participant.id, received: hello.received), from: connection)
        } else {
            submit(hello.sessionID, .joined(participant: hello.participant, token: token.bytes, verifier: verifier, activity: hello.activity,
                                            ticketed: verifier != nil && hello.ticket != nil),
                   from: connection)
        }
        return []
    }

    /// A hello for a session this relay has not loaded: it waits while the log is replayed.
    /// Nil when the session is here (or its log was replayed and it is not there).
    mutating func clusterAwaitSession(_ connection: RelayConnectionID, _ hello: RelayHello) -> [RelayDirective]? {
        guard cluster != nil, sessions[hello.sessionID] == nil else { return nil }
        // Its log was read empty and the session is awaited: a join waits with the others.
        if cluster?.confirming[hello.sessionID] != nil, !hello.create {
            cluster?.loading[hello.sessionID, default: []].append((connection, hello))
            return []
        }
        guard cluster?.loaded.contains(hello.sessionID) == false else { return nil }
        if cluster?.loading[hello.sessionID] == nil { cluster?.output.follow.append(hello.sessionID) }
        cluster?.loading[hello.sessionID, default: []].append((connection, hello))
        return []
    }

    /// A local participant's connection closed: the others hear of it through the log.
    mutating func clusterClosed(_ key: ParticipantKey, byPeer: Bool, on connection: RelayConnectionID) -> [RelayDirective] {
        if byPeer { submit(key.session, .away(participant: key.participant), from: connection) }
        return []
    }

    /// A local participant is to be removed (dropped, too slow, gone past its grace period).
    ///
    /// Its connection here closes at once, and it counts as disconnected with no grace: should
    /// the removal not reach the log, the next tick submits it again.
    mutating func clusterDepart(_ key: ParticipantKey, at now: Int64?) -> [RelayDirective] {
        guard cluster?.departing.insert(key).inserted == true,
              sessions[key.session]?.participants[key.participant] != nil else { return [] }
        var directives: [RelayDirective] = []
        let connection = sessions[key.session]?.participants[key.participant]?.connection
        if let connection {
            if case .joined? = connections[connection]?.phase { connections[connection]?.phase = .closing }
            directives.append(.close(connection))
            sessions[key.session]?.participants[key.participant]?.connection = nil
        }
        if let now, sessions[key.session]?.participants[key.participant]?.disconnectedAt == nil {
            sessions[key.session]?.participants[key.participant]?.disconnectedAt = now
        }
        sessions[key.session]?.participants[key.participant]?.grace = 0
        scheduleTick(key)
        submit(key.session, .departed(participant: key.participant), from: connection ?? RelayCore.clusterAbsentConnection)
        return directives
    }

    /// A recipient over its outbox cap: only the relay it is connected to removes it (the
    /// replicas' outboxes shrink with the cursors, later than its own).
    mutating func clusterOverflow(_ key: ParticipantKey, at now: Int64?) -> [RelayDirective] {
        guard let connection = sessions[key.session]?.participants[key.participant]?.connection else { return [] }
        let fault = RelayFault(.disconnected, "too far behind: \(configuration.maximumOutboxFrames) frames or \(configuration.maximumOutboxBytes) bytes unacknowledged")
        return [.send(connection, .error(fault))] + clusterDepart(key, at: now)
    }

    /// Relay `relay` said it is alive at `now`.
    public mutating func onClusterHeartbeat(_ relay: UInt64, at now: Int64) {
        cluster?.relaysHeard[relay] = now
    }

    /// The cursors of local participants, and the participants of relays gone silent, at most
    /// once a `clusterCursorInterval`. A participant whose relay is silent is disconnected here
    /// as if its connection had been closed by its peer: the others hear it is away (every
    /// relay that notices says so; the log keeps the first), and unless it resumes somewhere
    /// within the grace period, it departs.
    mutating func clusterTick(at now: Int64) -> [RelayDirective] {
        guard cluster != nil else { return [] }
        let stalls = clusterAbsencesConfirmed(at: now) + clusterStalls(at: now)
        if let last = cluster?.lastCursors, now - last < RelayCore.clusterCursorInterval { return stalls }
        cluster?.lastCursors = now
        var advanced: [(ParticipantKey, UInt64, RelayConnectionID)] = []
        var stranded: [ParticipantKey] = []
        let relay = cluster?.relay
        for (sessionID, session) in sessions {
            for (participantID, participant) in session.participants {
                guard let connection = participant.connection else {
                    let key = ParticipantKey(session: sessionID, participant: participantID)
                    if cluster?.available == true, participant.disconnectedAt == nil, let home = cluster?.homes[key], home != relay,
                       cluster?.stranded.contains(key) == false,
                       now - (cluster?.relaysHeard[home] ?? now) > RelayCore.clusterRelayTimeout {
                        stranded.append(key)
                    }
                    continue
                }
                let through = (participant.outbox.pending.first?.sequence ?? participant.outbox.nextSequence) - 1
                let key = ParticipantKey(session: sessionID, participant: participantID)
                if through > (cluster?.cursors[key] ?? 0) { advanced.append((key, through, connection)) }
            }
        }
        for (key, through, connection) in advanced {
            cluster?.cursors[key] = through
            submit(key.session, .cursor(participant: key.participant, through: through), from: connection)
        }
        for key in stranded {
            cluster?.stranded.insert(key)
            sessions[key.session]?.participants[key.participant]?.disconnectedAt = now
            sessions[key.session]?.participants[key.participant]?.grace = min(configuration.closedGracePeriod, configuration.gracePeriod)
            scheduleTick(key)
            submit(key.session, .away(participant: key.participant), from: RelayCore.clusterAbsentConnection)
        }
        return stalls
    }

    /// An unreliable datagram from a local participant: to this relay's recipients as always,
    /// and to the other relays' over core NATS.
    mutating func clusterRouteDatagram(_ tokenBytes: [UInt8], _ recipients: RelayRecipientList, _ body: [UInt8],
                                       from source: SocketAddress?, at now: Int64) -> [RelayDirective] {
        guard let key = tokens[RelayToken(tokenBytes)],
              let sender = sessions[key.session]?.participants[key.participant],
              let connection = sender.connection,
              let confirmed = sender.datagramsConfirmedAt,
              now - confirmed <= configuration.datagramRegistrationLifetime,
              source == nil || source == sender.datagramAddress,
              connections[connection]?.bucket.take(RelayCoreConfiguration.cost(payload: body.count), at: now) == true,
              sessions[key.session]?.fanout?.pausedUntil(at: now) == nil,
              let relay = cluster?.relay else { return [] }
        cluster?.output.datagrams.append(ClusterDatagram(session: key.session, relay: relay, sender: key.participant,
                                                         recipients: recipients, body: body))
        return localDatagrams(ClusterDatagram(session: key.session, relay: relay, sender: key.participant, recipients: recipients, body: body),
                              at: now)
    }

    /// A datagram another relay received: to this relay's recipients with a fresh registration.
    public mutating func onClusterDatagram(_ datagram: ClusterDatagram, at now: Int64) -> [RelayDirective] {
        guard let relay = cluster?.relay, datagram.relay != relay else { return [] }
        return localDatagrams(datagram, at: now)
    }

    private mutating func localDatagrams(_ datagram: ClusterDatagram, at now: Int64) -> [RelayDirective] {
        guard let session = sessions[datagram.session], session.participants[datagram.sender] != nil else { return [] }
        let lifetime = configuration.datagramRegistrationLifetime
        let directives: [RelayDirective] = recipientIDs(datagram.recipients, in: session, excluding: datagram.sender).compactMap { id in
            guard let recipient = session.participants[id], recipient.connection != nil,
                  let since = recipient.datagramsConfirmedAt, now - since <= lifetime else { return nil }
            return .sendDatagram(recipient.token, .delivery(sender: datagram.sender, body: datagram.body))
        }
        spendFanout(datagram.session, deliveries: directives.count, bytes: directives.count * datagram.body.count, at: now)
        return directives
    }

    // MARK: Applying the log

    /// Applies one entry of a session's log, in log order, at `now` on this relay's clock: the
    /// replica changes exactly as every other relay's does, and the frames for this relay's own
    /// connections go out. Entries that no longer hold (a join to a session gone, a frame of a
    /// participant removed, a frame already applied) change nothing, the same everywhere.
    public mutating func applyCluster(_ entry: ClusterLogEntry, at now: Int64) -> [RelayDirective] {
        guard let relay = cluster?.relay else { return [] }
        let progress = entry.relay == relay ? clusterProgress(entry.session, at: now) : []
        let held = sessions[entry.session] != nil
        noteClusterLogApplied(entry)
        let directives = progress + applyClusterEntry(entry, relay: relay, at: now) + clusterSessionAppeared(entry.session, at: now)
        if entry.relay == relay, held, sessions[entry.session] == nil { cluster?.purges.insert(entry.session) }
        return clusterPaced(directives)
    }

    /// Whether an entry of this relay's just ended `session` (an end, or the last participant
    /// leaving or departing), so that this relay, and no other, purges its subject once the
    /// others have read it (`ClusterRelay`); asked by the shell after each message it applies.
    public mutating func takeClusterPurge(_ session: UUID) -> Bool {
        cluster?.purges.remove(session) != nil
    }

    private mutating func applyClusterEntry(_ entry: ClusterLogEntry, relay: UInt64, at now: Int64) -> [RelayDirective] {
        let key = ParticipantKey(session: entry.session, participant: entry.participant)
        // The connection waiting on this relay for this admission, if it is still there.
        var waiting: RelayConnectionID?
        if entry.relay == relay, case .joined = entry.event {
            waiting = claimWaiting(RelayConnectionID(entry.connection))
        } else if entry.relay == relay, case .resumed = entry.event {
            waiting = claimWaiting(RelayConnectionID(entry.connection))
        }
        switch entry.event {
        case let .joined(participant, token, verifier, activity, ticketed):
            return applyJoin(key, participant, token: RelayToken(token), verifier: verifier, activity: activity, ticketed: ticketed,
                             waiting: waiting, at: entry.relay, now: now)
        case let .resumed(_, received):
            return applyResume(key, received: received, waiting: waiting, at: entry.relay, now: now)
        case let .frame(_, frame, orderedAt, effectiveAt):
            if entry.relay == relay, let sequence = frame.sequence, cluster?.submitted[key] == sequence { cluster?.submitted[key] = nil }
            return applyFrame(frame, from: key, orderedAt: orderedAt, effectiveAt: effectiveAt, at: now)
        case .away:
            guard let participant = sessions[key.session]?.participants[key.participant], !participant.away,
                  let others = sessions[key.session]?.order.filter({ $0 != key.participant }) else { return [] }
            sessions[key.session]?.participants[key.participant]?.away = true
            return broadcast(in: key.session, to: others, at: now) { .participantAway(sequence: $0, id: key.participant, away: true) }
        case .departed:
            cluster?.backlog[key] = nil
            cluster?.homes[key] = nil
            cluster?.stranded.remove(key)
            cluster?.departing.remove(key)
            cluster?.submitted[key] = nil
            cluster?.cursors[key] = nil
            return remove(key)
        case let .cursor(_, through):
            guard let outbox = sessions[key.session]?.participants[key.participant]?.outbox else { return [] }
            let before = outbox.bodyBytes
            sessions[key.session]?.participants[key.participant]?.outbox.acknowledge(through: min(through, outbox.nextSequence - 1))
            account(key.session, (sessions[key.session]?.participants[key.participant]?.outbox.bodyBytes ?? before) - before)
            return []
        }
    }

    /// `key` was admitted or resumed at `relay`, which is alive as far as this relay knows.
    private mutating func noteHome(_ key: ParticipantKey, _ relay: UInt64, at now: Int64) {
        cluster?.homes[key] = relay
        cluster?.stranded.remove(key)
        if cluster?.relaysHeard[relay] ?? .min < now { cluster?.relaysHeard[relay] = now }
    }

    private mutating func claimWaiting(_ connection: RelayConnectionID) -> RelayConnectionID? {
        guard cluster?.joining.removeValue(forKey: connection) != nil, case .challenged? = connections[connection]?.phase else { return nil }
        return connection
    }

    private mutating func applyJoin(_ key: ParticipantKey, _ participant: RelayParticipantEntry, token: RelayToken, verifier: [UInt8]?,
                                    activity: [UInt8], ticketed: Bool, waiting: RelayConnectionID?, at home: UInt64,
                                    now: Int64) -> [RelayDirective] {
        func refusal(_ fault: RelayFault) -> [RelayDirective] { waiting.map { refuse($0, fault) } ?? [] }
        var created = false
        if sessions[key.session] == nil {
            guard let verifier else {
                if let ended = endedSessions[key.session] { return refusal(RelayFault(.sessionEnded, ended.reason)) }
                return refusal(RelayFault(.sessionNotFound, key.session.uuidString))
            }
            // Not refused for having ended, as the single relay does: what this relay remembers is
            // its own (a relay that replays a purged log does not), and replicas must agree. The
            // handshake refuses the hello before it reaches the log while the end is remembered.
            sessions[key.session] = RelaySessionState(id: key.session, key: verifier, activity: activity)
            // Its creator's key, registered alike on every relay: its first operator's, and whether
            // its invites expire.
            sessions[key.session]?.operatorKeys = [participant.publicKey]
            sessions[key.session]?.ticketKeys = [participant.publicKey]
            sessions[key.session]?.ticketed = ticketed
            account(key.session, activity.count)
            created = true
            if let waiting, let host = connections[waiting]?.source?.key { setCreator(of: key.session, to: host) }
        } else if let verifier, let registered = sessions[key.session]?.key, !RelayAuthenticator.equal(verifier, registered) {
            return refusal(RelayFault(.wrongSecret, key.session.uuidString))
        }
        if sessions[key.session]?.removed.contains(key.participant) == true {
            return refusal(RelayFault(.removed, "participant \(key.participant.uuidString) was removed from the session"))
        }
        guard let others = sessions[key.session]?.order else { return [] }
        guard sessions[key.session]?.participants[key.participant] == nil else {
            return refusal(RelayFault(.protocolViolation, "participant \(key.participant.uuidString) is already in the session"))
        }
        guard others.count < min(configuration.maximumParticipants, RelayWireLimits.maximumParticipants) else {
            return refusal(RelayFault(.limitReached, "the session holds \(configuration.maximumParticipants) participants"))
        }
        let id = key.participant
        sessions[key.session]?.order.append(id)
        account(key.session, -(sessions[key.session]?.forgetFormer(id) ?? 0))
        sessions[key.session]?.participants[id] = RelaySessionState.Participant(entry: participant, token: token, connection: waiting)
        sessions[key.session]?.participants[id]?.lastAcknowledgement = AcknowledgementSchedule.start(id, at: now,
                                                                                                     interval: configuration.acknowledgementInterval)
        tokens[token] = key
        noteHome(key, home, at: now)
        var directives: [RelayDirective] = []
        if let waiting, let session = sessions[key.session] {
            connections[waiting]?.phase = .joined(session: key.session, participant: id)
            unauthenticated.remove(waiting)
            let welcome = RelayWelcomeFrame(
                sessionID: session.id, created: created, resumed: false, received: 0, token: token.bytes,
                activity: session.activity, participants: session.welcomeList,
                attachmentCount: session.attachmentOrder.count, orderedHistoryCount: session.orderedHistory.count,
                firstOrders: session.firstOrders)
            directives.append(.send(waiting, .welcome(welcome)))
            for attachmentID in session.attachmentOrder {
                if let attachment = session.attachments[attachmentID] { directives.append(.send(waiting, .journalEntry(attachment.entry))) }
            }
            directives += historyFrames(of: session, to: waiting)
            directives.append(probe(waiting, at: now))
        }
        // Who is away already, as a joiner on one relay hears it (`admit`): sequenced on every
        // relay alike, so that the joiner's numbering is the same wherever it resumes.
        let away = others.filter { sessions[key.session]?.participants[$0]?.away == true }
        for entry in sessions[key.session]?.welcomeOverflow ?? [] where entry.id != id {
            directives += broadcast(in: key.session, to: [id], at: now) { .participantJoined(sequence: $0, participant: entry) }
        }
        for awayID in away {
            directives += broadcast(in: key.session, to: [id], at: now) { .participantAway(sequence: $0, id: awayID, away: true) }
        }
        return directives + broadcast(in: key.session, to: others) { .participantJoined(sequence: $0, participant: participant) }
    }

    private mutating func applyResume(_ key: ParticipantKey, received: UInt64, waiting: RelayConnectionID?, at home: UInt64,
                                      now: Int64) -> [RelayDirective] {
        guard var participant = sessions[key.session]?.participants[key.participant] else {
            return waiting.map { refuse($0, RelayFault(.disconnected, "participant \(key.participant.uuidString) was gone longer than the grace period")) } ?? []
        }
        var directives: [RelayDirective] = []
        // Its connection here, if it had one (a resumption elsewhere or over a half-open one).
        if let old = participant.connection, old != waiting {
            connections[old]?.phase = .closing
            directives += [.send(old, .error(RelayFault(.disconnected, "replaced by a newer connection"))), .close(old)]
        }
        let before = participant.outbox.bodyBytes
        participant.connection = waiting
        participant.disconnectedAt = nil
        let wasAway = participant.away
        participant.away = false
        participant.outbox.acknowledge(through: min(received, participant.outbox.nextSequence - 1))
        participant.acknowledged = participant.received
        participant.unacknowledgedBytes = 0
        let pending = Array(participant.outbox.pending)
        let after = participant.outbox.bodyBytes
        sessions[key.session]?.participants[key.participant] = participant
        account(key.session, after - before)
        noteHome(key, home, at: now)
        cluster?.departing.remove(key)
        cluster?.submitted[key] = nil
        if let waiting {
            connections[waiting]?.phase = .joined(session: key.session, participant: key.participant)
            unauthenticated.remove(waiting)
            let welcome = RelayWelcomeFrame(
                sessionID: key.session, created: false, resumed: true, received: participant.received,
                token: participant.token.bytes, activity: [], participants: [], attachmentCount: 0)
            directives.append(.send(waiting, .welcome(welcome)))
            for frame in pending { directives.append(.send(waiting, frame)) }
            // Much to replay (a journal load under way, say): a window now, the rest as it drains.
            if let first = pending.first?.sequence { directives += clusterMarkBacklog(key, on: waiting, from: first) }
            directives.append(probe(waiting, at: now))
        }
        guard wasAway, let others = sessions[key.session]?.order.filter({ $0 != key.participant }) else { return directives }
        return directives + broadcast(in: key.session, to: others, at: now) { .participantAway(sequence: $0, id: key.participant, away: false) }
    }

    private mutating func applyFrame(_ frame: RelayFrame, from key: ParticipantKey, orderedAt: Int64, effectiveAt: Int64,
                                     at now: Int64) -> [RelayDirective] {
        guard let received = sessions[key.session]?.participants[key.participant]?.received,
              let sequence = frame.sequence, sequence == received + 1 else { return [] }
        sessions[key.session]?.participants[key.participant]?.receive(sequence, bytes: frame.payloadSize, at: now,
                                                                        interval: configuration.acknowledgementInterval)
        scheduleTick(key)
        let local = sessions[key.session]?.participants[key.participant]?.connection
        let connection = local ?? RelayCore.clusterAbsentConnection
        var directives: [RelayDirective]
        switch frame {
        case let .proposal(_, retention, body):
            directives = order(body, retention: retention, from: key, on: connection, at: now, stamped: (orderedAt, effectiveAt))
        case let .authoredProposal(_, statement, body):
            directives = orderAuthored(body, statement: statement, from: key, on: connection, at: now, stamped: (orderedAt, effectiveAt))
        case let .loadRequest(_, id):
            directives = clusterLoad(id, request: sequence, for: key)
        default:
            directives = route(frame, sequence: sequence, from: key, on: connection, at: now)
        }
        if let local { directives += acknowledgeIfPressing(key, on: local, at: now) }
        return directives
    }
}
