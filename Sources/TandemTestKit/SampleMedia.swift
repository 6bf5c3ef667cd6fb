import Foundation
import TandemClock

/// Tandem's sample clips (in `Samples/Media/`) and what each is known to hold, as
/// `Samples/Media/make-media.sh` made them.
public struct SampleClip: Sendable, CustomStringConvertible {
    /// The file's name in `Samples/Media/`.
    public let name: String
    /// Video frames per second, or nil for audio only.
    public let frameRate: Int?
    /// The number of video frames.
    public let frameCount: Int
    /// The media time of the first frame, in nanoseconds.
    public let firstFrameTime: Int64
    /// Whether it has sound.
    public let hasAudio: Bool

    /// The clip's absolute path.
    public var path: String { SampleClip.directory + "/" + name }

    /// The media time of frame `number` (frames are evenly spaced).
    public func time(ofFrame number: Int) -> Int64 {
        firstFrameTime + Int64(number) * 1_000_000_000 / Int64(frameRate ?? 1)
    }

    /// The number of the frame that covers media time `time`. A time within 1 ms before a
    /// frame's nominal start counts as that frame, because containers round timestamps to their
    /// time base (WebM to whole milliseconds).
    public func frame(at time: Int64) -> Int {
        guard let frameRate else { return 0 }
        let number = Int((time - firstFrameTime + 1_000_000) * Int64(frameRate) / 1_000_000_000)
        return min(max(number, 0), frameCount - 1)
    }

    /// A line for people to read.
    public var description: String { name }

    /// H.264 without B-frames and AAC, in MP4: 4 s at 25 frames/s.
    public static let h264 = SampleClip(name: "h264-aac.mp4", frameRate: 25, frameCount: 100, firstFrameTime: 0, hasAudio: true)
    /// H.264 with B-frames and AAC, in MP4: 4 s at 30 frames/s.
    public static let h264BFrames = SampleClip(name: "h264-bframes.mp4", frameRate: 30, frameCount: 120, firstFrameTime: 0, hasAudio: true)
    /// VP9 and Opus in WebM: 4 s at 24 frames/s, starting 7 ms in (the Opus encoder's delay).
    public static let vp9 = SampleClip(name: "vp9-opus.webm", frameRate: 24, frameCount: 96, firstFrameTime: 7_000_000, hasAudio: true)
    /// MPEG-4 Part 2 and MP3, in AVI: 4 s at 25 frames/s.
    public static let mpeg4 = SampleClip(name: "mpeg4-mp3.avi", frameRate: 25, frameCount: 100, firstFrameTime: 0, hasAudio: true)
    /// AAC only, in M4A: 3 s.
    public static let audioOnly = SampleClip(name: "audio-only.m4a", frameRate: nil, frameCount: 0, firstFrameTime: 0, hasAudio: true)

    /// Every clip with video.
    public static let videoClips: [SampleClip] = [.h264, .h264BFrames, .vp9, .mpeg4]

    /// `Samples/Media/`, found from this source file's place in the package.
    public static let directory: String = {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()   // TandemTestKit
            .deletingLastPathComponent()   // Sources
            .deletingLastPathComponent()   // package root
            .appendingPathComponent("Samples/Media").path
    }()
}
