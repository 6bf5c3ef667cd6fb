import Foundation
import TandemWire

/// The relay's protocol, with no I/O: sessions, participants, routing, the journal, resumption,
/// limits and flood control.
///
/// It takes events (a connection opened, a frame arrived on it, it closed, a datagram arrived,
/// time passed) and returns directives (send this frame there, close that connection, send this
/// datagram). `RelayServer` carries them out on sockets and `InMemoryRelay` without any, so both
/// transports run exactly this logic. Time comes with each event; randomness (nonces, tokens)
/// comes with `onOpen`, so that the core is deterministic under test.
///
/// Bodies, activity descriptions, metadata and attachment data are opaque bytes: the core routes
/// by frame headers alone.
public struct RelayCore: Sendable {
    /// The timings and limits.
    public let configuration: RelayCoreConfiguration
    var connections: [RelayConnectionID: RelayConnectionState] = [:]
    var sessions: [UUID: RelaySessionState] = [:]
    /// What to add to the instants the shell passes to have Unix time in nanoseconds: the wall
    /// clock invites' tickets expire on (`InviteTicket`). The shell sets it once, as it starts.
    public var unixOffset: Int64 = 0
    var tokens: [RelayToken: ParticipantKey] = [:]
    var endedSessions: [UUID: EndedSession] = [:]
    /// The ended sessions in the order they ended, oldest from `endedHead` on: expired and
    /// evicted from the front, so that remembering them costs a bounded amount of memory and
    /// no scan of them all.
    var endedOrder: [UUID] = []
    var endedHead = 0
    /// How many ended sessions are remembered at most, and how much of each reason.
    static let maximumEndedSessions = 10_000
    static let maximumEndedReasonBytes = 256
    /// Connections open and not yet admitted.
    var unauthenticated: Set<RelayConnectionID> = []
    /// The connections not yet admitted by source (its key, or "" without one), oldest first;
    /// admitted and closed ones are pruned when the list is next read (`unadmitted(from:)`).
    var unadmittedBySource: [String: [RelayConnectionID]] = [:]
    /// Open connections by source (`RelaySource.key`) and by wider prefix (`RelaySource.wider`).
    var connectionsByAddress: [String: Int] = [:]
    /// Open sessions by the source (`RelaySource.key`) of the connection that created them.
    var sessionsByAddress: [String: Int] = [:]
    /// The admission proofs each source may have checked (`RelayCoreConfiguration.proofsPerSecondPerSource`),
    /// made on a source's first proof and forgotten once full again (`forgetIdleProofBuckets`).
    var proofBuckets: [String: TokenBucket] = [:]
    /// The admission proofs the relay checks in all (`RelayCoreConfiguration.proofsPerSecond`),
    /// made on the first proof.
    var relayProofBucket: TokenBucket?
    /// The key of the relay's datagram registration cookies.
    let cookieKey: [UInt8]

    /// The bytes the core holds that the relay-wide budget counts: journals (uploads reserved
    /// when announced), ordered histories and outbox bodies.
    public internal(set) var accountedBytes = 0
    /// The bytes the shell holds that the budget counts (output queues, partial frames); the
    /// shell keeps this up to date before each event.
    public var shellBytes = 0
    /// The process's resident memory beyond its baseline (what it held as the relay was made),
    /// when the shell measures it (`tandem serve` reads `/proc/self/statm` on its tick), else 0.
    /// Admission checks the larger of it and `budgetBytes`, so that what the budget cannot see
    /// (the runtime's and the allocator's slack) still keeps newcomers out at the limit. It is
    /// not added to `budgetBytes`: resident memory already holds what the budget counts, and
    /// shedding goes by `budgetBytes` alone, since memory the allocator keeps after a peak would
    /// otherwise drop readers who hold nothing. In cluster mode an upload is not refused by it
    /// either (whether the log applies an upload cannot depend on one relay's resident memory):
    /// there it keeps out new sessions and joins, and only the accounted budget drops an uploader.
    public var footprintBytes = 0
    /// What shedding for an upload's room told the sessions shed from, until the upload's
    /// directives carry it.
    var pendingShed: [RelayDirective] = []
    /// What each source holds of the accounted bytes (its sessions' `accountedBytes`), by its key
    /// ("" for sessions created without an address): kept as they change, for the fair shares.
    var bytesHeldBySource: [String: Int] = [:]
    /// The accounted bytes when shedding over the budget last found nothing to shed: until more
    /// is held, there is no use looking again.
    var unshedableAt: Int?
    /// How often each limit has refused or cut something.
    public internal(set) var limitCounts = RelayLimitCounts()
    /// Cluster mode's state (`RelayCore+Cluster.swift`); nil on a single relay.
    var cluster: RelayClusterState?
    /// The fan-out allowance of each source (`RelaySource.key`) over every session it sends
    /// into, made on first use and forgotten once whole again.
    var sourceFanout: [String: FanoutBudget] = [:]
    /// When something of a participant falls due on the tick (its acknowledgement, the end of
    /// its grace period, the lapse of its datagram registration): the tick visits these
    /// participants, not every one (`scheduleTick(_:)`).
    var participantDeadlines = Deadlines<ParticipantKey>()
    /// When the tick last visited every participant (nil: never).
    var lastParticipantSweep: Int64?
    /// When the tick last forgot the proof buckets and fan-out allowances of quiet sources.
    var lastShareSweep: Int64?
    /// How often the tick still visits every participant, behind the deadlines: whatever
    /// became due without being scheduled is then at most this late.
    static let participantSweepInterval: Int64 = 1_000_000_000
    /// How many participants the tick has visited, in all (what its deadlines save is measured by).
    var tickVisits = 0

