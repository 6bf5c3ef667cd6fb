/// What the impairment proxy adds to a path, in nanoseconds and probabilities.
///
/// Both directions get `delay` with `jitter`; the downstream (server to client) gets `asymmetry`
/// on top, so a positive asymmetry makes the path slower towards the client. Loss and reordering
/// apply to UDP only: a TCP byte stream is delayed but stays ordered and lossless.
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

    /// No impairment: items pass as soon as the proxy can pass them.
    public static let none = Impairment()

    /// Creates an impairment; by default, none.
    public init(delay: Int64 = 0, jitter: Int64 = 0, loss: Double = 0, asymmetry: Int64 = 0,
                reorder: Double = 0, reorderHold: Int64 = 10_000_000) {
        self.delay = delay
        self.jitter = jitter
        self.loss = loss
        self.asymmetry = asymmetry
        self.reorder = reorder
        self.reorderHold = reorderHold
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
        if !(0...1).contains(loss) { return "loss must be a probability from 0 to 1" }
        if !(0...1).contains(reorder) { return "reorder must be a probability from 0 to 1" }
        if reorderHold < 0 { return "the reorder hold must not be negative" }
        return nil
    }

    /// The fixed part of the delay in `direction`: `delay`, plus `asymmetry` downstream.
    public func baseDelay(_ direction: NetsimDirection) -> Int64 {
        direction == .down ? delay + asymmetry : delay
    }

    /// One line: every figure, naming which direction the asymmetry slows.
    public var description: String {
        var parts = ["delay \(Impairment.milliseconds(delay)) ms ± \(Impairment.milliseconds(jitter)) ms (uniform)"]
        if asymmetry > 0 { parts.append("+\(Impairment.milliseconds(asymmetry)) ms downstream (server→client) only") }
        parts.append("UDP loss \(Impairment.percent(loss)) per direction")
        parts.append("UDP reorder \(Impairment.percent(reorder)) (held back \(Impairment.milliseconds(reorderHold)) ms)")
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
    init(format3 value: Double) {
        let scaled = Int64((value * 1000).rounded())
        let whole = scaled / 1000
        var fraction = String(abs(scaled % 1000))
        while fraction.count < 3 { fraction = "0" + fraction }
        while fraction.hasSuffix("0") { fraction.removeLast() }
        let sign = scaled < 0 && whole == 0 ? "-" : ""
        self = fraction.isEmpty ? "\(sign)\(whole)" : "\(sign)\(whole).\(fraction)"
    }
}
