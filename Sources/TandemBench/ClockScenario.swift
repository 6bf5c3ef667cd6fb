import TandemClock
import TandemNet

/// One situation the clock benchmark measures every estimator in.
public struct ClockScenario: Sendable, Hashable, Codable {
    /// Where the samples come from.
    public enum Source: Sendable, Hashable, Codable {
        /// Real UDP on loopback, against a real time service, in real time.
        case loopback
        /// A `SimulatedNetwork` on virtual time, impaired both ways as said (the asymmetry slows
        /// the service-to-client leg).
        case simulated(Impairment)
    }

    /// A short name for tables.
    public var name: String
    /// What the scenario is, in a line.
    public var summary: String
    /// Where the samples come from.
    public var source: Source
    /// The participant's clock minus session time at the start, in nanoseconds.
    public var clientOffset: Int64
    /// The participant's clock's drift, in ppm.
    public var clientDriftPPM: Double
    /// How long the scenario runs, in nanoseconds (virtual or real).
    public var duration: Int64
    /// Errors before this time are left out of the percentiles (convergence time still counts
    /// from zero).
    public var settleTime: Int64
    /// How often the estimators are compared with the truth, in nanoseconds.
    public var evaluationInterval: Int64
    /// The error that path asymmetry causes and no estimator can see: half the difference of the
    /// two legs' fixed delays, in nanoseconds (session minus true, for every estimator).
    public var invisibleBias: Int64
    /// The first run's seed; run `k` uses `seed + k`.
    public var seed: UInt64
    /// How many runs, each with its own seed, are pooled (simulated scenarios only). One run is
    /// one draw of a slowly varying error; pooling many keeps luck out of the comparison.
    public var runs: Int

    /// The five standard scenarios, in order.
    public static let standard: [ClockScenario] = [loopback, jitter, asymmetry, loss, drift]

    private static let millisecond: Int64 = 1_000_000
    private static let second: Int64 = 1_000_000_000

    /// Real UDP on 127.0.0.1, the participant's clock 3.7 s ahead and 100 ppm fast.
    public static let loopback = ClockScenario(
        name: "loopback", summary: "real UDP on 127.0.0.1, offset +3.7 s, drift +100 ppm, 10 s",
        source: .loopback, clientOffset: 3_700 * millisecond, clientDriftPPM: 100,
        duration: 10 * second, settleTime: 2 * second, evaluationInterval: 10 * millisecond,
        invisibleBias: 0, seed: 0, runs: 1
    )

    /// Each leg 40 ms ± 15 ms, uniformly distributed and independent.
    public static let jitter = ClockScenario(
        name: "jitter", summary: "each leg 40 ms ± 15 ms (uniform), offset −2.5 s, 60 s virtual",
        source: .simulated(Impairment(delay: 40 * millisecond, jitter: 15 * millisecond)),
        clientOffset: -2_500 * millisecond, clientDriftPPM: 0,
        duration: 60 * second, settleTime: 10 * second, evaluationInterval: 100 * millisecond,
        invisibleBias: 0, seed: 0x5EED_0100, runs: 20
    )

    /// 10 ms up, 30 ms down, with a little queueing on each.
    public static let asymmetry = ClockScenario(
        name: "asymmetry", summary: "10 ms up, 30 ms down (+ exp. queueing, mean 0.5 ms), offset +1.2 s, 60 s virtual",
        source: .simulated(Impairment(delay: 10 * millisecond, asymmetry: 20 * millisecond, queueing: millisecond / 2)),
        clientOffset: 1_200 * millisecond, clientDriftPPM: 0,
        duration: 60 * second, settleTime: 10 * second, evaluationInterval: 100 * millisecond,
        invisibleBias: -10 * millisecond, seed: 0x5EED_0200, runs: 20
    )

    /// 20 % of datagrams lost each way, 5 % duplicated, on the jitter scenario's path.
    public static let loss = ClockScenario(
        name: "loss", summary: "20 % loss each way, 5 % duplicates, each leg 40 ms ± 15 ms, 60 s virtual",
        source: .simulated(Impairment(delay: 40 * millisecond, jitter: 15 * millisecond, loss: 0.2, duplication: 0.05)),
        clientOffset: 700 * millisecond, clientDriftPPM: 0,
        duration: 60 * second, settleTime: 10 * second, evaluationInterval: 100 * millisecond,
        invisibleBias: 0, seed: 0x5EED_0300, runs: 20
    )

    /// A clock 200 ppm fast for ten minutes on a path with queueing.
    public static let drift = ClockScenario(
        name: "drift", summary: "drift +200 ppm for 600 s virtual, each leg 20 ms + exp. queueing (mean 3 ms)",
        source: .simulated(Impairment(delay: 20 * millisecond, queueing: 3 * millisecond)),
        clientOffset: -4_000 * millisecond, clientDriftPPM: 200,
        duration: 600 * second, settleTime: 10 * second, evaluationInterval: 100 * millisecond,
        invisibleBias: 0, seed: 0x5EED_0400, runs: 10
    )
}
