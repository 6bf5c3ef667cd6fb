import Foundation
import Testing
import TandemMedia
import TandemTestKit
import TandemClock

/// Accurate seeking: after a seek, the first frame is the one that covers the target.
@Suite struct SeekIOTests {
    static let targets: [Double] = [0, 0.013, 0.5, 1.0, 1.37, 2.0, 2.99, 3.5, 3.93]

    @Test(arguments: SampleClip.videoClips)
    func firstFrameAfterSeekCoversTheTarget(clip: SampleClip) throws {
        let decoder = try MediaDecoder(file: MediaFile(url: clip.path), decodeVideo: true, decodeAudio: true)
        // Seek back and forth in one decoder, as a player does.
        for seconds in SeekIOTests.targets + SeekIOTests.targets.reversed() {
            let target = MediaTime.nanoseconds(seconds: seconds)
            try decoder.seek(to: target)
            let frame = try #require(try firstVideoFrame(decoder), "no frame after seeking \(clip) to \(seconds) s")
            let expected = clip.frame(at: max(target, clip.firstFrameTime))
            #expect(try FrameNumber.read(frame) == expected, "\(clip) at \(seconds) s")
            #expect(frame.covers(target) || (target < clip.firstFrameTime && frame.presentationTime == clip.firstFrameTime))
        }
    }

    /// The sound after a seek starts with the chunk that covers the target, between keyframes
    /// and on one alike: a container that interleaves by keyframe (Matroska's clusters) puts the
    /// sound just before a keyframe ahead of it, where a seek to the keyframe alone would land
    /// after it.
    @Test(arguments: SampleClip.videoClips)
    func audioAfterSeekStartsAtTheTarget(clip: SampleClip) throws {
        let decoder = try MediaDecoder(file: MediaFile(url: clip.path), decodeVideo: true, decodeAudio: true)
        for seconds in [2.2, 1.0, 2.0, 3.0, 0.5] {
            let target = MediaTime.nanoseconds(seconds: seconds)
            try decoder.seek(to: target)
            var first: AudioChunk?
            while first == nil, let decoded = try decoder.next() {
                if case .audio(let chunk) = decoded { first = chunk }
            }
            let chunk = try #require(first, "no audio after seeking \(clip) to \(seconds) s")
            #expect(chunk.presentationTime <= target && chunk.endTime > target,
                    "\(clip) at \(seconds) s: the first sound is \(chunk.presentationTime)..<\(chunk.endTime) ns")
        }
    }

    @Test func snapshotWritesTheFrameThatCoversTheTime() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let clip = SampleClip.h264BFrames
        let target = MediaTime.nanoseconds(seconds: 1.51)
        let png = fixtures.path("frame.png")
        let shown = try SnapshotWriter.write(url: clip.path, at: target, to: png)
        #expect(shown == clip.time(ofFrame: 45))
        // Read the PNG back with FFmpeg: the number in the picture is the frame's.
        let decoder = try MediaDecoder(file: MediaFile(picture: png), decodeVideo: true, decodeAudio: false)
        guard case .video(let frame)? = try decoder.next() else {
            Issue.record("the PNG holds no picture")
            return
        }
        #expect(frame.width == 320 && frame.height == 240)
        #expect(try FrameNumber.read(frame) == 45)

        let ppm = fixtures.path("frame.ppm")
        try SnapshotWriter.write(url: clip.path, at: target, to: ppm)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: ppm)))
        let header = Array("P6\n320 240\n255\n".utf8)
        #expect(Array(bytes.prefix(header.count)) == header)
        #expect(bytes.count == header.count + 320 * 240 * 3)
    }

    private func firstVideoFrame(_ decoder: MediaDecoder) throws -> VideoFrame? {
        while let decoded = try decoder.next() {
            if case .video(let frame) = decoded { return frame }
        }
        return nil
    }
}
