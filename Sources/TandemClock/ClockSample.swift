/// One NTP-style exchange of four timestamps between a participant and the time service.
///
/// The participant stamps `clientSendTime` and `clientReceiveTime` with its local monotonic
/// clock; the service stamps `serverReceiveTime` and `serverSendTime` with the session clock.
/// All four are nanoseconds. The arithmetic follows RFC 5905, section 8 (on-wire protocol).
public struct ClockSample: Sendable, Hashable, Codable {
    /// Local time at which the probe left the participant (T1).
    public var clientSendTime: Int64
    /// Session time at which the service received the probe (T2).
    public var serverReceiveTime: Int64
    /// Session time at which the service sent its reply (T3).
    public var serverSendTime: Int64
    /// Local time at which the reply reached the participant (T4).
    public var clientReceiveTime: Int64

    /// Creates a sample from its four timestamps, in nanoseconds.
    public init(clientSendTime: Int64, serverReceiveTime: Int64, serverSendTime: Int64, clientReceiveTime: Int64) {
        self.clientSendTime = clientSendTime
        self.serverReceiveTime = serverReceiveTime
        self.serverSendTime = serverSendTime
        self.clientReceiveTime = clientReceiveTime
    }

    /// Time spent on the network both ways: the round trip minus the service's turnaround.
    public var roundTripDelay: Int64 {
        (clientReceiveTime - clientSendTime) - (serverSendTime - serverReceiveTime)
    }

    /// Session time minus local time, assuming both legs took equally long.
    ///
    /// When the legs differ, this is off by half their difference, and nothing in the four
    /// timestamps can reveal it.
    public var offset: Int64 {
        let forward = serverReceiveTime - clientSendTime
        let backward = serverSendTime - clientReceiveTime
        // Halve each part before adding so that offsets of many seconds cannot overflow.
        return forward / 2 + backward / 2 + (forward % 2 + backward % 2) / 2
    }

    /// The local instant the offset describes best: halfway between sending and receiving.
    public var localMidpoint: Int64 {
        clientSendTime + (clientReceiveTime - clientSendTime) / 2
    }

    /// Whether the timestamps are in an order a real exchange can produce.
    public var isConsistent: Bool {
        clientReceiveTime >= clientSendTime && serverSendTime >= serverReceiveTime && roundTripDelay >= 0
    }
}
