import Foundation
import TandemWire

/// A participant's side of the relay protocol, with no I/O: the handshake, sequence numbers and
/// acknowledgements, sending again after a reconnection, dropping what arrives twice, requests,
/// pings and reconnection timing, and which relay of the link's list to connect to.
///
/// Both transports' links run it: `RelayClientLink` feeds it what its transport reports and
/// carries out the directives it returns. Time comes with each call.
///
/// With several relays (an invite that names more than one), the link starts at a random one
/// (the first when it creates the session) and moves to the next of the list whenever a
/// connection cannot be opened, is lost, or reaches a relay that does not hold the session.
/// Before the first join it tries each relay once, at once, and fails naming every relay and what
/// it said; once joined it goes round the list with the usual backoff until the reconnection
/// limit, skipping relays that said the session is not there (each gets another chance after
/// the next successful resumption), and fails for good when every relay says so.
struct RelayLinkCore: Sendable {
    enum Phase: Sendable, Equatable {
        /// Opening a connection.
        case connecting
        /// Hello sent; waiting for the challenge.
        case greeting
        /// Proof or claim sent; waiting for the welcome.
        case proving
        /// Welcomed; waiting for this many journal entries, then this many history entries.
        case welcoming(attachments: Int, history: Int)
        /// Joined and connected.
        case joined
        /// Joined once, connection lost; reconnecting.
        case interrupted
        /// Closed for good.
        case closed
    }

    private enum Request: Sendable {
        case add, remove
        case load([UInt8])
    }

    let request: RelayJoinRequest
    let configuration: RelayLinkConfiguration
    /// The relays of the link's list, as errors name them.
    let relays: [String]
    /// The relay of the current connection, or of the next one.
    private(set) var relay: Int
    /// The relay the link last joined or resumed on.
    private var joinedRelay: Int?
    /// Relays that said the session is not there, since the last successful resumption.
    private var absent: Set<Int> = []
    /// What each relay said when last tried and failed, since the last success, for the error.
    private var failures: [Int: String] = [:]
    private(set) var phase = Phase.connecting
    private(set) var hasJoined = false
    private var welcome: RelayWelcome?
    private var token: [UInt8] = []
    private var nextSequence: UInt64 = 1
    private var unacknowledged: [RelayFrame] = []
    private var unacknowledgedHead = 0
    private var received: UInt64 = 0
    private var acknowledged: UInt64 = 0
    private var lastAcknowledgement: Int64
    /// The payload bytes received since the last acknowledgement.
    private var unacknowledgedBytes = 0
    /// When this link last acknowledged, however (`AcknowledgementSchedule`).
    private var acknowledgedAt: Int64
    /// When the oldest frame sent on this connection that the relay has not acknowledged went
    /// out (nil: the relay owes nothing): the relay's acknowledgement, due within its interval,
    /// is then what the link will hear, and it need not ping.
    private var owedSince: Int64?
    private var requests: [UInt64: Request] = [:]
    private var leaving: UInt64?
    private var leaveStarted: Int64 = 0
    private let startedAt: Int64
    private var lastHeard: Int64
    /// Whether `connectionQuiet` was told and nothing was heard since.
    private var toldQuiet = false
    private var lastPing: Int64
    private var interruptedAt: Int64 = 0
    /// When the current attempt at a relay began (its connection was asked for).
    private var attemptStarted: Int64
    private var reconnectAt: Int64 = 0
    private var reconnectDelay: Int64
    /// Whether the relay last said it cannot order anything (`RelayNotice`), until it says it
    /// can or the link resumes (a resumption came through the log, so it orders again).
    private(set) var relayUnavailable = false

