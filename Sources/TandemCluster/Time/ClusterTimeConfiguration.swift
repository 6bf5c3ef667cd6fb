import TandemClock

/// The knobs of a cluster's session time (all times in nanoseconds of the relay's own clock).
///
/// The defaults suit relays on one LAN or one host: a dead relay is noticed within a second, a
/// starting relay knows its peers within half a second and keeps the cluster's time within about
/// a second and a half more, and corrections are slewed at 100 ppm.
public struct ClusterTimeConfiguration: Sendable, Hashable {
    /// The core NATS subject the relays announce themselves on. Relays of one cluster share it.
    public var subject = "tandem.cluster.time"
    /// How often a relay says it is alive.
    public var heartbeatInterval: Int64 = 250_000_000
    /// A relay not heard from for this long is taken for dead (while NATS is up).
    public var livenessTimeout: Int64 = 1_000_000_000
    /// How long a starting relay listens for the others before choosing an authority.
    public var discoveryWindow: Int64 = 500_000_000
    /// The fastest a relay's cluster time moves towards a new estimate, beyond the estimate's own
    /// drift (ns per ns). 100 ppm absorbs a 10 µs correction in 0.1 s, and is a tenth of the drift
    /// participants' estimators accept (`ClockEstimator.Configuration.maximumDriftPPM`).
    public var slewRate = 100e-6
    /// A correction larger than this, once the relay has served time, is stepped rather than
    /// slewed (it would take `stepThreshold / slewRate` to slew: 500 s at the defaults). Only two
    /// clusters that never agreed, merging, see one.
    public var stepThreshold: Int64 = 50_000_000
    /// How long the samples from an authority must span before the relay takes their estimate:
    /// its drift is fitted by then. A relay that follows a new authority freewheels on its last
    /// mapping meanwhile.
    public var synchronizationSpan: Int64 = 1_000_000_000
    /// How the samples from the authority become an estimate (`minimumDriftSpan` is
    /// `synchronizationSpan` unless set lower).
    public var estimator: ClockEstimator.Configuration
    /// How often the authority's time service is probed: a relay polls faster than a participant
    /// and aims at a tighter bound, since its error reaches every participant of the relay.
    public var polling: ClockPollingPolicy.Configuration
    /// How long `ClusterSessionTime.start` waits for the relay to keep the cluster's time.
    public var readyTimeout: Int64 = 10_000_000_000

    /// The default configuration.
    public init() {
        estimator = ClockEstimator.Configuration()
        estimator.minimumDriftSpan = synchronizationSpan
        polling = ClockPollingPolicy.Configuration()
        polling.steadyInterval = 250_000_000
        polling.targetErrorBound = 20_000
    }

    /// Why this configuration cannot be used, or nil.
    public var problem: String? {
        if heartbeatInterval <= 0 { return "heartbeatInterval must be above 0" }
        if livenessTimeout <= heartbeatInterval { return "livenessTimeout must exceed heartbeatInterval" }
        if discoveryWindow < 0 { return "discoveryWindow must not be negative" }
        if !(slewRate > 0 && slewRate < 0.01) { return "slewRate must be above 0 and below 1 %" }
        if stepThreshold <= 0 { return "stepThreshold must be above 0" }
        if synchronizationSpan < 0 { return "synchronizationSpan must not be negative" }
        if readyTimeout <= 0 { return "readyTimeout must be above 0" }
        return nil
    }
}