    /// A participant by session and identity.
    struct ParticipantKey: Sendable, Hashable {
        var session: UUID
        var participant: UUID
    }

    /// Why a session ended, remembered for a while.
    struct EndedSession: Sendable {
        var by: UUID
        var reason: String
        var at: Int64
    }

    /// A relay core with `configuration`; `cookieKey` (32 bytes, random unless a test fixes it)
    /// signs datagram registration cookies.
    public init(configuration: RelayCoreConfiguration = RelayCoreConfiguration(),
                cookieKey: [UInt8] = RelayDatagramCookie.randomKey()) {
        self.configuration = configuration
        self.cookieKey = cookieKey
    }

    /// How many random bytes `onOpen` needs: a challenge nonce and a datagram token.
    public static let entropyLength = RelayWireLimits.secretLength + RelayWireLimits.tokenLength

    /// How many sessions are open.
    public var sessionCount: Int { sessions.count }

    /// How many connections are open.
    public var connectionCount: Int { connections.count }

    /// How many connections are open and not yet admitted.
    public var unauthenticatedCount: Int { unauthenticated.count }

    /// Everything the relay-wide budget counts, core and shell.
    public var budgetBytes: Int { accountedBytes + shellBytes }

    /// What admission checks against the memory limit: the budget's count, or the process's
    /// measured footprint when that is larger (`footprintBytes`).
    public var admissionBytes: Int { max(budgetBytes, footprintBytes) }

    /// The participants of a session in the order they joined (empty if there is no such session).
    public func participants(of session: UUID) -> [UUID] { sessions[session]?.order ?? [] }

    /// The display name of the participant joined on `connection` (as its hello gave it), nil
    /// when none is: for a test double that picks a participant by name
    /// (`RelayServer.directiveHook`).
    package func participantName(on connection: RelayConnectionID) -> String? {
        guard case let .joined(session, participant)? = connections[connection]?.phase else { return nil }
        return sessions[session]?.participants[participant]?.entry.displayName
    }

    /// Whether `token` belongs to a participant that is still in a session.
    public func knows(_ token: RelayToken) -> Bool { tokens[token] != nil }

    /// Whether `connection` is open and not yet admitted (the shell holds it to the smaller
    /// buffer of a stranger).
    public func isUnauthenticated(_ connection: RelayConnectionID) -> Bool { unauthenticated.contains(connection) }

    /// A connection opened at `now` from `peer` (nil when the transport has no addresses);
    /// `entropy` is `entropyLength` fresh random bytes.
    ///
    /// Refused at once over the cap on connections from its source (or its wider prefix), or on
    /// connections from its source not yet admitted. Over the relay-wide cap on connections not
    /// yet admitted, the oldest of the source holding the most of them makes room: a stranger
    /// holding many cannot keep a newcomer with none out.
    public mutating func onOpen(_ connection: RelayConnectionID, entropy: [UInt8], at now: Int64,
                                peer: SocketAddress? = nil) -> [RelayDirective] {
        precondition(entropy.count == RelayCore.entropyLength, "onOpen needs \(RelayCore.entropyLength) random bytes")
        var state = RelayConnectionState(
            nonce: Array(entropy.prefix(RelayWireLimits.secretLength)),
            token: RelayToken(Array(entropy.suffix(RelayWireLimits.tokenLength))),
            openedAt: now, lastHeard: now,
            bucket: TokenBucket(rate: configuration.floodRate, capacity: configuration.floodBurst, now: now))
        state.peer = peer
        state.peerHost = peer?.host
        let source = peer.map(RelaySource.init)
        state.source = source
        connections[connection] = state
        unauthenticated.insert(connection)
        unadmittedBySource[source?.key ?? "", default: []].append(connection)
        for key in [source?.key, source?.wider].compactMap({ $0 }) { connectionsByAddress[key, default: 0] += 1 }
        if let source, connectionsByAddress[source.key, default: 0] > configuration.maximumConnectionsPerAddress {
            limitCounts.connectionsPerAddress += 1
            return refuse(connection, RelayFault(.limitReached, "\(configuration.maximumConnectionsPerAddress) connections from \(source) are open"))
        }
        if let wider = source?.wider, connectionsByAddress[wider, default: 0] > configuration.maximumConnectionsPerWiderPrefix {
            limitCounts.connectionsPerAddress += 1
            return refuse(connection, RelayFault(.limitReached, "\(configuration.maximumConnectionsPerWiderPrefix) connections from \(wider) are open"))
        }
        if let source, unadmitted(from: source.key).count > configuration.maximumUnadmittedPerSource {
            limitCounts.unauthenticated += 1
            return refuse(connection, RelayFault(.limitReached, "\(configuration.maximumUnadmittedPerSource) connections from \(source) are waiting to be admitted"))
        }
        guard unauthenticated.count > configuration.maximumUnauthenticatedConnections else { return [] }
        limitCounts.unauthenticated += 1
        // The source holding the most makes room, its oldest first; of sources holding as many,
        // the one whose oldest came first.
        var largest: (count: Int, oldest: RelayConnectionID)?
        for key in Array(unadmittedBySource.keys) {
            let waiting = unadmitted(from: key)
            guard let first = waiting.first else { continue }
            if let best = largest, waiting.count < best.count || (waiting.count == best.count && first.value > best.oldest.value) {
                continue
            }
            largest = (waiting.count, first)
        }
        guard let oldest = largest?.oldest, oldest != connection else {
            return refuse(connection, RelayFault(.limitReached, "the relay has \(configuration.maximumUnauthenticatedConnections) connections waiting to be admitted"))
        }
        return refuse(oldest, RelayFault(.limitReached, "making room: the relay has \(configuration.maximumUnauthenticatedConnections) connections waiting to be admitted"))
    }

