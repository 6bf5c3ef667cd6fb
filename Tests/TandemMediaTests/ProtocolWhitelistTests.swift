#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TandemMedia
import TandemTestKit
import TandemMediaTypes

/// A received file opens only local files: playlists and references naming other protocols
/// fail at once with a clear error, and no connection is attempted.
@Suite struct ProtocolWhitelistProcessTests {
    @Test func anHLSPlaylistWithNetworkSegmentsIsRefused() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let witness = try LoopbackConnectionWitness()
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
        let witness = try LoopbackConnectionWitness()
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

