import TandemClock
import TandemNet

/// One relay's part in keeping a single session time across a cluster: a pure core that decides
/// who the time authority is, follows it, and slews the relay's clock, from events stamped with the
/// relay's own clock (`ClusterSessionTime` is its shell on the event loop).
///
/// **The design.** Relays announce themselves on a core NATS subject (`ClusterTimeAnnouncement`:
/// id, start instant, the UDP address of their time service, whether they keep the cluster's time
/// yet), with a heartbeat every `heartbeatInterval`, a hello when they start (everyone answers at
/// once) and a goodbye when they stop on purpose. The **authority** is the oldest live relay among
/// those that are *ready* (that keep the cluster's time); when none is ready (the whole cluster
/// starts), the oldest of all becomes the authority and its own clock becomes the cluster's time.
/// Every other relay probes the authority's time service with the participants' NTP-style exchange
/// (`ClockProber`: four timestamps, RFC 5905 section 8, over loopback or the LAN), fits offset and
/// drift (`ClockEstimator`), and serves its participants cluster time: its own clock mapped through
/// that estimate (`ClusterClockMapping`), slewed, never stepped, whenever the estimate or the
/// authority changes. Time never travels through NATS: NATS only says who is alive.
///
/// - **A relay starting** listens for `discoveryWindow`, follows the authority, and becomes ready
///   once its samples span `synchronizationSpan` (drift fitted). Until then it has served nothing,
///   so its first mapping is taken at once (one step, before any participant saw its clock).
/// - **The authority dies** (no heartbeat for `livenessTimeout`, or its goodbye): every relay picks
///   the oldest ready relay left. That relay was following the dead one within microseconds and
///   simply stops correcting: its mapping freewheels on the last estimate (drift included), so its
///   time does not jump. The others start probing it and, until their new samples span
///   `synchronizationSpan`, freewheel on their old mapping, then slew onto the new estimate: the
///   correction is the two followers' disagreement, microseconds.
/// - **A newer relay** joins as a follower: nobody else changes anything.
/// - **NATS is lost**: the relay keeps its role and its view of the others (nobody expires while it
///   cannot hear them) and goes on probing its authority over UDP; if the authority is gone too, it
///   freewheels. When NATS is back, it says hello and takes what it hears. Meanwhile the relays
///   that still hear each other may choose another authority among the ready ones: both sides keep
///   the same time, drifting apart only by their drift estimates' error.
/// - **Two clusters that never agreed merge** (split at their very start): the younger side's
///   relays are more than `stepThreshold` off and step once (`Directive.stepped`), the one step
///   there is.
///
/// **The error budget**, as a participant on one relay and a participant on another see it: each
/// participant's error against its relay (the participants' own synchronisation) plus each
/// relay's error against the authority: half the asymmetry of the relay↔authority path (at most
/// half its best round trip), the estimate's bound (`ClusterClockMapping.errorBound`) and what is
/// still being slewed. docs/SCALING.md ("One session time across relays") has the figures.
public struct ClusterTimeCore: Sendable {
    /// What the relay is doing about the cluster's time.
    public enum Role: Sendable, Hashable {
        /// Listening for the others before choosing.
        case discovering
        /// No authority yet: an older relay, not ready, is expected to become it.
        case waiting
        /// Its clock is the cluster's time.
        case authority
        /// It follows the relay with this id.
        case following(String)
    }

    /// A relay heard from.
    public struct Peer: Sendable, Hashable {
        /// What it last announced.
        public var member: ClusterTimeMember
        /// When (local time) it was last heard from.
        public var lastHeard: Int64
    }

    /// What happened.
    public enum Event: Sendable {
        /// The relay starts.
        case started
        /// An announcement arrived on NATS (the relay's own echo is ignored).
        case announcement(ClusterTimeAnnouncement)
        /// An exchange with the time service of the relay with this id completed.
        case sample(ClockSample, from: String)
        /// Time passed: the wake-up the last directives asked for, or any other.
        case tick
        /// The NATS connection broke.
        case connectionLost
        /// The NATS connection is back.
        case connectionRestored
        /// The relay stops on purpose.
        case stopping
    }

