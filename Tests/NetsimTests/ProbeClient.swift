#if canImport(Glibc)
import Glibc
#endif
import TandemClock
import TandemNet

/// Sends numbered, timestamped datagrams at a steady pace to a UDP echo server (through the
/// proxy) and collects the echoes, splitting each round trip into its two one-way delays on the
/// monotonic clock that every thread of the test shares.
struct ProbeClient {
    /// One datagram's journey; the later instants are nil when it was lost on the way.
    struct Probe {
        var sendTime: Int64
        var serverTime: Int64?
        var receiveTime: Int64?
        var up: Int64? { serverTime.map { $0 - sendTime } }
        var down: Int64? { receiveTime.flatMap { receive in serverTime.map { receive - $0 } } }
    }

    let socket: UDPSocket
    let clock = SystemClock()

    init(to address: SocketAddress) throws {
        socket = try UDPSocket(family: address.family)
        try socket.connect(to: address)
    }

    /// Sends `count` datagrams `spacing` nanoseconds apart, then waits `linger` for stragglers.
    func run(count: Int, spacing: Int64, linger: Int64 = 500_000_000) throws -> [Probe] {
        var probes: [Probe] = []
        probes.reserveCapacity(count)
        var buffer = [UInt8](repeating: 0, count: 256)
        let start = clock.instant().nanoseconds
        let end = start + Int64(count) * spacing + linger
        // Bounded by the end instant: every pass waits at most until the next send or the end.
        while clock.instant().nanoseconds < end {
            let now = clock.instant().nanoseconds
            if probes.count < count, now >= start + Int64(probes.count) * spacing {
                let sequence = UInt64(probes.count)
                probes.append(Probe(sendTime: clock.instant().nanoseconds))
                try socket.send(Wire.bytes(sequence) + [UInt8](repeating: 0xA5, count: 24))
                continue
            }
            let next = probes.count < count ? start + Int64(probes.count) * spacing : end
            var entry = pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(max(0, min((next - now) / 1_000_000, 50)))
            _ = try SystemCall.run("poll") { poll(&entry, 1, milliseconds) }
            while let (length, _) = try receiveIgnoringRefusals(&buffer) {
                let receiveTime = clock.instant().nanoseconds
                guard length == 40 else { continue }
                let datagram = Array(buffer[..<length])
                let sequence = Int(Wire.read(datagram, at: 0))
                guard sequence < probes.count else { continue }
                probes[sequence].serverTime = Int64(bitPattern: Wire.read(datagram, at: 32))
                probes[sequence].receiveTime = receiveTime
            }
        }
        return probes
    }

    private func receiveIgnoringRefusals(_ buffer: inout [UInt8]) throws -> (length: Int, sender: SocketAddress?)? {
        do {
            return try socket.receive(into: &buffer)
        } catch where error.errno == ECONNREFUSED {
            return nil
        }
    }
}

/// The median of some values, nil when there are none.
func median(_ values: [Int64]) -> Int64? {
    guard !values.isEmpty else { return nil }
    return values.sorted()[values.count / 2]
}