    /// A link for `request` over the relays named `relays` (one, by default), starting at the
    /// first when it creates the session, else at the one `randomness` (a random draw the shell
    /// injects, seeded in tests) picks.
    init(request: RelayJoinRequest, configuration: RelayLinkConfiguration, relays: [String] = ["the relay"],
         randomness: UInt64 = 0, at now: Int64) {
        precondition(!relays.isEmpty, "a link needs a relay")
        self.request = request
        self.configuration = configuration
        self.relays = relays
        relay = request.createIfAbsent ? 0 : Int(randomness % UInt64(relays.count))
        startedAt = now
        attemptStarted = now
        lastHeard = now
        lastPing = now
        lastAcknowledgement = AcknowledgementSchedule.start(request.participant.id, at: now, interval: configuration.acknowledgementInterval)
        acknowledgedAt = AcknowledgementSchedule.never
        reconnectDelay = configuration.reconnectDelay
    }

    /// Whether the link is closed for good.
    var isClosed: Bool { phase == .closed }

    /// Whether frames can go out now.
    private var isConnected: Bool { phase == .joined }

    /// How many frames wait for the relay's acknowledgement.
    var unacknowledgedCount: Int { unacknowledged.count - unacknowledgedHead }
    /// The bodies of messages and proposals the relay has not acknowledged, in bytes and frames:
    /// what `RelayLinkConfiguration.maximumQueuedBytes` and `maximumQueuedFrames` cap.
    /// Attachment chunks are not counted (an upload is bounded by its own size limit, and is
    /// awaited).
    private(set) var queuedMessageBytes = 0
    private(set) var queuedMessageFrames = 0

    // MARK: The transport's reports

    /// The connection is open: introduce the participant (again, on a resumption).
    mutating func onConnected(at now: Int64) -> [RelayLinkDirective] {
        guard phase == .connecting else { return [] }
        phase = .greeting
        lastHeard = now
        // A creator proves the relay's creation key, if it holds one; a resumption never needs it.
        let proof = request.createIfAbsent && !hasJoined ? configuration.creationKey.map {
            RelayCreationKey.proof(key: $0, sessionID: request.sessionID, participantID: request.participant.id,
                                   participantKey: request.identity.publicKey)
        } : nil
        let hello = RelayHello(
            sessionID: request.sessionID,
            participant: RelayParticipantEntry(id: request.participant.id, publicKey: request.identity.publicKey,
                                               displayName: request.participant.displayName, presence: request.presence),
            create: request.createIfAbsent, activity: hasJoined ? [] : request.activity,
            resume: hasJoined, received: received, creationProof: proof, ticket: hasJoined ? nil : request.ticket)
        return [.transmit(.hello(hello))]
    }

    /// The connection could not be opened, or dropped.
    mutating func onDisconnected(_ reason: String, at now: Int64) -> [RelayLinkDirective] {
        switch phase {
        case .closed, .interrupted:
            return []
        case .connecting, .greeting, .proving, .welcoming:
            return relayFailed(RelayError(.unreachable, reason), at: now)
        case .joined:
            if let leaving, leaving > 0 { return close(leaving: true) }
            phase = .interrupted
            toldQuiet = false
            interruptedAt = now
            reconnectDelay = configuration.reconnectDelay
            reconnectAt = now + reconnectDelay
            // Lost: the next attempt goes to the next relay of the list.
            if let next = nextRelay(after: relay) { relay = next }
            return [.emit(.connectionInterrupted)]
        }
    }

    /// The relay sent something this side cannot decode.
    mutating func onMalformed(_ error: WireError, at now: Int64) -> [RelayLinkDirective] {
        if case let .unsupportedVersion(version) = error.code {
            return fail(RelayError(.versionMismatch, "relay speaks protocol v\(version), this tandem speaks v\(RelayFrame.version)"))
        }
        return fail(RelayError(.protocolViolation, error.description))
    }

    /// A frame arrived.
    mutating func onFrame(_ frame: RelayFrame, at now: Int64) -> [RelayLinkDirective] {
        lastHeard = now
        guard toldQuiet, phase == .joined else { return handle(frame, at: now) }
        // A quiet relay heard again.
        toldQuiet = false
        return [.emit(.connectionResumed)] + handle(frame, at: now)
    }

