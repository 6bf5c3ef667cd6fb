#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TandemMedia
import TandemTestKit

/// A received file opens only local files: playlists and references naming other protocols
/// fail at once with a clear error, and no connection is attempted.
@Suite struct ProtocolWhitelistTests {
    @Test func anHLSPlaylistWithNetworkSegmentsIsRefused() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let witness = try ConnectionWitness()
        let playlist = try fixtures.write("movie.m3u8", Array("""
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-TARGETDURATION:10
            #EXTINF:10.0,
            http://127.0.0.1:\(witness.port)/segment0.ts
            #EXTINF:10.0,
            http://127.0.0.1:1/segment1.ts
            #EXT-X-ENDLIST

            """.utf8))
        let error = #expect(throws: MediaError.self) { try MediaFile(url: playlist) }
        #expect(error?.description.contains("movie.m3u8: cannot open it") == true, "\(String(describing: error))")
        #expect(error?.description.contains("a playlist") == true, "\(String(describing: error))")
        #expect(!witness.connectionAttempted)
    }

    @Test func anFFconcatListOfURLsIsRefused() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let witness = try ConnectionWitness()
        let list = try fixtures.write("movie.ffconcat", Array("""
            ffconcat version 1.0
            file 'http://127.0.0.1:\(witness.port)/x.mp4'
            file 'http://127.0.0.1:1/x'

            """.utf8))
        // The concat demuxer's own safe mode refuses URLs too; the whitelist is behind it.
        let error = #expect(throws: MediaError.self) { try MediaFile(url: list) }
        #expect(error?.description.contains("movie.ffconcat: cannot open it") == true, "\(String(describing: error))")
        #expect(error?.description.contains("a playlist") == true, "\(String(describing: error))")
        #expect(!witness.connectionAttempted)
    }

    @Test(arguments: ["concat:A|A", "subfile,,start,0,end,100,,:A", "tcp://127.0.0.1:1", "crypto:A"])
    func otherProtocolsInAPathAreRefused(template: String) throws {
        let url = template.replacingOccurrences(of: "A", with: SampleClip.h264.path)
        if MediaFile.isURL(url) {
            // A URL the user gave is FFmpeg's to open (port 1: nothing listens, it fails).
            #expect(throws: MediaError.self) { try MediaFile(url: url) }
        } else {
            let error = #expect(throws: MediaError.self) { try MediaFile(url: url) }
            #expect(error?.description.contains("names another protocol") == true, "\(String(describing: error))")
        }
    }

    @Test func localPlaylistsOfLocalFilesStillOpen() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        _ = try fixtures.ffmpeg(["-i", SampleClip.h264.path, "-c", "copy", "-f", "mpegts"], output: "segment0.ts")
        let playlist = try fixtures.write("local.m3u8", Array("""
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-TARGETDURATION:10
            #EXTINF:10.0,
            segment0.ts
            #EXT-X-ENDLIST

            """.utf8))
        let file = try MediaFile(url: playlist)
        #expect(file.info.video != nil)
        #expect(try MediaFile(url: SampleClip.h264.path).info.video != nil)
    }

    @Test(arguments: [("https://example.com/a.mp4", true), ("rtmp://h/live", true), ("/tmp/a.mp4", false), ("movie.mp4", false),
                      ("concat:a|b", false), ("C:/x", false), ("1http://x", false), ("a b://c", false), ("file:///tmp/a.mp4", true)])
    func whatCountsAsAURL(text: String, isURL: Bool) {
        #expect(MediaFile.isURL(text) == isURL)
    }
}

/// A TCP listener on loopback that the crafted files point at: whatever connects to it is
/// queued in its backlog, and `connectionAttempted` finds it there.
final class ConnectionWitness {
    let descriptor: Int32
    let port: UInt16

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && listen(descriptor, 8) == 0
                    && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw FixtureError("cannot listen on loopback: errno \(errno)")
        }
        self.descriptor = descriptor
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(descriptor) }

    /// Whether anyone has connected (a non-blocking accept finds a queued connection).
    var connectionAttempted: Bool {
        let accepted = accept(descriptor, nil, nil)
        if accepted >= 0 { close(accepted) }
        return accepted >= 0
    }
}
