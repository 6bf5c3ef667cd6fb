import Foundation
import Synchronization
import TandemTestKit
import TandemMpv

/// What the mpv tests share: a clip long enough to watch sync settle, and headless mpv options.
enum MpvFixture {
    private static let clip = Mutex<String?>(nil)

    /// A 20 s clip (30 frames/s, H.264 with a keyframe every second, AAC), made once per run.
    static func longClip() throws -> String {
        try clip.withLock { clip in
            if let clip, FileManager.default.fileExists(atPath: clip) { return clip }
            let fixtures = try MediaFixtures()
            let path = try fixtures.ffmpeg([
                "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
                "-t", "20", "-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-pix_fmt", "yuv420p", "-c:a", "aac",
            ], output: "long-20s.mp4")
            clip = path
            return path
        }
    }

    private static let other = Mutex<String?>(nil)

    /// Another clip, unlike the long one (10 s, 25 frames/s, a different picture and tone), to
    /// replace it with; made once per run.
    static func otherClip() throws -> String {
        try other.withLock { other in
            if let other, FileManager.default.fileExists(atPath: other) { return other }
            let fixtures = try MediaFixtures()
            let path = try fixtures.ffmpeg([
                "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-f", "lavfi", "-i", "sine=frequency=880:sample_rate=48000",
                "-t", "10", "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-pix_fmt", "yuv420p", "-c:a", "aac",
            ], output: "other-10s.mp4")
            other = path
            return path
        }
    }

    /// Headless mpv: no window, no sound device.
    static func headless(ipcPath: String? = nil) -> MpvPlayer.Options {
        var options = MpvPlayer.Options()
        options.extraArguments = ["--vo=null", "--ao=null"]
        options.ipcPath = ipcPath
        return options
    }

    /// A fresh socket path under the temporary directory.
    static func socketPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("tandem-test-\(UUID().uuidString.prefix(8)).sock").path
    }
}
