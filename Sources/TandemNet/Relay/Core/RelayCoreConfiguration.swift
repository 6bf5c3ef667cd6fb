import TandemClock

/// The relay core's timings and limits. Times held as `Int64` are in nanoseconds.
public struct RelayCoreConfiguration: Sendable, Hashable {
    /// How long a disconnected participant may take to resume before it is removed.
    public var gracePeriod: Int64 = 10_000_000_000
    /// How long a participant whose connection its peer closed (end of stream, reset, hang-up:
    /// a process that exited or was killed) may take to resume: shorter than `gracePeriod`,
    /// which a silent connection keeps (a network that went quiet may come back).
    public var closedGracePeriod: Int64 = 3_000_000_000
    /// How long a new connection may take to be admitted.
    public var handshakeTimeout: Int64 = 10_000_000_000
    /// How long a joined connection may stay silent (a link pings a relay that went quiet, and
    /// the relay pings every connection at least every `busyRoundTripProbeInterval`) before it
    /// is treated as dropped, so that a half-open connection starts the grace period.
    public var idleTimeout: Int64 = 15_000_000_000
    /// Flood control: tokens per second each connection earns. A frame costs 1 plus 1 per 16 KiB
    /// of its payload.
    public var floodRate: Double = 20_000
    /// Flood control: the largest burst, in tokens. A 100 MiB attachment costs about 6,800.
    public var floodBurst: Double = 40_000
    /// How many sessions the relay holds at once.
    public var maximumSessions = 100_000
    /// How many participants one session admits.
    public var maximumParticipants = 1_000
    /// How many bytes of attachments one session's journal holds.
    public var maximumJournalBytes = 1024 * 1024 * 1024
    /// How many frames may wait unacknowledged for one participant before it is dropped as too
    /// slow (or gone too long): what bounds the relay's memory per participant.
    public var maximumOutboxFrames = 20_000
    /// How many bytes of message bodies may wait unacknowledged for one participant.
    public var maximumOutboxBytes = 64 * 1024 * 1024
    /// How long an ended session is remembered, so that a participant resuming into it learns
    /// why it is gone.
    public var endedMemory: Int64 = 60_000_000_000

    /// How many ordered broadcasts a session keeps for late joiners (`RelayWelcome.orderedHistory`);
    /// beyond it the fallback snapshots go first (with the records only they need), then the
    /// oldest records, whatever their retention. A safety net: a session whose
    /// playback records are covered by snapshots keeps only the two newest snapshots and the
    /// changes since (see `OrderedRetention`).
    public var maximumOrderedHistory = 4096
    /// How many bytes of bodies a session's ordered history holds; beyond it the oldest are
    /// dropped too, so that a session's history cannot grow to gigabytes of large bodies.
    public var maximumOrderedHistoryBytes = 16 * 1024 * 1024
    /// What the lead of an ordered broadcast adds to the slowest connected participant's round
    /// trip: room for scheduling and jitter.
    public var orderingMargin: Int64 = 20_000_000
    /// The shortest lead: an ordered broadcast takes effect at least this long after the relay
    /// ordered it.
    public var minimumLead: Int64 = 30_000_000
    /// The longest lead, whatever the round trips: a participant slower than this receives
    /// ordered broadcasts late rather than holding everyone back.
    public var maximumLead: Int64 = 1_000_000_000
    /// How long the relay may hold back acknowledging what a participant sent. It acknowledges
    /// at once every 64 frames or 1 MiB, and with a frame going to the participant anyway a
    /// quarter of this after the last (`AcknowledgementSchedule`), so this bounds only a
    /// one-way sender's retransmission buffer, and is what such a sender hears from the relay
    /// (its link pings only once an acknowledgement it is owed is later than this). Each
    /// participant keeps its own phase, so that a tick does not write an acknowledgement to
    /// every connection that sent anything since the last one.
    public var acknowledgementInterval: Int64 = 1_000_000_000
    /// How often the relay pings a joined connection it has not heard from within this interval,
    /// to measure its round trip and so that its link hears the relay (it pings once at once on
    /// each admission and resumption too).
    public var roundTripProbeInterval: Int64 = 1_000_000_000
    /// How often the relay pings a joined connection it hears from anyway: such a connection is
    /// plainly alive and its link hears the relay's answers, so the ping serves only to keep its
    /// round trip (and so the ordering lead) current. At or below `roundTripProbeInterval`,
    /// every connection is pinged every `roundTripProbeInterval`.
    public var busyRoundTripProbeInterval: Int64 = 5_000_000_000

