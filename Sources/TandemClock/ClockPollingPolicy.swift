/// Decides when to send time probes and matches their replies: a pure value.
///
/// It starts with a quick burst so that the first fraction of a second already yields a good
/// estimate, polls fast while the estimate's error bound is above a target, and settles at about
/// one probe a second. Each probe carries a sequence number and its send time, which the reply
/// echoes; replies to unknown, expired or already answered probes are turned away, so loss,
/// reordering and duplication cannot produce a wrong sample. The idea of a fast start followed by
/// a slower steady rate follows Jellyfin's SyncPlay ("greedy" pings before "low profile" ones,
/// jellyfin-web `TimeSync.js`); letting the error bound choose the rate follows chrony's and NTP's
/// adaptive poll interval (RFC 5905, section 12).
public struct ClockPollingPolicy: Sendable {
    /// Tuning knobs (all times in nanoseconds).
    public struct Configuration: Sendable, Hashable, Codable {
        /// Probes sent back to back at the start.
        public var burstCount = 8
        /// Spacing of the starting burst.
        public var burstInterval: Int64 = 25_000_000
        /// Spacing while the error bound is above `targetErrorBound`.
        public var fastInterval: Int64 = 50_000_000
        /// Spacing once the error bound is within target.
        public var steadyInterval: Int64 = 1_000_000_000
        /// The error bound below which polling slows down.
        public var targetErrorBound: Int64 = 100_000
        /// A probe unanswered for this long is counted lost, and a later reply to it ignored.
        public var replyTimeout: Int64 = 2_000_000_000
        /// At most this many probes wait for replies; beyond it the oldest is counted lost.
        public var maximumOutstanding = 32

        /// The default configuration.
        public init() {}
    }

    /// What a reply turned out to be.
    public enum ReplyOutcome: Sendable, Hashable {
        /// The reply to an outstanding probe: a new sample.
        case sample(ClockSample)
        /// A second reply to a probe already answered.
        case duplicate
        /// A reply to no probe waiting: never sent, or expired as lost.
        case unexpected
        /// The reply's echoed send time is not the probe's: corrupted or forged.
        case mismatched
    }

    /// Counters for reports.
    public struct Statistics: Sendable, Hashable, Codable {
        /// Probes handed out to send.
        public var sent = 0
        /// Replies that became samples.
        public var answered = 0
        /// Probes given up on.
        public var lost = 0
        /// Replies ignored as duplicates.
        public var duplicates = 0
        /// Replies ignored as unexpected or mismatched.
        public var ignored = 0
    }

    /// The configuration in use.
    public let configuration: Configuration
    /// The local time at which the next probe is due.
    public private(set) var nextProbeTime: Int64
    /// Counters so far.
    public private(set) var statistics = Statistics()
    private var nextSequence: UInt32
    private var outstanding: [ClockProbe] = []
    private var recentlyAnswered: [UInt32] = []

    /// Creates a policy whose first probe is due at `startTime`.
    public init(configuration: Configuration = Configuration(), startTime: Int64, firstSequence: UInt32 = 0) {
        self.configuration = configuration
        self.nextProbeTime = startTime
        self.nextSequence = firstSequence
    }

    /// Probes waiting for a reply.
    public var outstandingCount: Int { outstanding.count }

    /// The probe to send now, if one is due; `errorBound` is the current estimate's, nil before
    /// there is one. The caller stamps the probe with the returned `sendTime` and sends it at once.
    public mutating func probe(now: Int64, errorBound: Int64?) -> ClockProbe? {
        expire(now: now)
        guard now >= nextProbeTime else { return nil }
        let probe = ClockProbe(sequence: nextSequence, sendTime: now)
        nextSequence &+= 1
        statistics.sent += 1
        outstanding.append(probe)
        if outstanding.count > configuration.maximumOutstanding {
            outstanding.removeFirst()
            statistics.lost += 1
        }
        let interval: Int64
        if statistics.sent < configuration.burstCount {
            interval = configuration.burstInterval
        } else if let errorBound, errorBound <= configuration.targetErrorBound {
            interval = configuration.steadyInterval
        } else {
            interval = configuration.fastInterval
        }
        // Scheduling from the due time, not from `now`, keeps a late wake-up from stretching the
        // interval; but never schedule into the past after a long stall.
        nextProbeTime = max(nextProbeTime + interval, now + configuration.burstInterval / 2)
        return probe
    }

    /// The probe to send now, if one is due, judging the error bound by where `sessionClock`'s
    /// would be one steady interval from now: polling slows only if the estimate would stay within
    /// target until the next probe.
    public mutating func probe(now: Int64, sessionClock: SessionClock) -> ClockProbe? {
        let ahead = LocalInstant(nanoseconds: now + configuration.steadyInterval)
        return probe(now: now, errorBound: sessionClock.errorBound(atLocal: ahead)?.nanoseconds)
    }

    /// Counts probes unanswered past the timeout as lost.
    public mutating func expire(now: Int64) {
        let before = outstanding.count
        outstanding.removeAll { now - $0.sendTime > configuration.replyTimeout }
        statistics.lost += before - outstanding.count
    }

    /// Matches a reply, received at local time `receiveTime`, to its probe.
    public mutating func onReply(sequence: UInt32, echoedSendTime: Int64, serverReceiveTime: Int64,
                                 serverSendTime: Int64, receiveTime: Int64) -> ReplyOutcome {
        guard let index = outstanding.firstIndex(where: { $0.sequence == sequence }) else {
            if recentlyAnswered.contains(sequence) {
                statistics.duplicates += 1
                return .duplicate
            }
            statistics.ignored += 1
            return .unexpected
        }
        guard outstanding[index].sendTime == echoedSendTime else {
            statistics.ignored += 1
            return .mismatched
        }
        outstanding.remove(at: index)
        recentlyAnswered.append(sequence)
        if recentlyAnswered.count > 2 * configuration.maximumOutstanding { recentlyAnswered.removeFirst() }
        statistics.answered += 1
        return .sample(ClockSample(
            clientSendTime: echoedSendTime,
            serverReceiveTime: serverReceiveTime,
            serverSendTime: serverSendTime,
            clientReceiveTime: receiveTime
        ))
    }
}
