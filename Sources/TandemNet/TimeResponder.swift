import TandemClock
import TandemWire

/// Answers time requests: the part of the time service that does not touch sockets, so that a
/// relay can serve time probes from its own event loop on a shared UDP port.
public struct TimeResponder: Sendable {
    /// The session clock that stamps replies.
    public let clock: any LocalClock

    /// Creates a responder stamping with `clock`.
    public init(clock: any LocalClock) { self.clock = clock }

    /// The reply to `datagram`, which arrived at session time `receiveTime`, stamped with its send
    /// time just before returning; or the reason it deserves none.
    ///
    /// A reply is never longer than the request it answers, whatever the encodings become: a
    /// request with a forged source address then reflects no more bytes at its victim than the
    /// attacker sent, so the service cannot amplify a flood.
    public func reply(to datagram: some Collection<UInt8>, receivedAt receiveTime: Int64) -> Result<[UInt8], WireError> {
        do throws(WireError) {
            guard datagram.count >= TimeDatagram.size else {
                return .failure(.wrongLength(expected: TimeDatagram.size, actual: datagram.count, context: "time request"))
            }
            guard case let .request(probe) = try TimeDatagram.decode(datagram) else {
                return .failure(.unexpectedKind(DatagramKind.timeReply.rawValue, context: "time service"))
            }
            let reply = TimeDatagram.reply(TimeReply(probe: probe, serverReceiveTime: receiveTime, serverSendTime: clock.instant().nanoseconds)).encoded()
            guard reply.count <= datagram.count else {
                return .failure(.wrongLength(expected: reply.count, actual: datagram.count, context: "time request"))
            }
            return .success(reply)
        } catch {
            return .failure(error)
        }
    }
}