    /// The connections from the source keyed `key` that are open and not yet admitted, oldest
    /// first; the others are pruned from its list.
    mutating func unadmitted(from key: String) -> [RelayConnectionID] {
        guard let list = unadmittedBySource[key] else { return [] }
        let open = list.filter { unauthenticated.contains($0) && connections[$0].map { if case .closing = $0.phase { false } else { true } } == true }
        unadmittedBySource[key] = open.isEmpty ? nil : open
        return open
    }

    /// A connection closed at `now` (the peer went, or the shell closed it). `byPeer` says the
    /// peer closed it itself (end of stream, a reset, a hang-up): then the participant on it has
    /// `configuration.closedGracePeriod` to resume, a process that exited or was killed rather
    /// than a network that went quiet; otherwise (a silent connection timed out, the shell cut
    /// it) the longer `gracePeriod`. The others hear at once (`participantAway`) that a
    /// participant's connection was closed by its peer; a silent one is not announced.
    public mutating func onClose(_ connection: RelayConnectionID, at now: Int64, byPeer: Bool = false) -> [RelayDirective] {
        guard let state = connections.removeValue(forKey: connection) else { return [] }
        unauthenticated.remove(connection)
        for key in [state.source?.key, state.source?.wider].compactMap({ $0 }) {
            let left = connectionsByAddress[key, default: 1] - 1
            connectionsByAddress[key] = left > 0 ? left : nil
        }
        guard case let .joined(session, participant) = state.phase,
              sessions[session]?.participants[participant]?.connection == connection else { return [] }
        // Not removed yet: the participant has the grace period to resume.
        sessions[session]?.participants[participant]?.connection = nil
        sessions[session]?.participants[participant]?.disconnectedAt = now
        sessions[session]?.participants[participant]?.grace =
            byPeer ? min(configuration.closedGracePeriod, configuration.gracePeriod) : configuration.gracePeriod
        scheduleTick(ParticipantKey(session: session, participant: participant))
        // Cluster hook: the others hear of it through the log.
        if cluster != nil { return clusterClosed(ParticipantKey(session: session, participant: participant), byPeer: byPeer, on: connection) }
        guard byPeer, let others = sessions[session]?.order.filter({ $0 != participant }) else { return [] }
        sessions[session]?.participants[participant]?.away = true
        return broadcast(in: session, to: others, at: now) { .participantAway(sequence: $0, id: participant, away: true) }
    }

    /// Bytes on `connection` could not be decoded: the offender gets the error and is dropped.
    public mutating func onMalformed(_ error: WireError, from connection: RelayConnectionID, at now: Int64) -> [RelayDirective] {
        if case let .unsupportedVersion(version) = error.code, case .greeting? = connections[connection]?.phase {
            return refuseVersion(connection, peerVersion: version)
        }
        return drop(connection, fault: RelayFault(.protocolViolation, error.description), at: now)
    }

    /// The shell found `connection` over a limit it enforces (its output queue, or the bytes a
    /// stranger may buffer): the connection is dropped with `fault`, and the participant on it
    /// removed.
    public mutating func onOverLimit(_ connection: RelayConnectionID, _ fault: RelayFault, outputQueue: Bool,
                                     at now: Int64) -> [RelayDirective] {
        if outputQueue { limitCounts.outputQueue += 1 } else { limitCounts.unauthenticatedBytes += 1 }
        return drop(connection, fault: fault, at: now)
    }

