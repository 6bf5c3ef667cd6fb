/// A link's timings, in nanoseconds.
public struct RelayLinkConfiguration: Sendable, Hashable {
    /// How long joining may take before it fails with `timedOut`.
    public var joinTimeout: Int64 = 10_000_000_000
    /// How often a joined link pings the relay, so that a silent relay is noticed (and the relay
    /// notices a silent participant). A ping falls due this long after the last one, and goes
    /// out once the relay has also been silent for `pingSilence`: a relay heard from lately is
    /// plainly there, and the link's acknowledgements tell it the link is. Nor does it go while
    /// the relay owes an acknowledgement that is not yet late (`acknowledgementWait`) and would
    /// come, even at its latest, within `quietLimit` of what the link last heard: that
    /// acknowledgement is what the link will hear.
    public var pingInterval: Int64 = 1_000_000_000
    /// How long the relay must have been silent for a due ping to go out. Half of
    /// `pingInterval` keeps the longest silence of a healthy quiet connection at
    /// `pingInterval` (or half of it and a round trip), well inside `quietLimit`.
    public var pingSilence: Int64 = 500_000_000
    /// How long a link may hold back acknowledging what it received. It acknowledges at once
    /// every 64 frames or 1 MiB, and with a frame it sends anyway a quarter of this after the
    /// last (`AcknowledgementSchedule`), so this bounds only a receiving-only link's outbox at
    /// the relay. Each link keeps its own phase, so that the links of one process (a benchmark,
    /// a test) do not all write to the relay on the same tick, and a busy relay is not sent an
    /// acknowledgement per participant per tick. The relay holds back its own by as much
    /// (`RelayCoreConfiguration.acknowledgementInterval`).
    public var acknowledgementInterval: Int64 = 1_000_000_000
    /// How long the relay may stay silent before the link says so (`RelayEvent.connectionQuiet`,
    /// so that people see it within a moment), while it keeps the connection until `silenceLimit`.
    public var quietLimit: Int64 = 1_500_000_000
    /// How long the relay may stay silent before the link treats the connection as dropped.
    public var silenceLimit: Int64 = 5_000_000_000
    /// The first pause before reconnecting; it doubles after each failure, up to a second.
    public var reconnectDelay: Int64 = 50_000_000
    /// How long the link keeps trying to reconnect before it fails for good. The relay's grace
    /// period usually ends it sooner: the relay then refuses the resumption.
    public var reconnectLimit: Int64 = 30_000_000_000
    /// Joining over several relays: how long one may stay silent (from the connection attempt,
    /// or from its last frame) before the link tries the next, so that a relay that drops the
    /// connection attempt, or stalls, does not use up `joinTimeout`.
    public var relayAttemptTimeout: Int64 = 3_000_000_000
    /// How long `leave()` waits for the relay to acknowledge before closing anyway.
    public var leaveTimeout: Int64 = 2_000_000_000
    /// How long joining waits for the relay to confirm the datagram path before going on
    /// without it (unreliable messages may then be lost until it is confirmed).
    public var datagramRegistrationTimeout: Int64 = 1_000_000_000

    /// The most message and proposal bytes a link holds that the relay has not yet acknowledged
    /// (waiting to be written, or written and not yet acknowledged): past it `send` and
    /// `sendOrdered` throw `RelayError.Code.queueFull` at once rather than queue without end
    /// (a sender outrunning its link, or a link whose relay is gone). Attachment uploads are
    /// bounded by their own size limit and are not counted.
    public var maximumQueuedBytes = 16 * 1024 * 1024
    /// The most such messages and proposals.
    public var maximumQueuedFrames = 10_000

    /// The relay's creation key (`RelayCreationKey`), when it creates sessions only for those
    /// proving it: a creator's hello then carries the proof. nil for any other relay.
    public var creationKey: [UInt8]?

    /// How long after sending a frame the link waits for the relay's acknowledgement before it
    /// pings a silent relay anyway: the relay's interval (taken to be the link's own) and half
    /// of `pingSilence` for the round trip and the relay's tick.
    public var acknowledgementWait: Int64 { acknowledgementInterval + pingSilence / 2 }

    /// The defaults.
    public init() {}
}