    private mutating func handle(_ frame: RelayFrame, at now: Int64) -> [RelayLinkDirective] {
        switch frame {
        case let .challenge(nonce, exists):
            guard phase == .greeting else { return unexpected(frame) }
            phase = .proving
            let (sessionSignature, participantSignature) = sign(nonce)
            if exists {
                return [.transmit(.proof(sessionSignature: sessionSignature, participantSignature: participantSignature))]
            }
            guard request.createIfAbsent, !hasJoined else { return lacksSession(request.sessionID.uuidString, at: now) }
            return [.transmit(.claim(verifier: request.sessionKey.publicKey, sessionSignature: sessionSignature,
                                     participantSignature: participantSignature))]
        case let .welcome(frame):
            guard phase == .proving else { return unexpected(.welcome(frame)) }
            return welcomed(frame, at: now)
        case let .journalEntry(entry):
            guard case let .welcoming(attachments, history) = phase, attachments > 0 else { return unexpected(frame) }
            welcome?.attachments.append(Self.record(entry))
            phase = .welcoming(attachments: attachments - 1, history: history)
            return attachments == 1 && history == 0 ? completeJoin() : []
        case let .historyEntry(entry):
            guard case let .welcoming(0, history) = phase, history > 0 else { return unexpected(frame) }
            welcome?.orderedHistory.append(Self.delivery(entry))
            phase = .welcoming(attachments: 0, history: history - 1)
            return history == 1 ? completeJoin() : []
        case let .refusal(fault), let .error(fault):
            // "Session not found" is this relay's answer: another of the list may hold it.
            if fault.code == .sessionNotFound, phase == .greeting || phase == .proving { return lacksSession(fault.text, at: now) }
            return fail(Self.error(fault))
        case let .ack(through):
            acknowledge(through: through)
            // Still owed some: the wait for the rest counts from now.
            owedSince = unacknowledgedCount > 0 ? now : nil
            if let leaving, through >= leaving { return close(leaving: true) }
            return []
        case let .ping(value):
            return isConnected ? [.transmit(.pong(value))] : []
        case .pong:
            return []
        case let .notice(notice):
            return noticed(notice)
        default:
            return sequenced(frame, at: now)
        }
    }

    // MARK: The consumer's requests

    /// Numbers a frame for the relay and sends it at `now` (or keeps it until the connection is
    /// back). What the link owes the relay rides along when it may (`AcknowledgementSchedule`).
    mutating func submit(at now: Int64, _ make: (UInt64) -> RelayFrame) -> (sequence: UInt64, directives: [RelayLinkDirective]) {
        let sequence = nextSequence
        nextSequence += 1
        let frame = make(sequence)
        unacknowledged.append(frame)
        if let size = Self.queuedMessageSize(frame) {
            queuedMessageBytes += size
            queuedMessageFrames += 1
        }
        guard isConnected else { return (sequence, []) }
        if owedSince == nil { owedSince = now }
        guard received > acknowledged,
              AcknowledgementSchedule.mayPiggyback(acknowledgedAt: acknowledgedAt, at: now, interval: configuration.acknowledgementInterval)
        else { return (sequence, [.transmit(frame)]) }
        return (sequence, [.transmit(frame), .transmit(acknowledgement(at: now))])
    }

    /// Tracks a submitted request until its outcome.
    mutating func track(add sequence: UInt64) { requests[sequence] = .add }
    /// Tracks a submitted request until its outcome.
    mutating func track(remove sequence: UInt64) { requests[sequence] = .remove }
    /// Tracks a submitted request until its outcome.
    mutating func track(load sequence: UInt64) { requests[sequence] = .load([]) }

    /// Leaves: tells the relay, then closes once it acknowledges (or the timeout passes).
    mutating func leave(at now: Int64) -> [RelayLinkDirective] {
        guard phase != .closed, leaving == nil else { return phase == .closed ? [.left] : [] }
        guard hasJoined, phase == .joined else { return close(leaving: true) }
        let (sequence, directives) = submit(at: now) { .leave(sequence: $0) }
        leaving = sequence
        leaveStarted = now
        return directives
    }

