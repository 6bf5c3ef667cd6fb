#if canImport(Glibc)
import Glibc
#endif
import TandemNet

/// TCP: one connection to the target per client; chunks are delayed, never lost or reordered,
/// and the end of each stream is passed on in its place.
extension NetsimProxy {
    /// Accepts a bounded batch of clients and starts connecting each to the target.
    func acceptClients() {
        for _ in 0..<64 {
            guard let accepted = try? listener.accept() else { return }
            try? accepted.socket.setNoDelay()
            nextConnection += 1
            do {
                let server = try TCPSocket(family: target.family)
                try? server.setNoDelay()
                let connected = try server.connect(to: target)
                connections[nextConnection] = ProxiedConnection(id: nextConnection, client: accepted.socket, server: server, connected: connected)
                counters.withLock { $0.connectionsAccepted += 1 }
            } catch {
                accepted.socket.shutdown()
                counters.withLock { statistics in
                    statistics.connectionsAccepted += 1
                    statistics.connectionsFailed += 1
                }
            }
        }
    }

    /// The target's socket became writable: the connection completed (or failed), or the kernel
    /// has room for more.
    func serverWritable(_ connection: ProxiedConnection) {
        guard !connection.closed else { return }
        if !connection.connected {
            guard connection.server.pendingError() == 0 else {
                counters.withLock { $0.connectionsFailed += 1 }
                return close(connection)
            }
            connection.connected = true
        }
        flush(connection, .up)
    }

    /// Reads a bounded number of chunks going `direction` and schedules each in order.
    func read(_ connection: ProxiedConnection, _ direction: PathDirection) {
        for _ in 0..<16 {
            guard !connection.closed, connection.wantsToRead(direction, limit: Self.streamBufferLimit) else { return }
            let count: Int?
            do {
                count = try connection.source(direction).read(into: &readBuffer)
            } catch {
                return close(connection)
            }
            guard let count else { return }
            let now = clock.instant().nanoseconds
            let due = schedule.onChunk(stream: connection.id, direction, at: now)
            if count == 0 {
                connection.readEnded.insert(direction)
                queue.insert(.chunk(connection, direction, bytes: []), due: due)
                return
            }
            connection.inFlight[direction, default: 0] += count
            counters.withLock { statistics in
                statistics[direction].chunks += 1
                statistics[direction].chunkBytes += count
            }
            queue.insert(.chunk(connection, direction, bytes: Array(readBuffer[..<count])), due: due)
        }
    }

    /// A chunk (or the end of the stream) is due: hand it to the kernel after those before it.
    func deliver(_ bytes: [UInt8], of connection: ProxiedConnection, _ direction: PathDirection, due: Int64) {
        guard !connection.closed else { return }
        connection.outgoing[direction, default: []].append(.init(bytes: bytes[...], size: bytes.count, due: due))
        flush(connection, direction)
    }

    /// Writes what is due going `direction` until the kernel takes no more.
    func flush(_ connection: ProxiedConnection, _ direction: PathDirection) {
        guard !connection.closed, direction == .down || connection.connected else { return }
        let destination = connection.destination(direction)
        while var front = connection.outgoing[direction]?.first {
            if front.isEnd {
                destination.shutdownWrite()
                connection.writeEnded.insert(direction)
                connection.outgoing[direction]?.removeFirst()
                if connection.isFinished { close(connection) }
                return
            }
            let written: Int?
            do {
                written = try destination.write(front.bytes)
            } catch {
                return close(connection)
            }
            guard let written, written > 0 else { return }
            front.bytes = front.bytes.dropFirst(written)
            guard front.bytes.isEmpty else {
                connection.outgoing[direction]?[0] = front
                return
            }
            // The last byte of the chunk is with the kernel: that is its delivery instant.
            recordLateness(due: front.due)
            connection.outgoing[direction]?.removeFirst()
            connection.inFlight[direction, default: 0] -= front.size
            counters.withLock { $0[direction].chunkBytesDelivered += front.size }
        }
    }

    /// Closes both sides at once and drops whatever of the connection was still held.
    func close(_ connection: ProxiedConnection) {
        guard !connection.closed else { return }
        connection.closed = true
        connection.client.shutdown()
        connection.server.shutdown()
        connections[connection.id] = nil
        schedule.onStreamClosed(connection.id)
        queue.removeAll { pending in
            if case let .chunk(held, _, _) = pending { return held === connection }
            return false
        }
    }
}
