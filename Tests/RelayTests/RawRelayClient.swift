import Foundation
import TandemNet
import TandemWire

/// A bare TCP connection to a relay that sends whatever bytes a test gives it, to see how the
/// relay takes bad input. Waits are bounded.
final class RawRelayClient {
    let socket: TCPSocket
    var reader = RelayFrameReader()

    convenience init(port: UInt16) throws {
        try self.init(socket: TCPSocket(family: AF_INET), connectingTo: SocketAddress(host: "127.0.0.1", port: port))
    }

    /// Connects `socket` (bound to a source address of the test's, say) to `address`.
    init(socket: TCPSocket, connectingTo address: SocketAddress) throws {
        self.socket = socket
        if try !socket.connect(to: address) {
            let deadline = ContinuousClock.now + .seconds(5)
            // Writable means connected; poll by trying an empty write until it stops failing.
            while ContinuousClock.now < deadline {
                if socket.pendingError() != 0 { throw SystemCallError(call: "connect", errno: socket.pendingError()) }
                if (try? socket.write([][...])) != nil { break }
                Thread.sleep(forTimeInterval: 0.005)
            }
        }
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        let deadline = ContinuousClock.now + .seconds(5)
        while offset < bytes.count, ContinuousClock.now < deadline {
            if let written = try socket.write(bytes[offset...]) {
                offset += written
            } else {
                Thread.sleep(forTimeInterval: 0.001)
            }
        }
    }

    /// The raw bytes received until the relay closes the connection (or `timeout` passes), and
    /// whether it closed: for frames this build does not decode (another version's).
    func bytesUntilClosed(timeout: Duration = .seconds(5)) -> (bytes: [UInt8], closed: Bool) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let count: Int?
            do {
                count = try socket.read(into: &buffer)
            } catch {
                return (received, true)
            }
            guard let count else {
                Thread.sleep(forTimeInterval: 0.002)
                continue
            }
            if count == 0 { return (received, true) }
            received += buffer[..<count]
        }
        return (received, false)
    }

    /// Frames received until the relay closes the connection (or `timeout` passes), and whether
    /// it closed.
    func framesUntilClosed(timeout: Duration = .seconds(5)) -> (frames: [RelayFrame], closed: Bool) {
        var frames: [RelayFrame] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let count: Int?
            do {
                count = try socket.read(into: &buffer)
            } catch {
                return (frames, true)
            }
            guard let count else {
                Thread.sleep(forTimeInterval: 0.002)
                continue
            }
            if count == 0 { return (frames, true) }
            reader.append(buffer[..<count])
            while let frame = try? reader.next() { frames.append(frame) }
        }
        return (frames, false)
    }
}

/// Frames with a hand-made length prefix, version and type.
func rawFrame(version: UInt8 = RelayFrame.version, type: UInt8, payload: [UInt8]) -> [UInt8] {
    let length = UInt32(payload.count + 2)
    return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), version, type] + payload
}
