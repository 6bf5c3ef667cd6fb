#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import TandemPlayback

/// A tiny HTTP/1.1 server on 127.0.0.1 through which mpv, another process, reads the byte
/// sources of `PlaybackItem`s (a streamed item: `MpvPlayer` plays `.bytes` items through it),
/// with range requests (RFC 9110 §14: `Range: bytes=N-`, `bytes=N-M`, `bytes=-N`; 206 with
/// `Content-Range`, 416 outside the item). Each source is served under an unguessable path of
/// its own: `/` then 32 random hex digits (128 bits from the system's generator), then `/` and
/// a name. Any other path is 404; methods other than GET and HEAD are 405.
///
/// It binds loopback only, so that nobody else on the network reaches it; the paths keep other
/// local users' processes out, as long as no URL is shown to them: `MpvPlayer` hands them to mpv
/// over its IPC socket, never on mpv's command line (which `ps` shows to every local user). One
/// thread accepts; each connection gets a thread of its own (a seek opens a new connection before
/// the old one is closed) and is closed after its response; at most `maximumConnections` at
/// once, and a client that sends no complete header within 5 s is dropped.
public final class MpvByteServer: Sendable {
    /// The port it listens on.
    public let port: UInt16
    /// The most connections served at once.
    public static let maximumConnections = 16

    /// The sources served, by secret path.
    private let sources = Mutex<[String: any SeekableByteSource]>([:])
    private let descriptor: Int32
    private let acceptDone = DispatchSemaphore(value: 0)
    private let connections = Mutex(0)
    private let served = Mutex<Int64>(0)