    /// Time passed: acknowledge, ping, notice silence, reconnect, give up.
    mutating func onTick(at now: Int64) -> [RelayLinkDirective] {
        switch phase {
        case .closed:
            return []
        case .connecting, .greeting, .proving, .welcoming:
            if !hasJoined, now - startedAt > configuration.joinTimeout {
                return close(joinError: RelayError(.timedOut, "no welcome from the relay within \(configuration.joinTimeout / 1_000_000) ms"
                    + (relays.count > 1 ? " (\(triedList()))" : "")))
            }
            // One of several relays that does not answer (a dropped SYN, a stalled handshake)
            // must not take the whole join's time from the others; one still sending its
            // welcome (a long ordered history) keeps its chance.
            if !hasJoined, relays.count > 1, now - max(attemptStarted, lastHeard) > configuration.relayAttemptTimeout {
                return [.disconnect] + relayFailed(RelayError(.unreachable, "no answer within \(configuration.relayAttemptTimeout / 1_000_000) ms"), at: now)
            }
            if hasJoined, now - lastHeard > configuration.silenceLimit {
                return [.disconnect] + onDisconnected("no answer while resuming", at: now)
            }
            return []
        case .interrupted:
            if now - interruptedAt > configuration.reconnectLimit {
                return fail(RelayError(.disconnected, "could not reconnect within \(configuration.reconnectLimit / 1_000_000_000) s"
                    + (relays.count > 1 ? " (\(triedList()))" : "")))
            }
            guard now >= reconnectAt else { return [] }
            phase = .connecting
            lastHeard = now
            attemptStarted = now
            return [.connect(relay: relay)]
        case .joined:
            if let leaving, leaving > 0, now - leaveStarted > configuration.leaveTimeout { return close(leaving: true) }
            if now - lastHeard > configuration.silenceLimit {
                return [.disconnect] + onDisconnected("the relay was silent for \(configuration.silenceLimit / 1_000_000) ms", at: now)
            }
            var directives: [RelayLinkDirective] = []
            if !toldQuiet, now - lastHeard > configuration.quietLimit {
                toldQuiet = true
                directives.append(.emit(.connectionQuiet))
            }
            if received > acknowledged,
               AcknowledgementSchedule.isDue(last: lastAcknowledgement, acknowledgedAt: acknowledgedAt, at: now,
                                             interval: configuration.acknowledgementInterval) {
                directives.append(.transmit(acknowledgement(at: now)))
            }
            // An acknowledgement the relay owes, not yet late, will be heard: no ping for it, as
            // long as even a late one would still come within the quiet limit.
            let owedInTime = owedSince.map {
                now - $0 < configuration.acknowledgementWait && $0 + configuration.acknowledgementWait - lastHeard < configuration.quietLimit
            } ?? false
            if now - lastPing >= configuration.pingInterval, now - lastHeard >= configuration.pingSilence, !owedInTime {
                lastPing = now
                directives.append(.transmit(.ping(UInt64(bitPattern: now))))
            }
            return directives
        }
    }

    // MARK: Inside

    /// The challenge signed with the session's key and with the participant's own.
    private func sign(_ nonce: [UInt8]) -> (session: [UInt8], participant: [UInt8]) {
        let participant = request.participant
        func message(_ signer: RelayAuthenticator.Signer) -> [UInt8] {
            RelayAuthenticator.challengeMessage(signer, nonce: nonce, sessionID: request.sessionID,
                                                participantID: participant.id, participantKey: participant.publicKey)
        }
        return (request.sessionKey.sign(message(.session)), request.identity.sign(message(.participant)))
    }

