import Foundation
import Testing
import TandemMedia
import TandemTestKit
import TandemHarness

/// Memory stays flat however long the file: the queues are bounded, and decoding frees what it
/// has passed on.
@Suite(.serialized) struct MemoryProcessTests {
    /// Two minutes at 25 frames/s: 3000 frames, far more than any queue holds.
    static func longClip(_ fixtures: MediaFixtures) throws -> String {
        try fixtures.ffmpeg([
            "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-f", "lavfi", "-i", "sine=frequency=440",
            "-t", "120", "-c:v", "libx264", "-preset", "ultrafast", "-g", "50", "-c:a", "aac", "-b:a", "32k",
        ], output: "long.mp4")
    }

    @Test func decodingALongFileKeepsMemoryFlat() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let decoder = try MediaDecoder(file: MediaFile(url: try Self.longClip(fixtures)))
        var frames = 0
        var early = 0
        var peak = 0
        while let decoded = try decoder.next() {
            guard case .video = decoded else { continue }
            frames += 1
            if frames == 300 { early = ResidentMemory.bytes() }
            if frames > 300 && frames % 100 == 0 { peak = max(peak, ResidentMemory.bytes()) }
        }
        #expect(frames == 3000)
        // Ten times as many frames after the first measurement, and memory has not grown with them
        // (a leaked 320x240 frame is 115 kB: 2700 of them would be 300 MB).
        #expect(peak - early < 24 << 20, "resident memory grew by \((peak - early) >> 20) MB")
    }

    @Test func pausedPlayerStopsDecodingAtTheQueueLimit() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        var options = HeadlessPlayer.Options()
        options.videoQueueFrames = 8
        let counter = CountingSink()
        // Paused: nothing is consumed, so the decoder must stop when its queues are full.
        let player = try HeadlessPlayer(url: try Self.longClip(fixtures), options: options, videoSinks: [counter])
        Thread.sleep(forTimeInterval: 1.0)
        let before = ResidentMemory.bytes()
        Thread.sleep(forTimeInterval: 1.0)
        let after = ResidentMemory.bytes()
        #expect(after - before < 8 << 20, "memory grew by \((after - before) >> 20) MB while paused")
        // Then play at 4x for a while: the queues drain and refill without growing.
        try player.play(rate: 4)
        Thread.sleep(forTimeInterval: 2.0)
        let playing = ResidentMemory.bytes()
        #expect(playing - before < 24 << 20)
        #expect(counter.counts.frames > 100)
    }
}
