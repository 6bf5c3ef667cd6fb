import Synchronization
import Testing
@testable import TandemMedia
import TandemClock
import TandemPlayback
import TandemTestKit

/// Readiness with a sound output: a pulling output renders its sound ahead of the instant it
/// plays, so a position (the first one, a seek's, a prepared item's) counts as ready to play only
/// once its sound is decoded that far ahead as well as its first pictures. Decoding is slowed so
/// that readiness is reached frame by frame and what was decoded at that moment can be read.
@Suite(.serialized) struct SoundReadinessIOTests {
    static let ms: Int64 = 1_000_000

    /// A sound output whose server cannot be reached: its decoded sound is still kept for it.
    static func options(latency: TimeSpan) -> HeadlessPlayer.Options {
        var options = HeadlessPlayer.Options()
        options.audioOutput = .pulse
        options.audioServer = "unix:/nonexistent/tandem-sound-readiness/native"
        options.audioNotice = { _ in }
        options.audioLatency = latency
        options.decodeThrottle = 30
        return options
    }

    /// The sound decoded from the newest position on, and the prepared item's.
    static func decodedSound(_ player: HeadlessPlayer) -> (current: Int64, prepared: Int64?) {
        let engine = player.engine
        return engine.lock.withLock {
            let current = engine.audio.filter { $0.generation == engine.decodingGeneration }
                .reduce(Int64(0)) { $0 + $1.item.duration }
            return (current, engine.prepared?.audioBuffered.nanoseconds)
        }
    }

    @Test func aPositionIsReadyOnceItsSoundIsDecodedTwiceTheOutputsLatencyAhead() throws {
        // 800 ms of sound wanted: well past what is interleaved with the 4 frames that make the
        // pictures ready.
        let player = try HeadlessPlayer(item: PlaybackItem(file: SampleClip.h264.path),
                                        options: Self.options(latency: .milliseconds(400)))
        defer { player.close() }
        #expect(player.engine.lock.withLock { player.engine.limits.soundAhead } == .milliseconds(800))

        #expect(player.waitUntilReady(timeout: 20))
        #expect(Self.decodedSound(player).current >= 800 * Self.ms)

        player.seek(to: 2_000 * Self.ms)
        #expect(player.waitUntilReady(timeout: 20))
        #expect(Self.decodedSound(player).current >= 800 * Self.ms)

        try player.prepare(PlaybackItem(file: SampleClip.h264BFrames.path), at: SampleClip.h264BFrames.time(ofFrame: 30))
        #expect(player.waitUntilReady(preparedItem: true, timeout: 20))
        #expect((Self.decodedSound(player).prepared ?? 0) >= 800 * Self.ms)
    }

    @Test func withoutASoundOutputThePicturesAloneMakeAPositionReady() throws {
        var options = Self.options(latency: .milliseconds(400))
        options.audioOutput = .none
        let player = try HeadlessPlayer(item: PlaybackItem(file: SampleClip.h264.path), options: options)
        defer { player.close() }
        #expect(player.engine.lock.withLock { player.engine.limits.soundAhead } == .zero)
        #expect(player.waitUntilReady(timeout: 20))
        // Four frames of pictures, and the sound interleaved with them: well short of 800 ms.
        #expect(Self.decodedSound(player).current < 800 * Self.ms)
    }
}

/// Readiness with a sound output on a clip made with the ffmpeg command line.
@Suite struct SoundReadinessProcessTests {
    static let ms = SoundReadinessIOTests.ms

    @Test func soundThatEndedBeforeThePicturesIsNotWaitedFor() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        // Ten seconds of pictures, one of sound.
        let clip = try fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-f", "lavfi", "-i",
                                        "sine=frequency=440:sample_rate=48000:duration=1", "-t", "10",
                                        "-c:v", "libx264", "-g", "25", "-c:a", "aac"], output: "short-sound.mkv")
        var options = SoundReadinessIOTests.options(latency: .milliseconds(400))
        options.decodeThrottle = 1
        let player = try HeadlessPlayer(item: PlaybackItem(file: clip), options: options)
        defer { player.close() }
        player.seek(to: 3_000 * Self.ms)
        #expect(player.waitUntilReady(timeout: 20))
        #expect(SoundReadinessIOTests.decodedSound(player).current == 0)
        let engine = player.engine
        #expect(engine.lock.withLock { engine.video.count } >= engine.limits.videoFrames * engine.limits.hardFactor)
    }
}