    // MARK: Resource limits
    //
    // Behind NAT many people share one address, so the per-address caps are generous: they stop
    // one host from taking the relay, not a household or an office from using it.

    /// How many attachments one session's journal holds (uploads in progress included).
    public var maximumAttachments = 1_000
    /// How many sessions connections from one source address may have created and still open.
    public var maximumSessionsPerAddress = 64
    /// How many connections one source address may hold open at once.
    public var maximumConnectionsPerAddress = 256
    /// How many connections many /64s of one IPv6 /48 may hold open at once.
    public var maximumConnectionsPerWiderPrefix = 1_024
    /// How many connections may be open and not yet admitted, over the whole relay. At it, the
    /// oldest of the source holding the most makes room for a newcomer.
    public var maximumUnauthenticatedConnections = 1_024
    /// How many connections one source may have open and not yet admitted: far below the
    /// relay-wide cap, so that a few sources cannot hold every place.
    public var maximumUnadmittedPerSource = 32
    /// How long a connection may stay open without sending its hello (a client sends it at
    /// once): a connection that sends nothing holds a place for this long at most.
    public var helloTimeout: Int64 = 2_000_000_000
    /// How many admission proofs a second one source may have checked (each costs two signature
    /// checks); a /48 of IPv6 sources together may have four times as many.
    public var proofsPerSecondPerSource: Double = 100
    /// The burst of admission proofs a source may have checked at once.
    public var proofBurstPerSource: Double = 200
    /// How many admission proofs a second the relay checks in all (twice that as a burst). Past
    /// it, a source is still checked while it has used less than its fair share of the burst
    /// (the burst divided among the sources that asked lately): many sources together cannot
    /// spend the relay's thread on proofs, and none of them can keep the others out.
    public var proofsPerSecond: Double = 2_000
    /// How long a session must have routed nothing before, at the memory budget and as the
    /// largest holder's, it may be shed whole.
    public var idleSessionAge: Int64 = 60_000_000_000
    /// How many bytes a connection not yet admitted may have buffered (a partial frame
    /// included): room for a hello with the largest activity description and a proof.
    public var maximumUnauthenticatedBytes = 128 * 1024
    /// The relay-wide budget in bytes of what it accounts for: output queues, outboxes, the
    /// journals (uploads reserved when announced), ordered histories and partial frames. At it,
    /// new sessions, joins and uploads are refused; existing sessions go on.
    public var memoryLimit = 512 * 1024 * 1024
    /// How many bytes may wait in one connection's output queue before the connection is
    /// dropped as not reading (a resumption's resend of a full outbox must fit).
    public var maximumOutputBytes = 80 * 1024 * 1024
    /// How many frames may wait in one connection's output queue before it is dropped.
    public var maximumOutputFrames = 40_000
    /// Fan-out per session: deliveries (one frame to one recipient) per second. At the cap the
    /// relay stops reading the sender until the session is back under it; nobody is dropped.
    public var fanoutDeliveriesPerSecond: Double = 200_000
    /// Fan-out per session: bytes of bodies delivered per second (64 MiB/s, about 537 Mbit/s).
    public var fanoutBytesPerSecond: Double = 64 * 1024 * 1024
    /// How many seconds of fan-out a session may spend in one burst.
    public var fanoutBurst: Double = 1
    /// The share of its outbox caps (`maximumOutboxFrames`, `maximumOutboxBytes`) a connected
    /// participant may have waiting before those sending into its session are slowed to its
    /// pace: each frame that reaches it pauses its sender (`backlogPause`). Well below 1, so
    /// that a reader that keeps reading is held back rather than removed as too far behind,
    /// unless it reads fewer frames a second than one per `backlogPause`; and not so small that
    /// the acknowledgements a reader keeping up still owes hold its senders back.
    public var backlogHighWater: Double = 0.25
    /// How long a frame that reached a reader at twice `backlogHighWater` pauses the session's
    /// heaviest sender (between the two, in proportion); lighter senders wait in proportion to
    /// what they sent.
    public var backlogPause = TimeSpan.milliseconds(20)
    /// How long after its acknowledgements last freed anything a reader past `backlogHighWater`
    /// is still waited for. Longer than a link's acknowledgement interval, so that a slow reader
    /// acknowledging once a second counts; one that stopped reading is not waited for, and
    /// overflows its outbox as one that never read does.
    public var backlogPatience = TimeSpan.seconds(3)
    /// Fan-out per source: deliveries a second over all the sessions one source created.
    public var fanoutDeliveriesPerSecondPerSource: Double = 400_000
    /// Fan-out per source: bytes of bodies delivered a second over all the sessions one source
    /// created (128 MiB/s: a source may run a couple of sessions at their cap, not dozens).
    public var fanoutBytesPerSecondPerSource: Double = 128 * 1024 * 1024
    /// How many bytes of an attachment load the relay hands its shell at a time; the next part
    /// goes once the connection has drained below `drainLowWater`.
    public var loadWindowBytes = 1024 * 1024
    /// The output queue size under which the shell reports a connection drained.
    public var drainLowWater = 256 * 1024
    /// How long a datagram registration lasts unless refreshed (links refresh every 5 s).
    public var datagramRegistrationLifetime: Int64 = 30_000_000_000
    /// How long a registration cookie is good for after the relay issued it.
    public var datagramCookieLifetime: Int64 = 10_000_000_000

