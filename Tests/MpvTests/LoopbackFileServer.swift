#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// A minimal HTTP/1.1 server on 127.0.0.1 that serves one file, with byte ranges (`Range:
/// bytes=N-` or `bytes=N-M`), so that mpv can open an `http` URL in the tests. Each connection
/// gets a thread of its own, and ends after one response; `stop()` closes the listener, and the
/// connections end once their response is written (or the peer goes).
final class LoopbackFileServer: @unchecked Sendable {
    /// The port it listens on.
    let port: UInt16
    /// How many requests it answered.
    var requests: Int { served.withLock { $0 } }

    private let listener: Int32
    private let file: [UInt8]
    private let served = Mutex(0)
    private var acceptor: Thread?

    /// Serves the bytes of `path` at every path.
    init(serving path: String) throws {
        file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && listen(descriptor, 16) == 0
                    && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
        listener = descriptor
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in acceptLoop() }
        acceptor = thread
        thread.start()
    }

    /// The URL of the file.
    var url: URL { URL(string: "http://127.0.0.1:\(port)/clip.mp4")! }

    /// Stops accepting connections (the acceptor closes the listener as it ends).
    func stop() {
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
    }

    private func acceptLoop() {
        defer { close(listener) }
        // Bounded by the listener: accept fails once it is shut down.
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            Thread { [self] in serve(connection) }.start()
        }
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        // Bounded: at most 64 KiB of headers.
        while request.count < 65_536, !request.ends(with: Array("\r\n\r\n".utf8)) {
            let count = read(connection, &buffer, buffer.count)
            guard count > 0 else { return }
            request += buffer[..<count]
        }
        served.withLock { $0 += 1 }
        let text = String(decoding: request, as: UTF8.self).lowercased()
        var start = 0, end = file.count - 1
        var partial = false
        if let line = text.split(separator: "\r\n").first(where: { $0.hasPrefix("range: bytes=") }) {
            let bounds = line.dropFirst("range: bytes=".count).split(separator: "-", omittingEmptySubsequences: false)
            start = Int(bounds.first ?? "") ?? 0
            if bounds.count > 1, let last = Int(bounds[1]) { end = min(last, end) }
            partial = true
        }
        guard start <= end else {
            write(connection, "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */\(file.count)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        }
        var head = partial ? "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes \(start)-\(end)/\(file.count)\r\n" : "HTTP/1.1 200 OK\r\n"
        head += "Content-Type: video/mp4\r\nAccept-Ranges: bytes\r\nContent-Length: \(end - start + 1)\r\nConnection: close\r\n\r\n"
        guard write(connection, head) else { return }
        _ = file[start...end].withUnsafeBytes { write(connection, $0) }
    }

    @discardableResult
    private func write(_ connection: Int32, _ text: String) -> Bool {
        Array(text.utf8).withUnsafeBytes { write(connection, $0) }
    }

    /// Writes all of `bytes`; false when the peer went away.
    private func write(_ connection: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        // Bounded: each pass writes something or ends.
        while offset < bytes.count {
            let count = send(connection, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }
}

private extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}