    private mutating func welcomed(_ frame: RelayWelcomeFrame, at now: Int64) -> [RelayLinkDirective] {
        let previousToken = token
        token = frame.token
        guard frame.resumed else {
            welcome = RelayWelcome(
                sessionID: frame.sessionID,
                participants: frame.participants.map(Self.record),
                activity: frame.activity, attachments: [], created: frame.created, firstOrders: frame.firstOrders)
            phase = .welcoming(attachments: frame.attachmentCount, history: frame.orderedHistoryCount)
            return frame.attachmentCount == 0 && frame.orderedHistoryCount == 0 ? completeJoin() : []
        }
        // Resumed: what the relay already has is done; the rest goes again, in order.
        acknowledge(through: frame.received)
        phase = .joined
        reconnectDelay = configuration.reconnectDelay
        var directives: [RelayLinkDirective] = [.emit(.connectionResumed)]
        // The welcome came back through the relay's log: it orders again, whatever it said before.
        if relayUnavailable {
            relayUnavailable = false
            directives.append(.emit(.relayAvailability(available: true, reason: "resumed")))
        }
        // On another relay, or with a new token: the datagram path is registered there afresh.
        if joinedRelay != relay || frame.token != previousToken { directives.append(.registerDatagrams(token: frame.token)) }
        succeeded()
        for frame in unacknowledged[unacknowledgedHead...] { directives.append(.transmit(frame)) }
        owedSince = unacknowledgedCount > 0 ? now : nil
        return directives
    }

    /// A notice from the relay: its availability, told once each time it changes; a code this
    /// build does not know asks nothing of it and is ignored.
    private mutating func noticed(_ notice: RelayNotice) -> [RelayLinkDirective] {
        guard hasJoined, phase != .closed else { return [] }
        let unavailable: Bool
        switch notice.code {
        case .unavailable: unavailable = true
        case .available: unavailable = false
        default: return []
        }
        guard unavailable != relayUnavailable else { return [] }
        relayUnavailable = unavailable
        return [.emit(.relayAvailability(available: !unavailable, reason: notice.text))]
    }

    /// Joined or resumed on `relay`: every relay gets a fresh chance from now on.
    private mutating func succeeded() {
        joinedRelay = relay
        absent.removeAll()
        failures.removeAll()
    }

    /// The relay said the session is not there: another relay of the list may hold it.
    private mutating func lacksSession(_ text: String, at now: Int64) -> [RelayLinkDirective] {
        absent.insert(relay)
        return [.disconnect] + relayFailed(RelayError(.sessionNotFound, text), at: now)
    }

    /// The current relay failed (could not be reached, dropped the connection while joining or
    /// resuming, or lacks the session): move to the next relay, or fail when none is left.
    private mutating func relayFailed(_ error: RelayError, at now: Int64) -> [RelayLinkDirective] {
        failures[relay] = error.code == .sessionNotFound ? "session not found" : error.detail
        guard hasJoined else {
            // Joining: each relay once, one after the other, at once.
            guard relays.count > 1 else { return close(joinError: error) }
            guard let next = nextRelay(after: relay, untried: true) else { return close(joinError: combinedError()) }
            relay = next
            phase = .connecting
            attemptStarted = now
            return [.disconnect, .connect(relay: next)]
        }
        guard let next = nextRelay(after: relay) else {
            // Every relay says the session is not there.
            return fail(relays.count > 1 ? combinedError() : error)
        }
        // A failed attempt at resuming: try the next relay after a longer pause.
        relay = next
        phase = .interrupted
        reconnectAt = now + reconnectDelay
        reconnectDelay = min(reconnectDelay * 2, 1_000_000_000)
        return []
    }

    /// The relay after `current` in the list, going round, that may hold the session (and,
    /// with `untried`, that has not failed yet); nil when there is none.
    private func nextRelay(after current: Int, untried: Bool = false) -> Int? {
        for step in 1...relays.count {
            let candidate = (current + step) % relays.count
            if absent.contains(candidate) || (untried && failures[candidate] != nil) { continue }
            return candidate
        }
        return nil
    }

