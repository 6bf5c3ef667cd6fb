#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import Tandem
import TandemIdentity
import TandemNet
import TandemMpv
import TandemPlayback
import TandemStreaming
import TandemTestKit

struct Film: GroupActivity, Equatable {
    var title: String
}

/// Streaming between real sessions on a real relay over loopback: a holder serves, a joiner
/// without the file reads it byte for byte; the holder's departure suspends the reader; the
/// loopback HTTP server hands the same bytes out with ranges.
@Suite(.serialized, .timeLimit(.minutes(1))) struct SessionStreamingIOTests {
    struct Party {
        let relay: TestRelay
        let host: GroupSession<Film>
        let guest: GroupSession<Film>
    }

    static func party() async throws -> Party {
        let relay = try TestRelay(.network)
        func center(_ name: String) -> ActivityCenter {
            let center = ActivityCenter()
            center.displayName = name
            center.configure(relay: relay.connector, host: relay.host, port: relay.port)
            return center
        }
        let hostCenter = center("ana")
        var hosted = hostCenter.sessions(for: Film.self).makeAsyncIterator()
        _ = try await hostCenter.start(Film(title: "clip"))
        let host = try #require(await hosted.next())
        host.join()
        for await state in host.$state.values {
            if case .joined = state { break }
        }
        let guestCenter = center("ben")
        var guests = guestCenter.sessions(for: Film.self).makeAsyncIterator()
        _ = try await guestCenter.accept(host.invitation)
        let guest = try #require(await guests.next())
        guest.join()
        for session in [host, guest] {
            for await state in session.$state.values {
                if case .joined = state { break }
            }
        }
        return Party(relay: relay, host: host, guest: guest)
    }

    /// A file of `size` pseudo-random bytes in a temporary folder.
    static func file(size: Int) throws -> (path: String, bytes: [UInt8]) {
        let fixture = StreamFixture(size: size, seed: 3)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-stream-\(UUID().uuidString).bin").path
        try Data(fixture.bytes).write(to: URL(fileURLWithPath: path))
        return (path, fixture.bytes)
    }

    /// Reads all of `item` in reads of `count` bytes.
    static func readAll(_ item: StreamedItem, count: Int = 65_536) throws -> [UInt8] {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: count)
        while true {
            let read = try buffer.withUnsafeMutableBytes { try item.read(at: Int64(result.count), into: $0) }
            if read == 0 { return result }
            result += buffer.prefix(read)
        }
    }

    @Test func aJoinerReadsTheHoldersFileExactlySealedThroughTheRelay() async throws {
        let party = try await Self.party()
        defer { party.relay.shutdown() }
        let (path, bytes) = try Self.file(size: 5_000_000)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let identity = try ContentIdentity.of(file: path)
        let serving = SessionStreaming(session: party.host)
        defer { serving.close() }
        try serving.hold(file: path, identity: identity, name: "clip.bin")
        let reading = SessionStreaming(session: party.guest)
        defer { reading.close() }
        // The holder's word names the group's item.
        #expect(await reading.announcedIdentity(of: "clip.bin", timeout: .seconds(10)) == identity)
        #expect(await reading.announcedIdentity(of: "other.bin", timeout: .milliseconds(50)) == nil)
        let item = try reading.item(identity: identity)
        #expect(item.size == 5_000_000)
        #expect(item.holders == [party.host.localParticipant.id])
        let all = try await Task.detached { try Self.readAll(item) }.value
        #expect(all == bytes)
        // A seek back and a read across a block boundary.
        var buffer = [UInt8](repeating: 0, count: 100_000)
        let read = try buffer.withUnsafeMutableBytes { try item.read(at: 262_100, into: $0) }
        #expect(read > 0 && Array(buffer.prefix(read)) == Array(bytes[262_100..<(262_100 + read)]))
        #expect(serving.bytesServed >= 5_000_000)
        let statistics = item.statistics
        #expect(statistics.ignoredChunks == 0)
        #expect(statistics.bytesReceived >= 5_000_000)
    }

    @Test func theHoldersDepartureSuspendsAReaderThatIsNotDone() async throws {
        let party = try await Self.party()
        defer { party.relay.shutdown() }
        let (path, _) = try Self.file(size: 12_000_000)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let identity = try ContentIdentity.of(file: path)
        let serving = SessionStreaming(session: party.host)
        try serving.hold(file: path, identity: identity, name: "clip.bin")
        let reading = SessionStreaming(session: party.guest)
        defer { reading.close() }
        let events = AsyncStream<StreamEvent>.makeStream()
        reading.onEvent { events.continuation.yield($0) }
        _ = await reading.announcedIdentity(of: "clip.bin", timeout: .seconds(10))
        let item = try reading.item(identity: identity)
        var buffer = [UInt8](repeating: 0, count: 1000)
        #expect(try buffer.withUnsafeMutableBytes { try item.read(at: 0, into: $0) } == 1000)
        party.host.leave()
        serving.close()
        var iterator = events.stream.makeAsyncIterator()
        #expect(await iterator.next() == .suspended(identity: identity))
        #expect(item.isSuspended)
        // A read past what arrived waits; closing the item ends it with an error.
        let waiting = Task.detached { () -> Bool in
            var buffer = [UInt8](repeating: 0, count: 1000)
            do {
                _ = try buffer.withUnsafeMutableBytes { try item.read(at: 11_000_000, into: $0) }
                return false
            } catch {
                return true
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        reading.release(item)
        #expect(await waiting.value)
    }

    @Test func theHTTPServerServesRangesUnderItsSecretPathOnly() async throws {
        let party = try await Self.party()
        defer { party.relay.shutdown() }
        let (path, bytes) = try Self.file(size: 1_000_000)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let identity = try ContentIdentity.of(file: path)
        let serving = SessionStreaming(session: party.host)
        defer { serving.close() }
        try serving.hold(file: path, identity: identity, name: "clip.bin")
        let reading = SessionStreaming(session: party.guest)
        defer { reading.close() }
        _ = await reading.announcedIdentity(of: "clip.bin", timeout: .seconds(10))
        let item = try reading.item(identity: identity)
        let server = try MpvByteServer()
        defer {
            item.close()
            server.stop()
        }
        let url = server.serve(item, name: "clip.bin")
        #expect(url.host == "127.0.0.1" && url.port.map(UInt16.init) == server.port)
        let secret = url.path
        let secretLength = 1 + 32 + 1 + 8
        #expect(secret.count == secretLength)
        #expect(secret.hasSuffix("/clip.bin"))
        // The same source again keeps its path; another gets a secret of its own.
        #expect(server.serve(item, name: "clip.bin") == url)
        let other = server.serve(MemoryByteSource(Array(repeating: 7, count: 100)), name: "clip.bin")
        #expect(other.path != secret && other.path.hasSuffix("/clip.bin") && server.servedSources == 2)
        // A peer's name for the item, whatever it holds, gives a path that parses.
        let odd = server.serve(MemoryByteSource([1]), name: "épisode 1/../\u{202E}.mp4")
        #expect(odd.path.hasSuffix("/_pisode_1_..__.mp4") && odd.host == "127.0.0.1", "\(odd)")
        func fetch(_ path: String, range: String?) throws -> (status: Int, headers: [String: String], body: [UInt8]) {
            let response = try Self.get(port: server.port, path: path, range: range)
            return response
        }
        let partial = try await Task.detached { try fetch(secret, range: "bytes=500000-500099") }.value
        #expect(partial.status == 206)
        #expect(partial.headers["content-range"] == "bytes 500000-500099/1000000")
        #expect(partial.body == Array(bytes[500_000..<500_100]))
        let tail = try await Task.detached { try fetch(secret, range: "bytes=-10") }.value
        #expect(tail.status == 206 && tail.body == Array(bytes[999_990...]))
        let whole = try await Task.detached { try fetch(secret, range: nil) }.value
        #expect(whole.status == 200 && whole.body == bytes)
        #expect(try await Task.detached { try fetch(secret, range: "bytes=2000000-") }.value.status == 416)
        // Another path, even the same name under another secret, is not found.
        let guessed = "/" + String(repeating: "0", count: 32) + "/clip.bin"
        let wrong = try await Task.detached { try fetch(guessed, range: nil) }.value
        #expect(wrong.status == 404)
        #expect(try await Task.detached { try fetch("/", range: nil) }.value.status == 404)
        let otherWhole = try await Task.detached { try fetch(other.path, range: nil) }.value
        #expect(otherWhole.status == 200 && otherWhole.body == Array(repeating: 7, count: 100))
    }

    /// A blocking HTTP/1.1 GET on 127.0.0.1 (the response is read to its end: the server closes).
    static func get(port: UInt16, path: String, range: String?) throws -> (status: Int, headers: [String: String], body: [UInt8]) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw StreamingError(description: "connect failed") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n" + (range.map { "Range: \($0)\r\n" } ?? "") + "\r\n"
        _ = Array(request.utf8).withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            response += buffer.prefix(count)
        }
        guard let end = response.firstRange(of: Array("\r\n\r\n".utf8)) else { throw StreamingError(description: "no head") }
        let head = String(decoding: response[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(head[0].split(separator: " ")[1]) ?? 0
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (status, headers, Array(response[end.upperBound...]))
    }
}

/// Bytes in memory, as a program's own byte source.
final class MemoryByteSource: SeekableByteSource {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    var size: Int64? { Int64(bytes.count) }
    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset >= 0, offset < Int64(bytes.count) else { return 0 }
        let count = min(buffer.count, bytes.count - Int(offset))
        bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[Int(offset)..<Int(offset) + count])) }
        return count
    }
}
