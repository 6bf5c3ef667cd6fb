#if canImport(Glibc)
import Glibc
#endif
import TandemNet

/// UDP: one socket towards the target per client address; datagrams may be lost or held back.
extension NetsimProxy {
    /// Reads a bounded batch of datagrams from clients and schedules each for the target.
    func receiveFromClients() {
        for _ in 0..<256 {
            let received: (length: Int, sender: SocketAddress?)?
            do {
                received = try datagrams.receive(into: &readBuffer)
            } catch {
                // An ICMP error from an earlier send to a client that went away: read on.
                continue
            }
            guard let (length, sender) = received else { return }
            let now = clock.instant().nanoseconds
            guard let sender, length <= readBuffer.count, let flow = flow(for: sender, now: now) else { continue }
            schedule(Array(readBuffer[..<length]), of: flow, .up, at: now)
        }
    }

    /// Reads a bounded batch of the target's replies to one client and schedules each for it.
    func receiveFromTarget(_ flow: DatagramFlow) {
        for _ in 0..<256 {
            guard !flow.closed else { return }
            let received: (length: Int, sender: SocketAddress?)?
            do {
                received = try flow.socket.receive(into: &readBuffer)
            } catch {
                // The target refused an earlier datagram (nothing listens): it stays refused
                // until something listens, and the client sees the loss as on any path.
                continue
            }
            guard let (length, _) = received else { return }
            let now = clock.instant().nanoseconds
            guard length <= readBuffer.count else { continue }
            schedule(Array(readBuffer[..<length]), of: flow, .down, at: now)
        }
    }

    private func schedule(_ bytes: [UInt8], of flow: DatagramFlow, _ direction: PathDirection, at now: Int64) {
        flow.lastActivity = now
        let sequence = flow.sequence(direction)
        let decision = schedule.onDatagram(direction, at: now)
        counters.withLock { statistics in
            statistics[direction].datagrams += 1
            statistics[direction].datagramBytes += bytes.count
            if case .lose = decision { statistics[direction].datagramsLost += 1 }
            if decision.heldBack { statistics[direction].datagramsHeldBack += 1 }
        }
        for due in decision.deliveries {
            queue.insert(.datagram(flow, direction, sequence: sequence, bytes: bytes), due: due)
        }
    }

    /// Sends a due datagram on: to the target from the client's own socket, or to the client.
    func deliver(_ bytes: [UInt8], of flow: DatagramFlow, _ direction: PathDirection, sequence: UInt64, due: Int64) {
        guard !flow.closed else {
            counters.withLock { $0[direction].datagramsFailed += 1 }
            return
        }
        let sent: Bool
        do {
            sent = direction == .up ? try flow.socket.send(bytes) : try datagrams.send(bytes, to: flow.client)
        } catch {
            sent = false
        }
        guard sent else {
            counters.withLock { $0[direction].datagramsFailed += 1 }
            return
        }
        recordLateness(due: due)
        let reordered = flow.deliver(sequence, direction)
        counters.withLock { statistics in
            statistics[direction].datagramsDelivered += 1
            if reordered { statistics[direction].datagramsReordered += 1 }
        }
    }

    /// The flow of `client`, opened on its first datagram; nil when no socket could be opened.
    private func flow(for client: SocketAddress, now: Int64) -> DatagramFlow? {
        if let flow = flows[client] { return flow }
        if flows.count >= Self.maximumDatagramFlows,
           let quietest = flows.values.min(by: { $0.lastActivity < $1.lastActivity }) {
            quietest.closed = true
            flows[quietest.client] = nil
        }
        guard let socket = try? UDPSocket(family: target.family), (try? socket.connect(to: target)) != nil else { return nil }
        let flow = DatagramFlow(client: client, socket: socket, now: now)
        flows[client] = flow
        counters.withLock { $0.datagramClients += 1 }
        return flow
    }
}