    /// The relays tried and what each said, in the list's order: no secret is in any of it.
    private func triedList() -> String {
        relays.indices.compactMap { index in failures[index].map { "\(relays[index]): \($0)" } }.joined(separator: "; ")
    }

    /// The error of a link that tried every relay: session not found when every one said so,
    /// unreachable when any could not be reached.
    private func combinedError() -> RelayError {
        guard absent.count == relays.count else {
            return RelayError(.unreachable, "no relay of \(relays.count) could be joined (\(triedList()))")
        }
        return RelayError(.sessionNotFound, "\(request.sessionID.uuidString) (tried \(relays.count) relays: \(triedList()))")
    }

    private mutating func completeJoin() -> [RelayLinkDirective] {
        guard let welcome else { return [] }
        phase = .joined
        hasJoined = true
        succeeded()
        var directives: [RelayLinkDirective] = [.joined(welcome, token: token)]
        // Frames submitted before the welcome (none in practice) go now.
        for frame in unacknowledged[unacknowledgedHead...] { directives.append(.transmit(frame)) }
        return directives
    }

    private mutating func sequenced(_ frame: RelayFrame, at now: Int64) -> [RelayLinkDirective] {
        guard hasJoined, let sequence = frame.sequence else { return unexpected(frame) }
        // Sent again after a resumption, and already handled.
        if sequence <= received { return [] }
        guard sequence == received + 1 else {
            return fail(RelayError(.protocolViolation, "relay sequence \(sequence) after \(received)"))
        }
        // A frame that makes an acknowledgement owed starts the wait from its phase instant.
        if received == acknowledged {
            lastAcknowledgement = AcknowledgementSchedule.advance(from: lastAcknowledgement, to: now,
                                                                  interval: configuration.acknowledgementInterval)
        }
        received = sequence
        unacknowledgedBytes += frame.payloadSize
        var directives = deliver(frame)
        if isConnected, AcknowledgementSchedule.isPressing(frames: received - acknowledged, bytes: unacknowledgedBytes) {
            directives.append(.transmit(acknowledgement(at: now)))
        }
        return directives
    }

    /// Everything received counted as acknowledged at `now`, on this link's phase: the frame
    /// that says so.
    private mutating func acknowledgement(at now: Int64) -> RelayFrame {
        acknowledged = received
        unacknowledgedBytes = 0
        acknowledgedAt = now
        lastAcknowledgement = AcknowledgementSchedule.advance(from: lastAcknowledgement, to: now, interval: configuration.acknowledgementInterval)
        return .ack(received)
    }

    private mutating func deliver(_ frame: RelayFrame) -> [RelayLinkDirective] {
        switch frame {
        case let .participantJoined(_, entry):
            return [.emit(.participantJoined(Self.record(entry)))]
        case let .participantLeft(_, id):
            return [.emit(.participantLeft(id))]
        case let .participantAway(_, id, away):
            return [.emit(.participantAway(id, away: away))]
        case let .delivery(_, sender, reliable, body):
            return [.emit(.message(from: sender, body: body, reliable: reliable))]
        case let .ordered(_, entry):
            return [.emit(.ordered(Self.delivery(entry)))]
        case let .attachmentAdded(_, entry):
            return [.emit(.attachmentAdded(Self.record(entry)))]
        case let .attachmentRemoved(_, id):
            return [.emit(.attachmentRemoved(id))]
        case let .loadChunk(_, request, data):
            if case var .load(buffer) = requests[request] {
                requests[request] = nil
                buffer.append(contentsOf: data)
                requests[request] = .load(buffer)
            }
            return []
        case let .outcome(_, request, fault):
            guard let kind = requests.removeValue(forKey: request) else { return [] }
            if let fault { return [.complete(request: request, .failure(Self.error(fault)))] }
            if case let .load(data) = kind { return [.complete(request: request, .success(data))] }
            return [.complete(request: request, .success([]))]
        case let .ended(_, by, reason):
            return [.emit(.ended(by: by, reason: reason))] + close(leaving: false)
        default:
            return unexpected(frame)
        }
    }

