import Foundation
import Synchronization
import Testing
@testable import TandemMedia
import TandemTestKit
import TandemClock
import TandemMediaTypes

/// The sinks: what they write, and docs/EMBEDDING.md's embedding example as written.
@Suite struct SinkProcessTests {
    @Test func terminalPictureKeepsTheFrameShapeInsideTheTerminal() {
        // 4:3 in 100 x 31 cells: height-bound, 62 pixel rows.
        let (width, height) = TerminalRenderer.pictureSize(frameWidth: 320, frameHeight: 240, columns: 100, rows: 31)
        #expect(height == 62 && width == 82)
        // 16:9 in 80 x 40 cells: width-bound.
        let (wide, tall) = TerminalRenderer.pictureSize(frameWidth: 1920, frameHeight: 1080, columns: 80, rows: 40)
        #expect(wide == 80 && tall == 44)
        #expect(tall % 2 == 0)
    }

    @Test func terminalRenderingUsesHalfBlocksInTrueColour() {
        // Two pixels, one above the other: red over blue.
        let image = RGBImage(width: 1, height: 2, pixels: [255, 0, 0, 0, 0, 255])
        let text = TerminalRenderer.render(image, status: "status")
        #expect(text.hasPrefix("\u{1B}[H"))
        #expect(text.contains("\u{1B}[38;2;255;0;0m\u{1B}[48;2;0;0;255m▀"))
        #expect(text.hasSuffix("status"))
    }

    @Test func terminalRendererDrawsPresentedFrames() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let path = fixtures.path("screen.txt")
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        #expect(descriptor >= 0)
        let renderer = TerminalRenderer(descriptor: descriptor, size: (40, 12))
        let player = try HeadlessPlayer(url: SampleClip.h264.path, videoSinks: [renderer],
                                        timeline: PresentationTimeline(rate: 4, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: HostInstant.now().nanoseconds)))
        #expect(player.waitUntilEnded(timeout: 10))
        renderer.stop()
        close(descriptor)
        #expect(renderer.framesDrawn > 0)
        let screen = try String(contentsOfFile: path, encoding: .utf8)
        #expect(screen.contains("▀"))
    }

    @Test func presentationLogLinesAreJSONWithBothInstants() throws {
        let line = PresentationLog.line(1_500_000_000, Presentation(item: "a \"quoted\" name", scheduledInstant: .init(nanoseconds: 10), presentedInstant: .init(nanoseconds: 12), isStill: false))
        let record = try JSONDecoder().decode(PresentationRecord.self, from: Data(line.utf8))
        #expect(record == PresentationRecord(item: "a \"quoted\" name", pts: 1.5, scheduledNanoseconds: 10, presentedNanoseconds: 12, still: nil))
        let still = PresentationLog.line(0, Presentation(item: "x", scheduledInstant: .init(nanoseconds: 1), presentedInstant: .init(nanoseconds: 2), isStill: true))
        #expect(try JSONDecoder().decode(PresentationRecord.self, from: Data(still.utf8)).still == true)
    }

    @Test func aFramePresentedLateSaysWhenItWasQueued() throws {
        func record(presented: Int64, isStill: Bool = false) throws -> PresentationRecord {
            let line = PresentationLog.line(0, Presentation(item: "x", scheduledInstant: .init(nanoseconds: 10_000_000), presentedInstant: .init(nanoseconds: presented), isStill: isStill),
                                            queued: 10_500_000)
            return try JSONDecoder().decode(PresentationRecord.self, from: Data(line.utf8))
        }
        // Up to a millisecond late, the line is as it always was.
        #expect(try record(presented: 11_000_000).queuedNanoseconds == nil)
        #expect(try record(presented: 11_000_001).queuedNanoseconds == 10_500_000)
        // A still is shown when the pause says, not late.
        #expect(try record(presented: 15_000_000, isStill: true).queuedNanoseconds == nil)
    }

    @Test func aPlayersReadingsAreWrittenAndReadBackAsReadings() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let path = fixtures.path("readings.jsonl")
        let log = try PresentationLog(path: path)
        let reading = PresentationRecord(item: "movie.mp4", pts: 12.345678901, scheduledNanoseconds: 1_000_000_123,
                                         presentedNanoseconds: 1_000_400_456, reading: true)
        let paused = PresentationRecord(item: "movie.mp4", pts: 3, scheduledNanoseconds: 7, presentedNanoseconds: 7, still: true,
                                        reading: true)
        let frame = PresentationRecord(item: "movie.mp4", pts: 0.04, scheduledNanoseconds: 9, presentedNanoseconds: 10)
        log.write(reading)
        log.write(paused)
        log.write(frame)
        log.close()
        let records = try PresentationRecord.read(path: path)
        #expect(records.count == 3)
        #expect(records.first == reading)
        #expect(records.dropFirst().first == paused)
        // A presented frame is no reading: the field is left out.
        #expect(records.last == frame && records.last?.reading == nil)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.split(separator: "\n").last?.contains("reading") == false)
    }

    @Test func presentationLogCannotBeCreatedInAMissingDirectory() {
        let error = #expect(throws: MediaError.self) { try PresentationLog(path: "/nonexistent/dir/log.jsonl") }
        #expect(error?.description.contains("/nonexistent/dir/log.jsonl") == true)
    }

    static func longClip(_ fixtures: MediaFixtures) throws -> String {
        try fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-t", "40",
                             "-c:v", "libx264", "-preset", "ultrafast", "-g", "25"], output: "movie.mp4")
    }

    /// docs/EMBEDDING.md's "Embedding the player" example, as written (with a made movie).
    @Test func readmeEmbeddingExampleRuns() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let seen = Mutex(0)
        let log = try PresentationLog(path: fixtures.path("presented.jsonl"))
        let pixels = CallbackSink { frame, presentation in
            let image = try? frame.rgbImage(width: 32, height: 24)
            if image?.pixels.count == 32 * 24 * 3 { seen.withLock { $0 += 1 } }
        }
        let start = PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: HostInstant.now().nanoseconds + 100_000_000))
        let player = try HeadlessPlayer(url: try Self.longClip(fixtures), videoSinks: [log, pixels], timeline: start)

        try player.setRate(2)
        player.seek(to: 30_000_000_000)
        let pauseAt = HostInstant.now().nanoseconds + 1_000_000_000
        try player.pause(at: pauseAt)
        Thread.sleep(forTimeInterval: 2)
        // Paused where 1 s of double speed from 30 s led (less the seek's 80 ms lead).
        let pausedAt = player.mediaTime()
        #expect(player.timeline.rate == 0)
        #expect(pausedAt > 31_700_000_000 && pausedAt <= 32_000_000_000)
        player.play()
        Thread.sleep(forTimeInterval: 0.5)
        #expect(player.mediaTime() > pausedAt + 400_000_000)
        player.close()
        log.close()
        let records = try PresentationRecord.read(path: fixtures.path("presented.jsonl"))
        // Frames after the seek start at 30 s and run on without a gap through the pause.
        let afterSeek = records.filter { $0.pts >= 30 }
        #expect(afterSeek.first?.pts == 30)
        #expect(afterSeek.count > 45)
        for (earlier, later) in zip(afterSeek, afterSeek.dropFirst()) {
            #expect(abs(later.pts - earlier.pts - 0.04) < 0.001)
        }
        #expect(seen.withLock { $0 } == records.count)
    }
}
