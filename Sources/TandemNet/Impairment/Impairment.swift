#if canImport(Glibc)
import Glibc
#endif

/// What a path adds to what crosses it, in nanoseconds and probabilities: the one impairment
/// model of the impairment proxy (`tandem netsim`), the in-memory relay and the simulated network
/// of the test kit, decided by one `ImpairmentSchedule` drawing from one `SeededRandom`.
///
/// Both directions get `delay` with `jitter`, plus exponentially distributed `queueing` when it
/// is set; the downstream (server to client) gets `asymmetry` on top, so a positive asymmetry
/// makes the path slower towards the client. Loss, reordering and duplication apply to datagrams
/// only: a byte stream (TCP, or the in-memory relay's frames) is delayed but stays ordered and
/// lossless.
public struct Impairment: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The one-way delay added in each direction.
    public var delay: Int64
    /// Half the width of the uniform spread around `delay`: each item waits `delay ± jitter`.
    public var jitter: Int64
    /// The probability that a datagram vanishes, independently in each direction.
    public var loss: Double
    /// Extra one-way delay on the downstream (server to client) only.
    public var asymmetry: Int64
    /// The probability that a datagram is held back by `reorderHold` beyond its delay, so that
    /// datagrams sent after it overtake it.
    public var reorder: Double
    /// How long a datagram chosen for reordering is held back beyond its delay.
    public var reorderHold: Int64
    /// The mean of an exponentially distributed queueing delay added to every item on top of
    /// `delay ± jitter` (0: none), the usual model of a path whose queues sometimes fill.
    public var queueing: Int64
    /// The probability that a datagram arrives twice, the copy after a delay of its own.
    public var duplication: Double

    /// No impairment: items pass as soon as they can.
    public static let none = Impairment()

    /// Creates an impairment; by default, none.
    public init(delay: Int64 = 0, jitter: Int64 = 0, loss: Double = 0, asymmetry: Int64 = 0,
                reorder: Double = 0, reorderHold: Int64 = 10_000_000, queueing: Int64 = 0, duplication: Double = 0) {
        self.delay = delay
        self.jitter = jitter
        self.loss = loss
        self.asymmetry = asymmetry
        self.reorder = reorder
        self.reorderHold = reorderHold
        self.queueing = queueing
        self.duplication = duplication
    }

    private enum CodingKeys: String, CodingKey {
        case delay, jitter, loss, asymmetry, reorder, reorderHold, queueing, duplication
    }

    /// Decodes an impairment; `queueing` and `duplication`, which older reports lack, default to none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(delay: try container.decode(Int64.self, forKey: .delay),
                  jitter: try container.decode(Int64.self, forKey: .jitter),
                  loss: try container.decode(Double.self, forKey: .loss),
                  asymmetry: try container.decode(Int64.self, forKey: .asymmetry),
                  reorder: try container.decode(Double.self, forKey: .reorder),
                  reorderHold: try container.decode(Int64.self, forKey: .reorderHold),
                  queueing: try container.decodeIfPresent(Int64.self, forKey: .queueing) ?? 0,
                  duplication: try container.decodeIfPresent(Double.self, forKey: .duplication) ?? 0)
    }

    /// Why this impairment cannot be simulated, or nil when it can.
    ///
    /// Jitter may not exceed the delay, because the shortest draw would then be a negative delay
    /// and clamping it to zero would skew the distribution away from what was asked.
    public var problem: String? {
        if delay < 0 { return "delay must not be negative" }
        if jitter < 0 { return "jitter must not be negative" }
        if jitter > delay { return "jitter (\(Impairment.milliseconds(jitter)) ms) must not exceed the delay (\(Impairment.milliseconds(delay)) ms)" }
        if asymmetry < 0 { return "asymmetry must not be negative" }
        if queueing < 0 { return "queueing must not be negative" }
        if !(0...1).contains(loss) { return "loss must be a probability from 0 to 1" }
        if !(0...1).contains(reorder) { return "reorder must be a probability from 0 to 1" }
        if !(0...1).contains(duplication) { return "duplication must be a probability from 0 to 1" }
        if reorderHold < 0 { return "the reorder hold must not be negative" }
        return nil
    }

    /// The fixed part of the delay in `direction`: `delay`, plus `asymmetry` downstream.
    public func baseDelay(_ direction: PathDirection) -> Int64 {
        direction == .down ? delay + asymmetry : delay
    }

    /// The shortest delay an item can draw in `direction`.
    public func minimumDelay(_ direction: PathDirection) -> Int64 {
        baseDelay(direction) - jitter
    }

    /// Whether it changes anything at all.
    public var isNone: Bool {
        delay == 0 && jitter == 0 && asymmetry == 0 && queueing == 0 && loss == 0 && reorder == 0 && duplication == 0
    }

    /// One line: every figure, naming which direction the asymmetry slows.
    public var description: String {
        var parts = ["delay \(Impairment.milliseconds(delay)) ms ± \(Impairment.milliseconds(jitter)) ms (uniform)"]
        if queueing > 0 { parts.append("+ exp. queueing (mean \(Impairment.milliseconds(queueing)) ms)") }
        if asymmetry > 0 { parts.append("+\(Impairment.milliseconds(asymmetry)) ms downstream (server→client) only") }
        parts.append("UDP loss \(Impairment.percent(loss)) per direction")
        parts.append("UDP reorder \(Impairment.percent(reorder)) (held back \(Impairment.milliseconds(reorderHold)) ms)")
        if duplication > 0 { parts.append("UDP duplicates \(Impairment.percent(duplication))") }
        parts.append("TCP ordered and lossless")
        return parts.joined(separator: ", ")
    }

    static func milliseconds(_ nanoseconds: Int64) -> String {
        let value = Double(nanoseconds) / 1e6
        return value == value.rounded() ? String(Int64(value)) : String(format3: value)
    }

    static func percent(_ probability: Double) -> String {
        let value = probability * 100
        return (value == value.rounded() ? String(Int64(value)) : String(format3: value)) + " %"
    }
}

extension String {
    /// Up to three decimals without trailing zeros, without Foundation's formatter.
    package init(format3 value: Double) {
        let scaled = Int64((value * 1000).rounded())
        let whole = scaled / 1000
        var fraction = String(abs(scaled % 1000))
        while fraction.count < 3 { fraction = "0" + fraction }
        while fraction.hasSuffix("0") { fraction.removeLast() }
        let sign = scaled < 0 && whole == 0 ? "-" : ""
        self = fraction.isEmpty ? "\(sign)\(whole)" : "\(sign)\(whole).\(fraction)"
    }
}
