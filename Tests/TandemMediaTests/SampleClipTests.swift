import Testing
import TandemMedia
import TandemTestKit
import TandemClock

/// Decoding the sample clips: exact frame counts, first and last timestamps, and frames in order
/// (each frame's own number, read from its pixels, matches its timestamp).
@Suite struct SampleClipIOTests {
    @Test(arguments: SampleClip.videoClips)
    func decodesEveryFrameWithItsTimestamp(clip: SampleClip) throws {
        let decoder = try MediaDecoder(file: MediaFile(url: clip.path), decodeVideo: true, decodeAudio: false)
        var frames: [VideoFrame] = []
        while let decoded = try decoder.next() {
            if case .video(let frame) = decoded { frames.append(frame) }
        }
        #expect(frames.count == clip.frameCount)
        #expect(frames.first?.presentationTime == clip.firstFrameTime)
        // Within the rounding of the container's time base (WebM counts whole milliseconds).
        let last = try #require(frames.last).presentationTime
        #expect(abs(last - clip.time(ofFrame: clip.frameCount - 1)) < 1_000_000)
        #expect(decoder.corruptPackets == 0)
        for (index, frame) in frames.enumerated() {
            #expect(try FrameNumber.read(frame) == index, "frame \(index) of \(clip) shows another number")
            #expect(abs(frame.presentationTime - clip.time(ofFrame: index)) <= 1_000_000)
            #expect(frame.duration > 0)
        }
    }

    @Test(arguments: SampleClip.videoClips + [.audioOnly])
    func decodesAudioIntoTheFixedFormat(clip: SampleClip) throws {
        let decoder = try MediaDecoder(file: MediaFile(url: clip.path), decodeVideo: false, decodeAudio: true)
        var samples = 0
        var peak: Int16 = 0
        var previousEnd: Int64?
        while let decoded = try decoder.next() {
            guard case .audio(let chunk) = decoded else {
                Issue.record("video decoded although only audio was asked for")
                continue
            }
            samples += chunk.frameCount
            peak = max(peak, chunk.samples.map { $0 == .min ? .max : abs($0) }.max() ?? 0)
            if let previousEnd {
                // Chunks follow each other without gaps or overlaps (within one 48 kHz sample and
                // the codec's rounding of timestamps).
                #expect(abs(chunk.presentationTime - previousEnd) < 2_000_000)
            }
            previousEnd = chunk.endTime
        }
        let seconds = Double(samples) / Double(AudioChunk.sampleRate)
        let expected = clip === SampleClip.audioOnly ? 3.0 : 4.0
        #expect(abs(seconds - expected) < 0.1, "decoded \(seconds) s of sound")
        // A sine tone, not silence.
        #expect(peak > 1000)
    }

    @Test func probesContainerAndStreams() throws {
        let info = try MediaFile(url: SampleClip.h264BFrames.path).info
        #expect(info.container.contains("mp4"))
        #expect(abs((info.duration ?? 0) - 4) < 0.05)
        let video = try #require(info.video)
        #expect(video.codec == "h264")
        #expect(video.width == 320 && video.height == 240)
        #expect(abs((video.frameRate ?? 0) - 30) < 0.001)
        #expect(video.frameCount == 120)
        let audio = try #require(info.audio)
        #expect(audio.codec == "aac")
        #expect(audio.sampleRate == 48_000)

        let audioOnly = try MediaFile(url: SampleClip.audioOnly.path).info
        #expect(audioOnly.video == nil)
        #expect(audioOnly.audio?.codec == "aac")
    }
}

extension SampleClip {
    static func === (lhs: SampleClip, rhs: SampleClip) -> Bool { lhs.name == rhs.name }
}
