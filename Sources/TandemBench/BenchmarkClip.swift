#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A test-pattern clip made with the ffmpeg command line, longer than the samples so that a
/// benchmark's plays, seeks and rate changes have room: H.264 (ultrafast, a key frame a second)
/// in MP4, without sound.
public struct BenchmarkClip: Sendable {
    /// Seconds of video.
    public var seconds: Int
    /// Width and height.
    public var size: (width: Int, height: Int)
    /// Frames per second.
    public var frameRate: Int

    /// A clip of `seconds` s at `width`×`height` and `frameRate` frames/s.
    public init(seconds: Int = 20, width: Int = 640, height: Int = 360, frameRate: Int = 30) {
        self.seconds = seconds
        size = (width, height)
        self.frameRate = frameRate
    }

    /// Makes the clip at `path` with `ffmpeg` from the PATH, waiting at most `timeout` seconds.
    public func make(at path: String, timeout: Double = 60) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "ffmpeg", "-nostdin", "-v", "error", "-y",
            "-f", "lavfi", "-i", "testsrc2=size=\(size.width)x\(size.height):rate=\(frameRate):duration=\(seconds)",
            "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-g", "\(frameRate)", path,
        ]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw BenchmarkError("cannot run ffmpeg to make the benchmark clip: \(error)")
        }
        nonisolated(unsafe) var message = Data()
        let reader = DispatchGroup()
        DispatchQueue.global().async(group: reader) { message = errors.fileHandleForReading.readDataToEndOfFile() }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw BenchmarkError("ffmpeg took more than \(Int(timeout)) s to make the benchmark clip")
        }
        process.waitUntilExit()
        _ = reader.wait(timeout: .now() + 5)
        guard process.terminationStatus == 0 else {
            let text = String(decoding: message, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
            throw BenchmarkError("ffmpeg could not make the benchmark clip (status \(process.terminationStatus)): \(text)")
        }
    }
}