    /// What the shell must do, in order.
    public enum Directive: Sendable, Hashable {
        /// Publish this on NATS.
        case announce(ClusterTimeAnnouncement)
        /// Probe this relay's time service from now on, in place of any other, and report its
        /// samples as `Event.sample(_, from: member.id)`.
        case follow(ClusterTimeMember)
        /// Probe no one.
        case stopFollowing
        /// Serve cluster time through this mapping from now on.
        case publish(ClusterClockMapping)
        /// The relay keeps the cluster's time: it may serve participants.
        case ready
        /// The mapping jumped by this many ns (an offset above `stepThreshold` after serving).
        case stepped(by: Int64)
        /// The authority is now the relay with this id (nil: none).
        case authorityChanged(String?)
        /// Deliver `Event.tick` at this local time, at the latest.
        case wake(at: Int64)
    }

    /// The configuration in use.
    public let configuration: ClusterTimeConfiguration
    /// This relay, as it announces itself.
    public private(set) var me: ClusterTimeMember
    /// What it is doing.
    public private(set) var role: Role = .discovering
    /// The relays heard from and not taken for dead, by id.
    public private(set) var peers: [String: Peer] = [:]
    /// The mapping from the relay's clock to cluster time that it serves.
    public private(set) var mapping: ClusterClockMapping
    /// The mapping's jumps since the start (the first synchronisation, before serving, is not one).
    public private(set) var steps = 0
    /// Whether NATS is connected, as the last events said.
    public private(set) var connected = true
    /// The estimator of the followed authority's clock, fresh for each authority.
    public private(set) var estimator: ClockEstimator?
    private var discoveryEnds: Int64 = 0
    private var nextHeartbeat: Int64 = 0
    private var started = false

    /// A core for the relay `me` (its `ready` is ignored: a relay starts not ready), at local time
    /// `now`.
    public init(me: ClusterTimeMember, configuration: ClusterTimeConfiguration = ClusterTimeConfiguration(), now: Int64) {
        precondition(configuration.problem == nil, configuration.problem ?? "")
        self.configuration = configuration
        var me = me
        me.ready = false
        self.me = me
        mapping = .identity(at: now, slewRate: configuration.slewRate)
    }

    /// The authority's id as this relay sees it, if there is one.
    public var authority: String? {
        switch role {
        case .authority: me.id
        case let .following(id): id
        case .discovering, .waiting: nil
        }
    }

    /// Handles `event`, which happened at local time `now`, and says what to do.
    public mutating func handle(_ event: Event, at now: Int64) -> [Directive] {
        var directives: [Directive] = []
        switch event {
        case .started:
            guard !started else { return [] }
            started = true
            role = .discovering
            discoveryEnds = now.saturatingAdding(configuration.discoveryWindow)
            nextHeartbeat = now.saturatingAdding(configuration.heartbeatInterval)
            directives.append(.announce(announcement(.hello)))
        case let .announcement(announcement):
            receive(announcement, at: now, into: &directives)
        case let .sample(sample, from: id):
            take(sample, from: id, at: now, into: &directives)
        case .tick:
            break
        case .connectionLost:
            connected = false
        case .connectionRestored:
            connected = true
            // Whoever spoke while we could not hear gets the benefit of the doubt; a hello makes
            // everyone alive answer at once.
            for id in peers.keys { peers[id]?.lastHeard = now }
            directives.append(.announce(announcement(.hello)))
        case .stopping:
            started = false
            return [.announce(announcement(.goodbye)), .stopFollowing]
        }
        guard started else { return directives }
        if connected {
            let expired = peers.values.filter { now - $0.lastHeard >= configuration.livenessTimeout }.map(\.member.id)
            for id in expired { peers[id] = nil }
        }
        if now >= nextHeartbeat {
            directives.append(.announce(announcement(.heartbeat)))
            nextHeartbeat = max(nextHeartbeat.saturatingAdding(configuration.heartbeatInterval), now + 1)
        }
        if role == .discovering, now >= discoveryEnds { role = .waiting }
        choose(at: now, into: &directives)
        directives.append(.wake(at: nextWake))
        return directives
    }

