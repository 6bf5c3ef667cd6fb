import Foundation
import Testing
import TandemMedia
import TandemPlayback
import TandemTestKit
import TandemClock
import TandemMediaTypes

/// Items from each kind of source: a file, an `http` URL (a real server on loopback, with Range
/// requests), and a byte source (a custom AVIO input), decoded by real FFmpeg.
@Suite(.serialized) struct ItemSourceProcessTests {
    static let clip = SampleClip.h264

    /// Every picture the decoder yields from `file`, by frame number.
    static func frameNumbers(_ file: MediaFile) throws -> [Int] {
        let decoder = try MediaDecoder(file: file, decodeVideo: true, decodeAudio: false)
        var numbers: [Int] = []
        while let decoded = try decoder.next() {
            if case .video(let frame) = decoded { numbers.append(try FrameNumber.read(frame)) }
        }
        return numbers
    }

    @Test func aByteSourceDecodesAsTheFileDoes() throws {
        let source = try MemoryByteSource(file: Self.clip.path)
        let file = try MediaFile(item: PlaybackItem(bytes: source, identifier: "clip"))
        let reference = try MediaFile(url: Self.clip.path)
        #expect(file.info.duration == reference.info.duration)
        #expect(file.info.streams.count == reference.info.streams.count)
        #expect(file.info.url == "clip (a byte source)")
        #expect(try Self.frameNumbers(file) == Array(0..<Self.clip.frameCount))
        #expect(source.reads > 0)
    }

    @Test func aByteSourceSeeksAccurately() throws {
        let source = try MemoryByteSource(file: SampleClip.h264BFrames.path)
        let decoder = try MediaDecoder(file: MediaFile(item: PlaybackItem(bytes: source, identifier: "b")), decodeAudio: false)
        let target = SampleClip.h264BFrames.time(ofFrame: 75)
        try decoder.seek(to: target)
        guard case .video(let frame)? = try decoder.next() else {
            Issue.record("no picture after the seek")
            return
        }
        #expect(try FrameNumber.read(frame) == 75)
    }

