import TandemClock

/// The time service's answer to a probe.
public struct TimeReply: Sendable, Hashable {
    /// The probe being answered, echoed unchanged.
    public var probe: ClockProbe
    /// Session time at which the service received the probe (T2).
    public var serverReceiveTime: Int64
    /// Session time at which the service sent this reply (T3).
    public var serverSendTime: Int64

    /// Creates a reply.
    public init(probe: ClockProbe, serverReceiveTime: Int64, serverSendTime: Int64) {
        self.probe = probe
        self.serverReceiveTime = serverReceiveTime
        self.serverSendTime = serverSendTime
    }
}