    // MARK: Membership

    private func announcement(_ kind: ClusterTimeAnnouncement.Kind) -> ClusterTimeAnnouncement {
        ClusterTimeAnnouncement(kind: kind, member: me, authority: authority)
    }

    private mutating func receive(_ announcement: ClusterTimeAnnouncement, at now: Int64, into directives: inout [Directive]) {
        let member = announcement.member
        guard member.id != me.id else { return }
        switch announcement.kind {
        case .goodbye:
            peers[member.id] = nil
        case .hello, .heartbeat:
            peers[member.id] = Peer(member: member, lastHeard: now)
            if announcement.kind == .hello, started { directives.append(.announce(self.announcement(.heartbeat))) }
        }
    }

    /// The earliest instant something is due: a heartbeat, the end of discovery, an expiry.
    private var nextWake: Int64 {
        var wake = nextHeartbeat
        if role == .discovering { wake = min(wake, discoveryEnds) }
        if connected, let oldest = peers.values.map(\.lastHeard).min() {
            wake = min(wake, oldest.saturatingAdding(configuration.livenessTimeout))
        }
        return wake
    }

    /// Chooses the authority from what is known, and follows it or becomes it.
    private mutating func choose(at now: Int64, into directives: inout [Directive]) {
        guard role != .discovering else { return }
        let ready = peers.values.map(\.member).filter(\.ready) + (me.ready ? [me] : [])
        let chosen: ClusterTimeMember
        if let oldestReady = ready.min(by: { $0.isOlder(than: $1) }) {
            chosen = oldestReady
        } else {
            let everyone = peers.values.map(\.member) + [me]
            let oldest = everyone.min { $0.isOlder(than: $1) }!
            guard oldest.id == me.id else {
                // The oldest will become the authority on its own; following it before it keeps
                // a time of its own would only sample a clock about to change.
                if role != .waiting {
                    if case .following = role { directives.append(.stopFollowing) }
                    role = .waiting
                    estimator = nil
                    directives.append(.authorityChanged(nil))
                }
                return
            }
            chosen = me
        }
        if chosen.id == me.id {
            guard role != .authority else { return }
            if case .following = role { directives.append(.stopFollowing) }
            role = .authority
            estimator = nil
            directives.append(.authorityChanged(me.id))
            // A follower takes over from where its mapping stands: no jump, no further correction.
            if !me.ready {
                me.ready = true
                directives.append(.publish(mapping))
                directives.append(.ready)
            }
            directives.append(.announce(announcement(.heartbeat)))
            return
        }
        if case let .following(id) = role, id == chosen.id, followed?.timeService == chosen.timeService { return }
        role = .following(chosen.id)
        followed = chosen
        estimator = ClockEstimator(configuration: configuration.estimator)
        directives.append(.follow(chosen))
        directives.append(.authorityChanged(chosen.id))
    }

    /// The authority followed, as it was when the following began.
    public private(set) var followed: ClusterTimeMember?

    // MARK: Following

    private mutating func take(_ sample: ClockSample, from id: String, at now: Int64, into directives: inout [Directive]) {
        guard case .following(id) = role, var estimator else { return }
        let verdict = estimator.add(sample)
        self.estimator = estimator
        guard verdict == .kept, let estimate = estimator.estimate, estimator.window.count >= 3,
              let first = estimator.window.first, let last = estimator.window.last,
              last.clientReceiveTime - first.clientSendTime >= configuration.synchronizationSpan else { return }
        guard me.ready else {
            // Nothing was served yet: take the authority's time outright.
            mapping = mapping.stepped(to: estimate, at: now)
            me.ready = true
            directives.append(.publish(mapping))
            directives.append(.ready)
            directives.append(.announce(announcement(.heartbeat)))
            return
        }
        let correction = mapping.correction(to: estimate, at: now)
        if abs(correction) > Double(configuration.stepThreshold) {
            mapping = mapping.stepped(to: estimate, at: now)
            steps += 1
            directives.append(.stepped(by: Int64(-correction.rounded())))
        } else {
            mapping = mapping.retargeted(to: estimate, at: now)
        }
        directives.append(.publish(mapping))
    }
}