    /// A frame arrived on `connection` at `now`.
    public mutating func onFrame(_ frame: RelayFrame, from connection: RelayConnectionID, at now: Int64) -> [RelayDirective] {
        guard var state = connections[connection] else { return [] }
        if case .closing = state.phase { return [] }
        state.lastHeard = now
        if case .hello = frame { state.greeted = true }
        let paid = state.bucket.take(RelayCoreConfiguration.cost(payload: frame.payloadSize), at: now)
        connections[connection] = state
        guard paid else {
            limitCounts.flooding += 1
            return drop(connection, fault: RelayFault(.flooding, "more than \(Int(configuration.floodRate)) frames a second"), at: now)
        }
        switch state.phase {
        case .greeting:
            return greet(connection, frame, at: now)
        case let .challenged(hello, exists):
            return admission(connection, frame, hello: hello, sessionExists: exists, nonce: state.nonce, at: now)
        case let .joined(session, participant):
            let key = ParticipantKey(session: session, participant: participant)
            let spentBefore = sessions[session]?.fanout?.spent ?? (deliveries: 0, bytes: 0)
            var directives = handle(frame, from: key, on: connection, at: now)
            // Acknowledgements, pings and pongs fan nothing out and never pause their sender.
            guard frame.sequence != nil, sessions[session]?.participants[participant]?.connection == connection else { return directives }
            let spentAfter = sessions[session]?.fanout?.spent ?? (deliveries: 0, bytes: 0)
            let spent = (deliveries: spentAfter.deliveries - spentBefore.deliveries, bytes: spentAfter.bytes - spentBefore.bytes)
            if let until = fanoutPause(key, spent: spent, source: state.source?.key, at: now) {
                limitCounts.fanoutPauses += 1
                directives.append(.pauseReading(connection, until: until))
            }
            return directives
        case .closing:
            return []
        }
    }

    /// The answer to the challenge, within the caps: a source may have so many proofs checked a
    /// second; at the memory budget only those whose source (and, for a join, whose session)
    /// holds less than its fair share are let in (resumptions always are); a creator's source may
    /// hold so many sessions; and a resumption may not acknowledge what it was never sent.
    private mutating func admission(_ connection: RelayConnectionID, _ frame: RelayFrame, hello: RelayHello, sessionExists: Bool,
                                    nonce: [UInt8], at now: Int64) -> [RelayDirective] {
        let sessionID = hello.sessionID
        let existed = sessions[sessionID] != nil
        let source = connections[connection]?.source
        if let source, !takeProof(from: source, at: now) {
            limitCounts.proofs += 1
            return refuse(connection, RelayFault(.limitReached, "more admissions a second from \(source) than its share"))
        }
        if !hello.resume, admissionBytes >= configuration.memoryLimit,
           !fairShare(of: source?.key, session: existed ? sessionID : nil).admitsMore {
            limitCounts.memory += 1
            return refuse(connection, RelayFault(.limitReached, "the relay is at its memory limit of \(configuration.memoryLimit) bytes"))
        }
        if !existed, hello.create, !hello.resume, case .claim = frame, let host = source?.key,
           sessionsByAddress[host, default: 0] >= configuration.maximumSessionsPerAddress {
            limitCounts.sessionsPerAddress += 1
            return refuse(connection, RelayFault(.limitReached, "\(configuration.maximumSessionsPerAddress) sessions from \(host) are open"))
        }
        var outboxBefore = 0
        if hello.resume, let outbox = sessions[sessionID]?.participants[hello.participant.id]?.outbox {
            guard hello.received < outbox.nextSequence else {
                limitCounts.forgedAcknowledgements += 1
                return drop(connection, fault: RelayFault(.protocolViolation, "resuming through \(hello.received), but the relay sent only \(outbox.nextSequence - 1)"), at: now)
            }
            outboxBefore = outbox.bodyBytes
        }
        var directives = answer(connection, frame, hello: hello, sessionExists: sessionExists, nonce: nonce, at: now)
        if !existed, sessions[sessionID] != nil, let host = source?.key { setCreator(of: sessionID, to: host) }
        guard case let .joined(_, participant)? = connections[connection]?.phase else { return directives }
        unauthenticated.remove(connection)
        if hello.resume, let after = sessions[sessionID]?.participants[participant]?.outbox.bodyBytes {
            account(sessionID, after - outboxBefore)
        }
        if sessions[sessionID]?.participants[participant]?.loads.isEmpty == false {
            directives.append(.notifyWhenDrained(connection))
        }
        return directives
    }

    /// `connection`'s output queue drained below the low-water mark: the next part of its
    /// participant's attachment loads.
    public mutating func onDrained(_ connection: RelayConnectionID, at now: Int64) -> [RelayDirective] {
        guard case let .joined(session, participant)? = connections[connection]?.phase,
              sessions[session]?.participants[participant]?.connection == connection else { return [] }
        // Cluster hook: a paced outbox goes on (`clusterDrained`).
        if cluster != nil { return clusterDrained(connection) }
        return sendLoads(to: ParticipantKey(session: session, participant: participant))
    }