    @Test func aPlayerPlaysAByteSourceItem() throws {
        let recorder = ItemRecorder()
        let source = try MemoryByteSource(file: Self.clip.path)
        let start = PresentationTimeline(rate: 4, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: HostInstant.now().nanoseconds + 100_000_000))
        let player = try HeadlessPlayer(item: PlaybackItem(bytes: source, identifier: "from-bytes"), videoSinks: [recorder], timeline: start)
        defer { player.close() }
        #expect(player.itemIdentifier == "from-bytes")
        #expect(player.currentItem.identifier == "from-bytes")
        #expect(player.waitUntilEnded(timeout: 15))
        let entries = recorder.all.filter { !$0.presentation.isStill }
        #expect(entries.count + player.statistics.droppedLateFrames == Self.clip.frameCount)
        #expect(entries.allSatisfy { $0.item == "from-bytes" && $0.number == Self.clip.frame(at: $0.pts) })
    }

    @Test func aByteSourceThatFailsAtOnceIsAClearError() throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.clip.path)))
        let error = #expect(throws: MediaError.self) {
            try MediaFile(item: PlaybackItem(bytes: FailingByteSource(bytes, failing: 0..<Int64(bytes.count)), identifier: "gone"))
        }
        #expect(error?.description.contains("gone (a byte source)") == true, "\(String(describing: error))")
        #expect(error?.description.contains("the peer serving these bytes is gone") == true, "\(String(describing: error))")
    }

    @Test func aByteSourceThatFailsMidwayEndsDecodingWithItsError() throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.clip.path)))
        // The sample keeps its index at the end: the bytes from the middle of the media data to
        // the index fail, so the open succeeds and decoding stops halfway.
        let index = Int64(bytes.count - 8_192)
        let source = FailingByteSource(bytes, failing: Int64(bytes.count / 2)..<index)
        let recorder = ItemRecorder()
        let start = PresentationTimeline(rate: 4, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: HostInstant.now().nanoseconds + 100_000_000))
        let player = try HeadlessPlayer(item: PlaybackItem(bytes: source, identifier: "half"), videoSinks: [recorder], timeline: start)
        defer { player.close() }
        #expect(player.waitUntilEnded(timeout: 15))
        let presented = recorder.all.filter { !$0.presentation.isStill }
        #expect(!presented.isEmpty && presented.count < Self.clip.frameCount)
        let failure = player.statistics.decodingError ?? ""
        #expect(failure.contains("the peer serving these bytes is gone"), "\(failure)")
        // The player still answers, and another one opens the whole file.
        #expect(player.timeline.rate == 4)
        #expect(try Self.frameNumbers(MediaFile(item: PlaybackItem(bytes: MemoryByteSource(bytes), identifier: "whole"))).count
                == Self.clip.frameCount)
    }

    @Test func aByteSourceHasTheIdentityOfTheFileWithItsBytes() throws {
        let source = try MemoryByteSource(file: Self.clip.path)
        #expect(try MediaIdentity.of(bytes: source) == MediaIdentity.of(file: Self.clip.path))
        #expect(try MediaIdentity.of(bytes: source) != MediaIdentity.of(file: SampleClip.h264BFrames.path))
    }

    @Test func anHTTPItemPlaysFromALoopbackServer() throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: SampleClip.h264BFrames.path)))
        let server = try LoopbackHTTPServer(routes: ["clip.mp4": .bytes(bytes)])
        defer { server.stop() }
        let item = try PlaybackItem(url: server.url("clip.mp4"))
        #expect(item.identifier == "clip.mp4")
        let file = try MediaFile(item: item)
        #expect(file.info.video != nil)
        let decoder = try MediaDecoder(file: file, decodeAudio: false)
        // A seek in an http item is a Range request.
        try decoder.seek(to: SampleClip.h264BFrames.time(ofFrame: 90))
        guard case .video(let frame)? = try decoder.next() else {
            Issue.record("no picture after the seek")
            return
        }
        #expect(try FrameNumber.read(frame) == 90)
        #expect(server.requests.allSatisfy { $0.hasPrefix("GET /clip.mp4") })
        #expect(server.requests.contains { $0.lowercased().contains("range: bytes=") })

        let recorder = ItemRecorder()
        let start = PresentationTimeline(rate: 4, anchorItemTime: .init(nanoseconds: 3_000_000_000), anchorHostTime: .init(nanoseconds: HostInstant.now().nanoseconds + 150_000_000))
        let player = try HeadlessPlayer(item: item, options: Self.videoOnly, videoSinks: [recorder], timeline: start)
        defer { player.close() }
        #expect(player.waitUntilEnded(timeout: 15))
        let entries = recorder.all.filter { !$0.presentation.isStill }
        #expect(entries.first?.number == 90)
        #expect(entries.allSatisfy { $0.item == "clip.mp4" && $0.number == SampleClip.h264BFrames.frame(at: $0.pts) })
    }

    static var videoOnly: HeadlessPlayer.Options {
        var options = HeadlessPlayer.Options()
        options.decodeAudio = false
        return options
    }

    @Test(arguments: ["file:///etc/passwd", "udp://127.0.0.1:9", "concat:/etc/hostname|/etc/hostname"])
    func anHTTPItemRedirectedToAnotherProtocolIsRefused(location: String) throws {
        let server = try LoopbackHTTPServer(routes: ["movie.mp4": .redirect(location)])
        defer { server.stop() }
        let error = #expect(throws: MediaError.self) { try MediaFile(item: PlaybackItem(url: server.url("movie.mp4"))) }
        #expect(error?.description.contains("127.0.0.1:\(server.port)/movie.mp4") == true, "\(String(describing: error))")
        // The redirect was not followed: one request, to the server itself.
        #expect(server.requests.count == 1 && server.requests.first?.hasPrefix("GET /movie.mp4") == true, "\(server.requests)")
    }

    @Test func anHLSPlaylistOverHTTPOpensOnlyHTTPSegments() throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.clip.path)))
        let playlist = { (segment: String) in Array("""
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-TARGETDURATION:10
            #EXTINF:4.0,
            \(segment)
            #EXT-X-ENDLIST

            """.utf8) }
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let segment = try fixtures.ffmpeg(["-i", Self.clip.path, "-c", "copy", "-f", "mpegts"], output: "segment0.ts")
        let server = try LoopbackHTTPServer(routes: [
            "local.m3u8": .bytes(playlist("file://\(segment)")),
            "web.m3u8": .bytes(playlist("segment0.ts")),
            "segment0.ts": .bytes([UInt8](try Data(contentsOf: URL(fileURLWithPath: segment)))),
            "clip.mp4": .bytes(bytes),
        ])
        defer { server.stop() }
        #expect(throws: MediaError.self) { try MediaFile(item: PlaybackItem(url: server.url("local.m3u8"))) }
        #expect(try MediaFile(item: PlaybackItem(url: server.url("web.m3u8"))).info.video != nil)
        #expect(server.requests.contains("GET /segment0.ts") || server.requests.contains { $0.hasPrefix("GET /segment0.ts") })
    }

    @Test func anHTTPItemThatIsNotThereIsAClearError() throws {
        let server = try LoopbackHTTPServer(routes: ["gone.mp4": .status(404)])
        defer { server.stop() }
        let error = #expect(throws: MediaError.self) { try HeadlessPlayer(item: PlaybackItem(url: server.url("gone.mp4"))) }
        #expect(error?.description.contains("gone.mp4") == true, "\(String(describing: error))")
        #expect(error?.description.contains("404") == true || error?.description.contains("Not Found") == true,
                "\(String(describing: error))")
    }

    @Test func aFileItemOpensOnlyLocalFiles() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let witness = try LoopbackConnectionWitness()
        let playlist = try fixtures.write("movie.m3u8", Array("""
            #EXTM3U
            #EXT-X-TARGETDURATION:10
            #EXTINF:10.0,
            http://127.0.0.1:\(witness.port)/segment0.ts
            #EXT-X-ENDLIST

            """.utf8))
        let error = #expect(throws: MediaError.self) { try HeadlessPlayer(item: PlaybackItem(file: playlist)) }
        #expect(error?.description.contains("a playlist") == true, "\(String(describing: error))")
        #expect(!witness.connectionAttempted)
        #expect(try HeadlessPlayer(item: PlaybackItem(file: Self.clip.path)).itemIdentifier == Self.clip.name)
    }
}