    /// The key a creator must prove to create a session (`RelayCreationKey`), nil when anyone
    /// may: the relay `tandem host` starts for itself has one.
    public var creationKey: [UInt8]?

    /// The defaults.
    public init() {}

    /// The lead of an ordered broadcast when the slowest connected participant's latest round
    /// trip is `roundTrip` (nil when none is measured yet): that plus `orderingMargin`, within
    /// `minimumLead...maximumLead`; with nothing measured, `minimumLead + orderingMargin`.
    public func lead(forRoundTrip roundTrip: Int64?) -> Int64 {
        let wanted = (roundTrip ?? minimumLead) + orderingMargin
        return min(max(wanted, minimumLead), max(maximumLead, minimumLead))
    }

    /// Whether the relay pings a joined connection at `now`, when it last pinged it at
    /// `lastProbe` and last heard from it at `lastHeard`: once `roundTripProbeInterval` has
    /// passed since the last ping, if the connection has also been silent that long; otherwise
    /// once `busyRoundTripProbeInterval` has passed. A participant that `owes` acknowledgements
    /// (the relay sent it frames it has not acknowledged) is heard at least every
    /// `acknowledgementInterval` of its link: it counts as silent only after
    /// `owedSilence`.
    func isProbeDue(lastProbe: Int64, lastHeard: Int64, owes: Bool = false, at now: Int64) -> Bool {
        let sinceProbe = now - lastProbe
        guard sinceProbe >= roundTripProbeInterval else { return false }
        return now - lastHeard >= (owes ? owedSilence : roundTripProbeInterval) || sinceProbe >= busyRoundTripProbeInterval
    }

    /// How long a participant that owes the relay acknowledgements may be silent before the
    /// relay pings it: its link's acknowledgement interval (taken to be the relay's own) and a
    /// quarter more for the round trip and the ticks, and never less than
    /// `roundTripProbeInterval`.
    var owedSilence: Int64 { max(roundTripProbeInterval, acknowledgementInterval + acknowledgementInterval / 4) }

    /// The cost of a frame or datagram with `payload` bytes, in flood-control tokens.
    static func cost(payload: Int) -> Double { 1 + Double(payload) / 16_384 }
}