    /// A datagram arrived at `now` from `source` (nil from a transport without addresses):
    /// a registration step or an unreliable message to route.
    ///
    /// A registration is answered only at the address of the participant's own TCP
    /// connection, with a cookie of the same size as the request; it binds only when the
    /// cookie comes back from there. An unreliable message is routed only from a sender with
    /// a live connection whose bound address it comes from, and only to recipients with a live
    /// connection and a fresh registration: no address that did not ask gets anything.
    public mutating func onDatagram(_ datagram: RelayDatagram, from source: SocketAddress? = nil, at now: Int64) -> [RelayDirective] {
        switch datagram {
        case let .register(tokenBytes):
            guard let source, registrant(tokenBytes, from: source, at: now) != nil else { return [] }
            let cookie = RelayDatagramCookie.make(key: cookieKey, token: tokenBytes, address: source, at: now)
            return [.answerDatagram(source, .cookie(token: tokenBytes, cookie: cookie))]
        case let .confirm(tokenBytes, cookie):
            guard let source, let key = registrant(tokenBytes, from: source, at: now) else { return [] }
            guard let issued = RelayDatagramCookie.issued(cookie, key: cookieKey, token: tokenBytes, address: source),
                  issued <= now, now - issued <= configuration.datagramCookieLifetime else {
                limitCounts.datagramRegistrations += 1
                return []
            }
            sessions[key.session]?.participants[key.participant]?.datagramsConfirmedAt = now
            sessions[key.session]?.participants[key.participant]?.datagramAddress = source
            scheduleTick(key)
            return [.bindDatagrams(RelayToken(tokenBytes), source), .answerDatagram(source, .registered(token: tokenBytes))]
        case let .unreliable(tokenBytes, recipients, body):
            // Cluster hook: the other relays' recipients too.
            if cluster != nil { return clusterRouteDatagram(tokenBytes, recipients, body, from: source, at: now) }
            return routeDatagram(tokenBytes, recipients, body, from: source, at: now)
        case .cookie, .registered, .delivery:
            return []
        }
    }

    /// A transport without addresses (in memory) bound `token`'s datagrams at `now`: no cookie
    /// is needed where nobody can spoof a source.
    public mutating func onDatagramsBound(_ token: RelayToken, at now: Int64) {
        guard let key = tokens[token] else { return }
        sessions[key.session]?.participants[key.participant]?.datagramsConfirmedAt = now
        scheduleTick(key)
    }

    /// The participant registering `tokenBytes` from `source`, when it has a live connection
    /// from that same IP address (and the connection can pay for the datagram).
    private mutating func registrant(_ tokenBytes: [UInt8], from source: SocketAddress, at now: Int64) -> ParticipantKey? {
        guard let key = tokens[RelayToken(tokenBytes)],
              let connection = sessions[key.session]?.participants[key.participant]?.connection,
              let peerHost = connections[connection]?.peerHost, peerHost == source.host,
              connections[connection]?.bucket.take(1, at: now) == true else {
            limitCounts.datagramRegistrations += 1
            return nil
        }
        return key
    }

    mutating func routeDatagram(_ tokenBytes: [UInt8], _ recipients: RelayRecipientList, _ body: [UInt8],
                                        from source: SocketAddress?, at now: Int64) -> [RelayDirective] {
        guard let key = tokens[RelayToken(tokenBytes)],
              let sender = sessions[key.session]?.participants[key.participant],
              let connection = sender.connection,
              let confirmed = sender.datagramsConfirmedAt,
              now - confirmed <= configuration.datagramRegistrationLifetime,
              source == nil || source == sender.datagramAddress else { return [] }
        // A datagram over the sender's rate or its session's fan-out is dropped, not punished:
        // datagrams may be lost anyway.
        guard connections[connection]?.bucket.take(RelayCoreConfiguration.cost(payload: body.count), at: now) == true,
              sessions[key.session]?.fanout?.pausedUntil(at: now) == nil,
              let session = sessions[key.session] else { return [] }
        let lifetime = configuration.datagramRegistrationLifetime
        let directives: [RelayDirective] = recipientIDs(recipients, in: session, excluding: key.participant).compactMap { id in
            guard let recipient = session.participants[id], recipient.connection != nil,
                  let since = recipient.datagramsConfirmedAt, now - since <= lifetime else { return nil }
            return .sendDatagram(recipient.token, .delivery(sender: key.participant, body: body))
        }
        spendFanout(key.session, deliveries: directives.count, bytes: directives.count * body.count, at: now)
        return directives
    }

