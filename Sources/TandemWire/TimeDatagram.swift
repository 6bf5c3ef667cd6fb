import TandemClock

/// A time probe or its reply, as sent over UDP.
///
/// Both are 32 bytes: the header, a big-endian sequence number and three big-endian Int64
/// timestamps (T1, T2, T3 in nanoseconds; a request carries zeros for T2 and T3). A request is as
/// long as its reply so that the time service can never be used to amplify traffic, as NTP's
/// mode 3 and 4 packets are the same size.
public enum TimeDatagram: Sendable, Hashable {
    /// A participant's probe: sequence and local send time (T1).
    case request(ClockProbe)
    /// The service's reply: the probe echoed, with session receive (T2) and send (T3) times.
    case reply(TimeReply)

    /// Every time datagram's size in bytes.
    public static let size = 32
    private static let context = "time datagram"

    /// Decodes a datagram; any other length, magic, version or kind is a `WireError`.
    public static func decode(_ bytes: some Collection<UInt8>) throws(WireError) -> TimeDatagram {
        guard bytes.count == size else { throw .wrongLength(expected: size, actual: bytes.count, context: context) }
        let header = try DatagramHeader.decode(bytes, context: context)
        var reader = ByteReader(Array(bytes)[DatagramHeader.size...], context: context)
        let sequence = try reader.uint32()
        let clientSendTime = Int64(bitPattern: try reader.uint64())
        let serverReceiveTime = Int64(bitPattern: try reader.uint64())
        let serverSendTime = Int64(bitPattern: try reader.uint64())
        try reader.finish()
        switch header.kind {
        case .timeRequest:
            return .request(ClockProbe(sequence: sequence, sendTime: clientSendTime))
        case .timeReply:
            return .reply(TimeReply(
                probe: ClockProbe(sequence: sequence, sendTime: clientSendTime),
                serverReceiveTime: serverReceiveTime,
                serverSendTime: serverSendTime
            ))
        }
    }

    /// The datagram's 32 bytes.
    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(TimeDatagram.size)
        switch self {
        case let .request(probe):
            DatagramHeader(kind: .timeRequest).encode(into: &bytes)
            bytes.appendBigEndian(probe.sequence)
            bytes.appendBigEndian(probe.sendTime)
            bytes.appendBigEndian(Int64(0))
            bytes.appendBigEndian(Int64(0))
        case let .reply(reply):
            DatagramHeader(kind: .timeReply).encode(into: &bytes)
            bytes.appendBigEndian(reply.probe.sequence)
            bytes.appendBigEndian(reply.probe.sendTime)
            bytes.appendBigEndian(reply.serverReceiveTime)
            bytes.appendBigEndian(reply.serverSendTime)
        }
        return bytes
    }
}
