#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// A tiny HTTP/1.1 server on loopback (port 0) for `http` items, the built-in player's (FFmpeg)
/// and mpv's: it serves bytes with Range requests (206 and `Content-Range`, as both seek with
/// them), redirects, and bare statuses. One thread accepts; each connection gets a thread of its
/// own (a seek opens its connection before the old one closes) and one response, and gives up
/// on a client that sends no header within 5 s.
public final class LoopbackHTTPServer: Sendable {
    /// What a path answers.
    public enum Route: Sendable {
        /// These bytes, honouring `Range: bytes=N-` and `bytes=N-M`.
        case bytes([UInt8])
        /// A 302 to this location.
        case redirect(String)
        /// This status with an empty body.
        case status(Int)
    }

    /// The port it listens on.
    public let port: UInt16
    private let descriptor: Int32
    private let routes: [String: Route]
    private let log = Mutex<[String]>([])
    private let acceptDone = DispatchSemaphore(value: 0)

    /// A server answering each path (without its leading `/`) as `routes` says, and 404 otherwise.
    public init(routes: [String: Route]) throws {
        self.routes = routes
        (descriptor, port) = try LoopbackListener.open()
        Thread { [self] in
            acceptLoop()
            acceptDone.signal()
        }.start()
    }

    /// A server of the file at `path`, under `name`, honouring ranges.
    public convenience init(serving path: String, as name: String) throws {
        try self.init(routes: [name: .bytes(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))))])
    }

    /// `http://127.0.0.1:PORT/path`.
    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)/\(path)")! }

    /// The requests served so far: `GET /path` and the Range header, if any.
    public var requests: [String] { log.withLock { $0 } }

    /// Stops accepting and waits for the accepting thread; connections in progress end when
    /// their client closes or their response is written.
    public func stop() {
        shutdown(descriptor, Int32(SHUT_RDWR))
        acceptDone.wait()
        close(descriptor)
    }

    private func acceptLoop() {
        while true {
            let connection = accept(descriptor, nil, nil)
            if connection < 0 {
                if errno == EINTR { continue }
                return
            }
            Thread { [self] in
                serve(connection)
                close(connection)
            }.start()
        }
    }

    private func serve(_ connection: Int32) {
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var request = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while request.count < 16_384 {
            let count = recv(connection, &chunk, chunk.count, 0)
            guard count > 0 else { return }
            request += chunk.prefix(count)
            if LoopbackHTTPServer.headerEnds(in: request) { break }
        }
        guard LoopbackHTTPServer.headerEnds(in: request) else { return }
        let text = String(decoding: request, as: UTF8.self)
        let lines = text.components(separatedBy: "\r\n")
        let parts = lines.first?.split(separator: " ") ?? []
        guard parts.count >= 2 else { return }
        let path = String(parts[1].dropFirst())
        let range = lines.first { $0.lowercased().hasPrefix("range:") }
        log.withLock { $0.append("\(parts[0]) /\(path)" + (range.map { " \($0)" } ?? "")) }
        switch routes[path] {
        case .bytes(let body)?:
            var start = 0
            var end = body.count - 1
            var status = "200 OK"
            if let range, let spec = range.split(separator: "=").last {
                let bounds = spec.split(separator: "-", omittingEmptySubsequences: false)
                start = Int(bounds.first ?? "") ?? 0
                if bounds.count > 1, let last = Int(bounds[1]) { end = min(last, body.count - 1) }
                status = "206 Partial Content"
            }
            guard start <= end || body.isEmpty else {
                write(connection, "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */\(body.count)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", [])
                return
            }
            var header = "HTTP/1.1 \(status)\r\nContent-Type: application/octet-stream\r\nAccept-Ranges: bytes\r\n"
            header += "Content-Length: \(end - start + 1)\r\nConnection: close\r\n"
            if status.hasPrefix("206") { header += "Content-Range: bytes \(start)-\(end)/\(body.count)\r\n" }
            write(connection, header + "\r\n", Array(body[start...end]))
        case .redirect(let location)?:
            write(connection, "HTTP/1.1 302 Found\r\nLocation: \(location)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", [])
        case .status(let code)?:
            write(connection, "HTTP/1.1 \(code) Status\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", [])
        case nil:
            write(connection, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", [])
        }
    }

    /// Whether `bytes` hold the end of an HTTP header, `\r\n\r\n`.
    private static func headerEnds(in bytes: [UInt8]) -> Bool {
        guard bytes.count >= 4 else { return false }
        return (0...(bytes.count - 4)).contains { bytes[$0] == 13 && bytes[$0 + 1] == 10 && bytes[$0 + 2] == 13 && bytes[$0 + 3] == 10 }
    }

    /// Writes the header and body; stops at the first failure (the client went away).
    private func write(_ connection: Int32, _ header: String, _ body: [UInt8]) {
        let bytes = Array(header.utf8) + body
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return }
            offset += sent
        }
    }
}