    /// Time passed: acknowledge what arrived, time out handshakes and silent connections, expire
    /// datagram registrations, and remove participants gone longer than the grace period.
    public mutating func onTick(at now: Int64) -> [RelayDirective] {
        var directives: [RelayDirective] = []
        var overdue: [RelayConnectionID] = []
        var silentStrangers: [RelayConnectionID] = []
        var silent: [RelayConnectionID] = []
        var probing: [RelayConnectionID] = []
        for (id, state) in connections {
            switch state.phase {
            case .greeting where !state.greeted:
                if now - state.openedAt > min(configuration.helloTimeout, configuration.handshakeTimeout) { silentStrangers.append(id) }
            case .greeting, .challenged:
                if now - state.openedAt > configuration.handshakeTimeout { overdue.append(id) }
            case .joined:
                if now - state.lastHeard > configuration.idleTimeout {
                    silent.append(id)
                } else if configuration.isProbeDue(lastProbe: state.lastProbe, lastHeard: state.lastHeard, at: now) {
                    // Owed acknowledgements will be heard: the participant is silent only later.
                    guard case let .joined(session, participant) = state.phase,
                          (sessions[session]?.participants[participant]?.outbox.count ?? 0) > 0 else {
                        probing.append(id)
                        continue
                    }
                    if configuration.isProbeDue(lastProbe: state.lastProbe, lastHeard: state.lastHeard, owes: true, at: now) {
                        probing.append(id)
                    }
                }
            case .closing:
                break
            }
        }
        for id in overdue { directives += refuse(id, RelayFault(.protocolViolation, "no hello and proof within the handshake timeout")) }
        limitCounts.silentStrangers += silentStrangers.count
        for id in silentStrangers { directives += refuse(id, RelayFault(.protocolViolation, "no hello within the hello timeout")) }
        // Once a second, what the fair shares remember of sources that went quiet is forgotten.
        if lastShareSweep.map({ now - $0 >= RelayCore.participantSweepInterval }) ?? true {
            lastShareSweep = now
            forgetIdleProofBuckets(at: now)
            sourceFanout = sourceFanout.filter { !$0.value.isFull(at: now) }
        }
        for id in silent {
            directives.append(.close(id))
            directives += onClose(id, at: now)
        }
        for id in probing { directives.append(probe(id, at: now)) }
        var expired: [ParticipantKey] = []
        var acknowledging: [(ParticipantKey, RelayConnectionID)] = []
        var lapsed: [(ParticipantKey, RelayToken)] = []
        var visits = 0
        func visit(_ key: ParticipantKey, _ participant: RelaySessionState.Participant) {
            visits += 1
            switch tickDue(participant, at: now) {
            case .expired: expired.append(key)
            case let .due(acknowledge, lapse):
                if acknowledge, let connection = participant.connection {
                    acknowledging.append((key, connection))
                }
                if lapse { lapsed.append((key, participant.token)) }
            }
        }
        // The participants whose deadlines came, or, once a second, every one.
        let due = participantDeadlines.popDue(at: now)
        if lastParticipantSweep.map({ now - $0 >= RelayCore.participantSweepInterval }) ?? true {
            lastParticipantSweep = now
            for (sessionID, session) in sessions {
                for (participantID, participant) in session.participants {
                    visit(ParticipantKey(session: sessionID, participant: participantID), participant)
                }
            }
        } else {
            for key in due {
                if let participant = sessions[key.session]?.participants[key.participant] { visit(key, participant) }
            }
        }
        tickVisits += visits
        // Mutated only after the walk, so that no copy of a session is alive while it changes.
        for (key, connection) in acknowledging {
            guard let frame = sessions[key.session]?.participants[key.participant]?.acknowledgeReceived(
                at: now, interval: configuration.acknowledgementInterval) else { continue }
            directives.append(.send(connection, frame))
        }
        for (key, token) in lapsed {
            sessions[key.session]?.participants[key.participant]?.datagramsConfirmedAt = nil
            sessions[key.session]?.participants[key.participant]?.datagramAddress = nil
            directives.append(.forgetToken(token))
        }
        // One deadline per participant: those that came, or were acted on, are scheduled anew
        // from what is left of them.
        for key in due { scheduleTick(key) }
        for (key, _) in acknowledging { scheduleTick(key) }
        for (key, _) in lapsed { scheduleTick(key) }
        // Cluster hook: removals and delivery cursors go through the log.
        for key in expired { directives += cluster == nil ? remove(key) : clusterDepart(key, at: now) }
        if cluster != nil { directives += clusterTick(at: now) }
        while endedHead < endedOrder.count {
            if let ended = endedSessions[endedOrder[endedHead]], now - ended.at < configuration.endedMemory { break }
            forgetOldestEnded()
        }
        return directives
    }

    /// What the tick owes a participant at `now`: its removal once its grace period is over;
    /// else an acknowledgement when one is due, and the end of a lapsed datagram registration.
    enum TickDue {
        case expired
        case due(acknowledge: Bool, lapse: Bool)
    }

    /// What the tick owes `participant` at `now`.
    func tickDue(_ participant: RelaySessionState.Participant, at now: Int64) -> TickDue {
        if let since = participant.disconnectedAt, now - since >= participant.grace { return .expired }
        let acknowledge = participant.connection != nil && participant.received > participant.acknowledged
            && now >= participant.acknowledgementDue(interval: configuration.acknowledgementInterval)
        let lapse = participant.datagramsConfirmedAt.map { now - $0 > configuration.datagramRegistrationLifetime } ?? false
        return .due(acknowledge: acknowledge, lapse: lapse)
    }

