#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// A UNIX-domain socket server in this test process that pretends to be mpv's IPC: it accepts
/// one connection and runs a script against it on a thread of its own. Every wait is bounded.
final class FakeMpvServer: @unchecked Sendable {
    /// The socket's path.
    let path: String
    private let listener: Int32
    private let done = DispatchSemaphore(value: 0)
    /// Everything the client wrote, as the script read it (or drained it at the end).
    private let received = Mutex(Data())

    /// Listens at a fresh path under the temporary directory.
    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-fake-mpv-\(UUID().uuidString.prefix(8)).sock").path
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw FakeMpvError("socket: \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { for (index, byte) in bytes.enumerated() { $0[index] = byte } }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(listener, 4) == 0 else {
            close(listener)
            throw FakeMpvError("bind/listen: \(errno)")
        }
    }

    deinit {
        close(listener)
        unlink(path)
    }

    /// One accepted client, as the script sees it.
    struct Client {
        let descriptor: Int32
        let server: FakeMpvServer

        /// The next line the client wrote (without its newline), or nil after `timeout` seconds
        /// or at the end of the stream.
        func readLine(timeout: Double = 5) -> String? {
            var line = Data()
            let deadline = Date().addingTimeInterval(timeout)
            var byte: UInt8 = 0
            while Date() < deadline {
                var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&entry, 1, 50) >= 0 else { return nil }
                guard entry.revents != 0 else { continue }
                guard Glibc.read(descriptor, &byte, 1) == 1 else { return nil }
                server.received.withLock { $0.append(byte) }
                if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
                line.append(byte)
            }
            return nil
        }

        /// Writes `text` whole (blocking), ignoring a client that went away.
        func write(_ text: String) {
            write(Array(text.utf8))
        }

        /// Writes `bytes` whole (blocking), ignoring a client that went away.
        func write(_ bytes: [UInt8]) {
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    /// Accepts one client within `timeout` seconds and runs `script` with it on a thread of its
    /// own; then reads what the client still sends until it closes (at most `timeout` more).
    func serve(timeout: Double = 10, _ script: @escaping @Sendable (Client) -> Void) {
        Thread.detachNewThread { [self] in
            defer { done.signal() }
            var entry = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, Int32(timeout * 1000)) > 0 else { return }
            let descriptor = accept(listener, nil, nil)
            guard descriptor >= 0 else { return }
            defer { close(descriptor) }
            let client = Client(descriptor: descriptor, server: self)
            script(client)
            while client.readLine(timeout: timeout) != nil {}
        }
    }

    /// Waits (at most `timeout` seconds) until the script and the draining after it are done.
    func waitUntilDone(timeout: Double = 20) -> Bool {
        done.wait(timeout: .now() + timeout) == .success
    }

    /// The bytes the client wrote.
    var bytesReceived: Data { received.withLock { $0 } }
}

struct FakeMpvError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