    private mutating func acknowledge(through sequence: UInt64) {
        while unacknowledgedHead < unacknowledged.count, let number = unacknowledged[unacknowledgedHead].sequence, number <= sequence {
            if let size = Self.queuedMessageSize(unacknowledged[unacknowledgedHead]) {
                queuedMessageBytes -= size
                queuedMessageFrames -= 1
            }
            unacknowledgedHead += 1
        }
        if unacknowledgedHead > 64, unacknowledgedHead * 2 > unacknowledged.count {
            unacknowledged.removeFirst(unacknowledgedHead)
            unacknowledgedHead = 0
        }
    }

    /// The body size a message or proposal counts against the link's queue cap; nil for others.
    private static func queuedMessageSize(_ frame: RelayFrame) -> Int? {
        switch frame {
        case let .message(_, _, _, body), let .proposal(_, _, body), let .authoredProposal(_, _, body): body.count
        default: nil
        }
    }

    private mutating func unexpected(_ frame: RelayFrame) -> [RelayLinkDirective] {
        fail(RelayError(.protocolViolation, "unexpected frame \(frame.typeName) from the relay"))
    }

    /// Fails the link: before the first join, the join fails; after it, the events end with it.
    private mutating func fail(_ error: RelayError) -> [RelayLinkDirective] {
        guard hasJoined else { return close(joinError: error) }
        guard phase != .closed else { return [] }
        return [.emit(.failed(error))] + close(leaving: false)
    }

    private mutating func close(joinError: RelayError) -> [RelayLinkDirective] {
        guard phase != .closed else { return [] }
        phase = .closed
        return [.disconnect, .joinFailed(joinError)] + finishRequests()
    }

    private mutating func close(leaving: Bool) -> [RelayLinkDirective] {
        guard phase != .closed else { return [] }
        phase = .closed
        return [.disconnect] + finishRequests() + (leaving || self.leaving != nil ? [.left] : [])
    }

    private mutating func finishRequests() -> [RelayLinkDirective] {
        let pending = requests.keys.sorted()
        requests.removeAll()
        return pending.map { .complete(request: $0, .failure(RelayError(.closed, ""))) } + [.finish]
    }

    static func record(_ entry: RelayAttachmentEntry) -> AttachmentRecord {
        AttachmentRecord(id: entry.id, owner: entry.owner, size: entry.size, metadata: entry.metadata)
    }

    static func delivery(_ entry: RelayOrderedEntry) -> OrderedDelivery { entry }

    static func record(_ entry: RelayParticipantEntry) -> ParticipantRecord {
        ParticipantRecord(id: entry.id, publicKey: entry.publicKey, displayName: entry.displayName, presence: entry.presence,
                          departed: entry.departed)
    }

    /// The error a relay fault means for the caller.
    static func error(_ fault: RelayFault) -> RelayError {
        switch fault.code {
        case .wrongSecret: RelayError(.wrongSecret, fault.text)
        case .sessionNotFound: RelayError(.sessionNotFound, fault.text)
        case .sessionEnded: RelayError(.sessionEnded, fault.text)
        case .tooLarge: RelayError(.tooLarge, fault.text)
        case .disconnected, .flooding, .limitReached, .notPermitted: RelayError(.disconnected, fault.text)
        case .attachmentNotFound: RelayError(.attachmentNotFound, fault.text)
        case .versionMismatch: RelayError(.versionMismatch, fault.text)
        case .wrongIdentity: RelayError(.wrongIdentity, fault.text)
        case .unavailable: RelayError(.unreachable, "the relay's cluster is unavailable: \(fault.text)")
        case .creationRefused: RelayError(.creationRefused, fault.text)
        case .removed: RelayError(.removed, fault.text)
        case .inviteExpired: RelayError(.inviteExpired, fault.text)
        default: RelayError(.protocolViolation, fault.text)
        }
    }
}