    /// The instant from which the tick owes `participant` something as it is now (the soonest
    /// of `tickDue`'s three), nil when nothing is coming.
    func nextTickDue(_ participant: RelaySessionState.Participant) -> Int64? {
        var soonest: Int64?
        func consider(_ instant: Int64) { soonest = min(soonest ?? instant, instant) }
        if let since = participant.disconnectedAt { consider(since &+ participant.grace) }
        if participant.connection != nil, participant.received > participant.acknowledged {
            consider(participant.acknowledgementDue(interval: configuration.acknowledgementInterval))
        }
        if let confirmed = participant.datagramsConfirmedAt { consider(confirmed &+ configuration.datagramRegistrationLifetime &+ 1) }
        return soonest
    }

    /// Schedules the tick's next visit to `key`'s participant, after a change that may have
    /// brought something of it due sooner: its disconnection (grace period), a frame it sent (an
    /// acknowledgement), a datagram registration confirmed (its lapse); and after a visit. It
    /// replaces the participant's deadline with the soonest of what is coming now. A change
    /// that makes something later needs none: the visit then finds nothing due.
    mutating func scheduleTick(_ key: ParticipantKey) {
        guard let participant = sessions[key.session]?.participants[key.participant],
              let due = nextTickDue(participant) else {
            participantDeadlines.remove(key)
            return
        }
        participantDeadlines.set(key, at: due)
    }

    /// Remembers that `session` ended, by whom and why, for resumptions into it; beyond
    /// `maximumEndedSessions` the oldest is forgotten.
    mutating func rememberEnded(_ session: UUID, by participant: UUID, reason: String, at now: Int64) {
        var kept = reason
        while kept.utf8.count > RelayCore.maximumEndedReasonBytes { kept.removeLast() }
        if endedSessions.updateValue(EndedSession(by: participant, reason: kept, at: now), forKey: session) == nil {
            endedOrder.append(session)
        }
        while endedOrder.count - endedHead > RelayCore.maximumEndedSessions { forgetOldestEnded() }
    }

    private mutating func forgetOldestEnded() {
        endedSessions[endedOrder[endedHead]] = nil
        endedHead += 1
        if endedHead > 1024, endedHead * 2 > endedOrder.count {
            endedOrder.removeFirst(endedHead)
            endedHead = 0
        }
    }

    // MARK: Accounting

    /// Adds `delta` bytes to what `session` and the relay account for.
    mutating func account(_ session: UUID, _ delta: Int) {
        guard delta != 0, sessions[session] != nil else { return }
        accountedBytes += delta
        sessions[session]?.accountedBytes += delta
        holdBySource(sessions[session]?.creatorAddress, delta)
    }

    /// Adds `delta` to what the source keyed `key` (nil: sessions created without an address)
    /// holds, forgetting a source that holds nothing.
    mutating func holdBySource(_ key: String?, _ delta: Int) {
        guard delta != 0 else { return }
        let held = bytesHeldBySource[key ?? "", default: 0] + delta
        bytesHeldBySource[key ?? ""] = held > 0 ? held : nil
    }

    /// Records `host` as the source that created `session`: what the cap on sessions per source
    /// and the fair shares count it under from now on (what it holds already moves with it).
    mutating func setCreator(of session: UUID, to host: String) {
        guard let held = sessions[session]?.accountedBytes else { return }
        holdBySource(sessions[session]?.creatorAddress, -held)
        sessions[session]?.creatorAddress = host
        holdBySource(host, held)
        sessionsByAddress[host, default: 0] += 1
    }

    /// Whether the budget has room for `bytes` more, by what admission checks (`admissionBytes`,
    /// the footprint included): for refusals only (new sessions, joins, uploads), never drops.
    func budgetFits(_ bytes: Int) -> Bool {
        admissionBytes + bytes <= configuration.memoryLimit
    }

    /// Whether the accounted budget alone (`budgetBytes`) has room for `bytes` more: what
    /// anything that drops or sheds checks, so that the footprint alone drops nobody.
    func accountedBudgetFits(_ bytes: Int) -> Bool {
        budgetBytes + bytes <= configuration.memoryLimit
    }

    /// Spends fan-out of `session` at `now`.
    mutating func spendFanout(_ session: UUID, deliveries: Int, bytes: Int, at now: Int64) {
        guard deliveries > 0 else { return }
        if sessions[session]?.fanout == nil {
            sessions[session]?.fanout = FanoutBudget(
                deliveriesPerSecond: configuration.fanoutDeliveriesPerSecond, bytesPerSecond: configuration.fanoutBytesPerSecond,
                burstSeconds: configuration.fanoutBurst, now: now)
        }
        sessions[session]?.fanout?.spend(deliveries: deliveries, bytes: bytes, at: now)
    }

    /// Forgets a session and releases what it counted against the caps and the budget.
    mutating func discardSession(_ id: UUID) {
        guard let session = sessions.removeValue(forKey: id) else { return }
        accountedBytes -= session.accountedBytes
        holdBySource(session.creatorAddress, -session.accountedBytes)
        if let host = session.creatorAddress {
            let left = sessionsByAddress[host, default: 1] - 1
            sessionsByAddress[host] = left > 0 ? left : nil
        }
    }

