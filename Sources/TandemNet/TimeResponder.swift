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
    public func reply(to datagram: some Collection<UInt8>, receivedAt receiveTime: Int64) -> Result<[UInt8], WireError> {
        do throws(WireError) {
            guard case let .request(probe) = try TimeDatagram.decode(datagram) else {
                return .failure(.unexpectedKind(DatagramKind.timeReply.rawValue, context: "time service"))
            }
            let reply = TimeReply(probe: probe, serverReceiveTime: receiveTime, serverSendTime: clock.now())
            return .success(TimeDatagram.reply(reply).encoded())
        } catch {
            return .failure(error)
        }
    }
}
