/// A time probe the polling policy wants sent: its sequence number and local send time (T1).
public struct ClockProbe: Sendable, Hashable, Codable {
    /// Distinguishes the probe's reply from others that arrive late, twice or out of order.
    public var sequence: UInt32
    /// Local time at which the probe is sent, in nanoseconds; the reply must echo it.
    public var sendTime: Int64

    /// Creates a probe.
    public init(sequence: UInt32, sendTime: Int64) {
        self.sequence = sequence
        self.sendTime = sendTime
    }
}