    // MARK: Dropping and removing

    /// Refuses a connection that is not admitted: the fault, then close.
    mutating func refuse(_ connection: RelayConnectionID, _ fault: RelayFault) -> [RelayDirective] {
        connections[connection]?.phase = .closing
        // No longer waiting to be admitted: the caps on those count only who still may be.
        unauthenticated.remove(connection)
        return [.send(connection, .refusal(fault)), .close(connection)]
    }

    /// Drops a connection for bad behaviour: the fault as an error, close, and the participant on
    /// it (if any) is removed at once, without a grace period.
    mutating func drop(_ connection: RelayConnectionID, fault: RelayFault, at now: Int64) -> [RelayDirective] {
        guard let state = connections[connection] else { return [] }
        connections[connection]?.phase = .closing
        unauthenticated.remove(connection)
        var directives: [RelayDirective] = [.send(connection, .error(fault)), .close(connection)]
        if case let .joined(session, participant) = state.phase {
            let key = ParticipantKey(session: session, participant: participant)
            sessions[session]?.rememberDrop(participant, fault)
            // Cluster hook: the removal goes through the log.
            directives += cluster == nil ? remove(key, closing: false) : clusterDepart(key, at: now)
        }
        return directives
    }

    /// Removes a participant from its session: the others hear it left; its connection (if any)
    /// is closed; an empty session is gone.
    mutating func remove(_ key: ParticipantKey, closing: Bool = true) -> [RelayDirective] {
        guard let participant = sessions[key.session]?.participants.removeValue(forKey: key.participant) else { return [] }
        sessions[key.session]?.order.removeAll { $0 == key.participant }
        let remembered = sessions[key.session]?.rememberFormer(participant.entry) ?? 0
        let reserved = participant.upload?.reserved ?? 0
        sessions[key.session]?.journalBytes -= reserved
        account(key.session, remembered - (participant.outbox.bodyBytes + reserved))
        tokens[participant.token] = nil
        var directives: [RelayDirective] = [.forgetToken(participant.token)]
        if closing, let connection = participant.connection {
            connections[connection]?.phase = .closing
            directives.append(.close(connection))
        }
        guard let order = sessions[key.session]?.order, !order.isEmpty else {
            discardSession(key.session)
            return directives
        }
        return directives + broadcast(in: key.session, to: order) { .participantLeft(sequence: $0, id: key.participant) }
    }

    // MARK: Routing

    /// Appends a frame to each recipient's outbox, and sends it to those connected. A recipient
    /// whose outbox overflows is removed as too slow. Each outbox grows in place: no copy of a
    /// participant is alive while its outbox changes, so that an append costs the same whatever
    /// the outbox holds.
    mutating func broadcast(in sessionID: UUID, to recipients: [UUID], at now: Int64? = nil,
                            _ make: (UInt64) -> RelayFrame) -> [RelayDirective] {
        var directives: [RelayDirective] = []
        directives.reserveCapacity(recipients.count)
        let (maximumFrames, maximumBytes) = (configuration.maximumOutboxFrames, configuration.maximumOutboxBytes)
        let acknowledging = now.map { (now: $0, interval: configuration.acknowledgementInterval) }
        guard let outcome = sessions[sessionID]?.fanOut(to: recipients, maximumFrames: maximumFrames, maximumBytes: maximumBytes,
                                                        acknowledging: acknowledging, patience: configuration.backlogPatience.nanoseconds,
                                                        into: &directives, make) else { return [] }
        account(sessionID, outcome.added)
        if now != nil, outcome.deliveries > 0 { sessions[sessionID]?.backlog = outcome.deepest }
        if let now { spendFanout(sessionID, deliveries: outcome.deliveries, bytes: outcome.bytes, at: now) }
        for id in outcome.overflowing {
            let key = ParticipantKey(session: sessionID, participant: id)
            // Cluster hook: only the participant's own relay removes it, through the log.
            if cluster != nil {
                directives += clusterOverflow(key, at: now)
                continue
            }
            limitCounts.outbox += 1
            let fault = RelayFault(.disconnected, "too far behind: \(configuration.maximumOutboxFrames) frames or \(configuration.maximumOutboxBytes) bytes unacknowledged")
            if let connection = sessions[sessionID]?.participants[id]?.connection {
                directives += [.send(connection, .error(fault))]
            }
            sessions[sessionID]?.rememberDrop(id, fault)
            directives += remove(key)
        }
        return directives
    }

    /// The participants a recipient list names, in join order, without the sender or strangers.
    func recipientIDs(_ recipients: RelayRecipientList, in session: RelaySessionState, excluding sender: UUID) -> [UUID] {
        switch recipients {
        case .everyone:
            return session.order.filter { $0 != sender }
        case let .only(ids):
            let wanted = Set(ids)
            return session.order.filter { $0 != sender && wanted.contains($0) }
        }
    }
}