    /// Listens on a free port of 127.0.0.1, serving nothing until `serve(_:name:)`.
    public init() throws(MpvError) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw MpvError.launch("the byte server for mpv", "socket failed: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        guard bound == 0, listen(listener, 16) == 0, named == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(listener)
            throw MpvError.launch("the byte server for mpv", "cannot listen on 127.0.0.1: \(reason)")
        }
        descriptor = listener
        port = UInt16(bigEndian: address.sin_port)
        Thread { [self] in
            acceptLoop()
            acceptDone.signal()
        }.start()
    }

    /// Serves `source` under a fresh secret path ending in `name` (sanitised to ASCII, for mpv's title)
    /// and returns its URL, `http://127.0.0.1:PORT/SECRET/NAME`. The same source served twice
    /// gets the path it has.
    public func serve(_ source: any SeekableByteSource, name: String = "media") -> URL {
        let path = sources.withLock { sources -> String in
            if let known = sources.first(where: { $0.value === source }) { return known.key }
            // The system's generator: the kernel's getrandom on Linux, fit for secrets.
            var generator = SystemRandomNumberGenerator()
            let random = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            // ASCII letters, digits and `._-` alone: the name is a peer's word, and the URL must
            // parse whatever it holds.
            let safeName = name.unicodeScalars.map { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0))
                ? String($0) : "_" }.joined().prefix(80)
            let path = "/" + random.map { String(format: "%02x", $0) }.joined() + "/" + (safeName.isEmpty ? "media" : safeName)
            sources[path] = source
            return path
        }
        return URL(string: "http://127.0.0.1:\(port)\(path)")!
    }

    /// How many sources it serves.
    public var servedSources: Int { sources.withLock { $0.count } }

    /// Bytes of bodies written so far.
    public var bytesServed: Int64 { served.withLock { $0 } }

    /// Stops accepting and waits for the accepting thread; responses in progress end when their
    /// source's reads end (close the source first to end them at once) or their client goes.
    public func stop() {
        shutdown(descriptor, Int32(SHUT_RDWR))
        acceptDone.wait()
        Glibc.close(descriptor)
    }

    private func acceptLoop() {
        while true {
            let client = accept(descriptor, nil, nil)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            // mpv and anything else this process starts must not inherit a connection.
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            let admitted = connections.withLock { count -> Bool in
                guard count < MpvByteServer.maximumConnections else { return false }
                count += 1
                return true
            }
            guard admitted else {
                Glibc.close(client)
                continue
            }
            Thread { [self] in
                respond(on: client)
                Glibc.close(client)
                connections.withLock { $0 -= 1 }
            }.start()
        }
    }

    /// The request's head (up to the blank line), or nil when it is not whole within 5 s of the
    /// connection (a deadline for the whole head, so that trickling a byte at a time holds a
    /// connection no longer) or exceeds 16 KiB.
    private func head(of client: Int32) -> String? {
        let deadline = DispatchTime.now().uptimeNanoseconds + 5_000_000_000
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 16 * 1024 {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { return nil }
            let left = deadline - now
            var timeout = timeval(tv_sec: Int(left / 1_000_000_000), tv_usec: Int(left % 1_000_000_000 / 1000))
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            bytes += buffer.prefix(count)
            if let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) {
                return String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
            }
        }
        return nil
    }

    private func respond(on client: Int32) {
        guard let head = head(of: client) else { return }
        let lines = head.components(separatedBy: "\r\n")
        let request = lines[0].split(separator: " ")
        guard request.count == 3 else { return status(400, on: client) }
        let method = request[0]
        guard method == "GET" || method == "HEAD" else { return status(405, on: client) }
        guard let source = sources.withLock({ $0[String(request[1])] }) else { return status(404, on: client) }
        guard let size = source.size else { return status(503, on: client) }
        let rangeLine = lines.dropFirst().first { $0.lowercased().hasPrefix("range:") }
        var start: Int64 = 0
        var end = size - 1
        var partial = false
        if let rangeLine {
            guard let range = MpvByteServer.range(rangeLine.dropFirst("range:".count).trimmingCharacters(in: .whitespaces), size: size) else {
                write("HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */\(size)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                      to: client)
                return
            }
            (start, end, partial) = (range.lowerBound, range.upperBound, true)
        }
        let length = size == 0 ? 0 : end - start + 1
        var response = partial ? "HTTP/1.1 206 Partial Content\r\n" : "HTTP/1.1 200 OK\r\n"
        response += "Content-Type: application/octet-stream\r\nAccept-Ranges: bytes\r\nContent-Length: \(length)\r\n"
        if partial { response += "Content-Range: bytes \(start)-\(end)/\(size)\r\n" }
        response += "Connection: close\r\n\r\n"
        guard write(response, to: client), method == "GET" else { return }
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        var offset = start
        while offset <= end {
            let wanted = Int(min(Int64(buffer.count), end - offset + 1))
            guard let read = try? buffer.withUnsafeMutableBytes({ try source.read(at: offset, into: UnsafeMutableRawBufferPointer(rebasing: $0[..<wanted])) }),
                  read > 0 else { return }
            guard writeAll(buffer[..<read], to: client) else { return }
            served.withLock { $0 += Int64(read) }
            offset += Int64(read)
        }
    }

    /// The inclusive byte range a `Range` value asks for within `size` bytes; nil when it is not
    /// one range of bytes that the item satisfies.
    static func range(_ value: String, size: Int64) -> ClosedRange<Int64>? {
        guard value.hasPrefix("bytes="), size > 0 else { return nil }
        let spec = value.dropFirst("bytes=".count)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash].trimmingCharacters(in: .whitespaces)
        let last = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        if first.isEmpty {
            guard let suffix = Int64(last), suffix > 0 else { return nil }
            return max(0, size - suffix)...(size - 1)
        }
        guard let start = Int64(first), start >= 0, start < size else { return nil }
        if last.isEmpty { return start...(size - 1) }
        guard let end = Int64(last), end >= start else { return nil }
        return start...min(end, size - 1)
    }

    private func status(_ code: Int, on client: Int32) {
        let reason = [400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 503: "Service Unavailable"][code] ?? "Error"
        _ = write("HTTP/1.1 \(code) \(reason)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", to: client)
    }

    @discardableResult
    private func write(_ text: String, to client: Int32) -> Bool { writeAll(Array(text.utf8)[...], to: client) }

    private func writeAll(_ bytes: ArraySlice<UInt8>, to client: Int32) -> Bool {
        var rest = bytes
        while !rest.isEmpty {
            let count = rest.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            rest = rest.dropFirst(count)
        }
        return true
    }
}
