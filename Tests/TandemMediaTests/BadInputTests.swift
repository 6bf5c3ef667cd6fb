import Foundation
import Testing
import TandemMedia
import TandemTestKit
import TandemClock
import TandemMediaTypes

/// Bad input gets a clear error or plays what can be played: never a crash, never a hang.
@Suite struct BadInputIOTests {
    @Test func missingFileIsAClearError() {
        let error = #expect(throws: MediaError.self) { try MediaFile(url: "/nonexistent/movie.mp4") }
        #expect(error?.description.contains("/nonexistent/movie.mp4") == true)
        #expect(error?.description.contains("No such file") == true)
    }

    @Test func fileThatIsNotMediaIsAClearError() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let text = try fixtures.write("notes.mp4", Array(String(repeating: "just some text, not a movie\n", count: 200).utf8))
        let error = #expect(throws: MediaError.self) { try MediaFile(url: text) }
        #expect(error?.description.contains("not a media file") == true)
        let empty = try fixtures.write("empty.webm", [])
        #expect(throws: MediaError.self) { try MediaFile(url: empty) }
        let noise = try fixtures.write("noise.avi", (0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ $0 >> 3) })
        #expect(throws: MediaError.self) { try HeadlessPlayer(url: noise) }
    }

    @Test func truncatedMP4WithoutItsIndexIsAClearError() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        // ffmpeg writes the MP4 index (moov) at the end: cut it off and nothing is playable.
        let cut = try fixtures.truncated(SampleClip.h264.path, keeping: 0.5, as: "cut.mp4")
        let error = #expect(throws: MediaError.self) { try MediaFile(url: cut) }
        #expect(error?.description.contains("cut.mp4") == true)
    }

    @Test(arguments: [SampleClip.vp9, SampleClip.mpeg4])
    func truncatedStreamPlaysWhatIsThere(clip: SampleClip) throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let cut = try fixtures.truncated(clip.path, keeping: 0.6, as: "cut-" + clip.name)
        let decoder = try MediaDecoder(file: MediaFile(url: cut))
        var numbers: [Int] = []
        while let decoded = try decoder.next() {
            if case .video(let frame) = decoded { numbers.append(try FrameNumber.read(frame)) }
        }
        // The first part decodes, in order, and decoding ends by itself.
        #expect(numbers.count > clip.frameCount / 3)
        #expect(numbers.count < clip.frameCount)
        #expect(Array(numbers.prefix(10)) == Array(0..<10))

        // The player ends too, on time, with what it had.
        let counter = CountingSink()
        let player = try HeadlessPlayer(url: cut, videoSinks: [counter],
                                        timeline: PresentationTimeline(rate: 4, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: HostInstant.now().nanoseconds)))
        #expect(player.waitUntilEnded(timeout: 10))
        #expect(counter.counts.frames + player.statistics.droppedLateFrames > clip.frameCount / 3)
    }

    @Test(arguments: [SampleClip.h264, SampleClip.vp9, SampleClip.mpeg4])
    func corruptPacketsInTheMiddleAreSkipped(clip: SampleClip) throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let damaged = try fixtures.corrupted(clip.path, from: 0.3, to: 0.6, count: 2048, as: "damaged-" + clip.name)
        let decoder = try MediaDecoder(file: MediaFile(url: damaged))
        var frames = 0
        var last: Int64 = 0
        while let decoded = try decoder.next() {
            if case .video(let frame) = decoded {
                frames += 1
                last = frame.presentationTime
            }
        }
        // Decoding goes on past the damage to (near) the end of the clip.
        #expect(frames > clip.frameCount / 2)
        #expect(last > MediaTime.nanoseconds(seconds: 3))
    }

    @Test func fileWithoutVideoPlaysItsAudio() throws {
        let clip = SampleClip.audioOnly
        let audio = NullAudioSink()
        let counter = CountingSink()
        // A start 200 ms ahead: anchored at "now", a loaded machine made the first chunks late,
        // and late audio is dropped (2.16 s of 3 played in one fresh-clone run).
        let player = try HeadlessPlayer(url: clip.path, videoSinks: [counter], audioSinks: [audio],
                                        timeline: PresentationTimeline(rate: 4, anchorMediaTime: 0,
                                                                       anchorLocalTime: HostInstant.now().nanoseconds + 200_000_000))
        #expect(player.waitUntilEnded(timeout: 10))
        #expect(counter.counts.frames == 0)
        #expect(abs(Double(audio.consumedFrames) / Double(AudioChunk.sampleRate) - 3) < 0.1)
        #expect(audio.peakLevel > 1000)

        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let error = #expect(throws: MediaError.self) {
            try SnapshotWriter.write(url: clip.path, at: 0, to: fixtures.path("none.png"))
        }
        #expect(error?.description.contains("no video stream") == true)
    }
}
