import Foundation
import Testing
@testable import TandemMedia
import TandemPlayback
import TandemTestKit
import TandemClock
import TandemMediaTypes

/// The stall rule's judgement of late frames: the decoder's lateness, not the presenter's.
@Suite struct StallDetectorTests {
    @Test func lateFramesWithTheQueueFullAreNoStall() {
        var detector = StallDetector(recoveryFrames: 4)
        // A presenter late by a busy machine, with the decoder ahead: never a stall, which
        // could not end (a full queue takes no frame more, and a stall ends on one).
        for _ in 0..<10 {
            #expect(detector.droppedLate(buffered: 8) == nil)
            #expect(detector.presented(late: true, buffered: 4) == nil)
        }
        #expect(!detector.isStalled)
        // A late frame with the queue full breaks a run of late frames with it nearly empty.
        #expect(detector.presented(late: true, buffered: 1) == nil)
        #expect(detector.droppedLate(buffered: 0) == nil)
        #expect(detector.presented(late: true, buffered: 6) == nil)
        #expect(detector.presented(late: true, buffered: 3) == nil)
        #expect(detector.droppedLate(buffered: 2) == nil)
        #expect(detector.presented(late: true, buffered: 0) == .began)
    }
}

/// Stall detection: the pure rule (`StallDetector`) on made-up observations, then the real
/// player with its decoder slowed down (`Options.decodeThrottle`).
@Suite(.serialized) struct StallIOTests {
    @Test func aStallBeginsOnTheThirdLateFrameInARowAndNotBefore() {
        var detector = StallDetector(recoveryFrames: 4)
        #expect(detector.presented(late: true, buffered: 0) == nil)
        #expect(detector.droppedLate(buffered: 0) == nil)
        // An on-time frame starts the count again.
        #expect(detector.presented(late: false, buffered: 0) == nil)
        #expect(detector.presented(late: true, buffered: 0) == nil)
        #expect(detector.presented(late: true, buffered: 0) == nil)
        #expect(!detector.isStalled)
        #expect(detector.droppedLate(buffered: 0) == .began)
        #expect(detector.isStalled)
        // Once: more late frames raise nothing more.
        #expect(detector.presented(late: true, buffered: 0) == nil)
        #expect(detector.starved() == nil)
    }

    @Test func aStarvedPlayerStallsAtOnce() {
        var detector = StallDetector(recoveryFrames: 4)
        #expect(detector.starved() == .began)
        #expect(detector.starved() == nil)
    }

    @Test func aStallEndsOnlyWithEnoughDecodedAhead() {
        var detector = StallDetector(recoveryFrames: 4)
        // Nothing to end before a stall.
        #expect(detector.buffered(frames: 8, endOfStream: false) == nil)
        _ = detector.starved()
        #expect(detector.buffered(frames: 1, endOfStream: false) == nil)
        #expect(detector.buffered(frames: 3, endOfStream: false) == nil)
        #expect(detector.buffered(frames: 4, endOfStream: false) == .ended)
        #expect(!detector.isStalled)
        #expect(detector.buffered(frames: 4, endOfStream: false) == nil)
        // The late count starts from nothing after a stall ends.
        #expect(detector.presented(late: true, buffered: 0) == nil)
        #expect(detector.presented(late: true, buffered: 0) == nil)
        #expect(detector.presented(late: true, buffered: 0) == .began)
        // The end of the item ends a stall, whatever is queued.
        #expect(detector.buffered(frames: 0, endOfStream: true) == .ended)
    }

    @Test(arguments: [0.5, 0, -1, Double.nan, Double.infinity])
    func aDecodeThrottleBelowOneOrNotFiniteIsRefused(factor: Double) {
        var options = HeadlessPlayer.Options()
        options.decodeThrottle = factor
        let error = #expect(throws: MediaError.self) { try HeadlessPlayer(url: SampleClip.h264.path, options: options) }
        #expect(error?.description.contains("decodeThrottle") == true, "\(String(describing: error))")
    }

    @Test func aThrottledDecoderStillDecodesEveryFrame() throws {
        var options = HeadlessPlayer.Options()
        options.decodeAudio = false
        options.decodeThrottle = 3
        let recorder = ItemRecorder()
        let start = PresentationTimeline(rate: 1, anchorItemTime: .init(nanoseconds: 3_000_000_000), anchorHostTime: .init(nanoseconds: HostInstant.now().nanoseconds + 200_000_000))
        let player = try HeadlessPlayer(url: SampleClip.h264.path, options: options, videoSinks: [recorder], timeline: start)
        defer { player.close() }
        #expect(player.waitUntilEnded(timeout: 15))
        let entries = recorder.all.filter { !$0.presentation.isStill }
        #expect(entries.count + player.statistics.droppedLateFrames == 25)
    }

    /// A decoder far slower than the frame rate: no stall while paused before the first play;
    /// one begins soon after playing starts, and ends once paused long enough to decode ahead.
    @Test func aSlowDecoderStallsWhilePlayingAndRecoversWhilePaused() throws {
        var options = HeadlessPlayer.Options()
        options.decodeAudio = false
        options.videoQueueFrames = 4
        // A frame of the sample decodes in well under a millisecond; this makes it take tens of
        // milliseconds or more, beyond the 40 ms a frame lasts.
        options.decodeThrottle = 400
        let stalls = StallRecorder()
        let recorder = ItemRecorder()
        let player = try HeadlessPlayer(url: SampleClip.h264.path, options: options, videoSinks: [recorder])
        defer { player.close() }
        player.setStallHandler { stalls.record($0) }
        // Paused on the first frame before any play: a slow decoder is no stall.
        #expect(recorder.wait(timeout: 10) { !$0.isEmpty })
        #expect(!stalls.wait(forCount: 1, timeout: 0.5))
        #expect(!player.isStalled)

        player.play()
        #expect(stalls.wait(forCount: 1, timeout: 10))
        #expect(stalls.all == [.began])
        #expect(player.isStalled)
        #expect(player.statistics.stalls == 1)

        player.pause()
        #expect(stalls.wait(forCount: 2, timeout: 20))
        #expect(stalls.all == [.began, .ended])
        #expect(!player.isStalled)
    }

    /// A source slower than the media's bit rate (a slow download) stalls the player too.
    @Test func aSlowSourceStallsThePlayer() throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: SampleClip.h264.path)))
        // About 43 KB a second of media read at 12 KB a second, past the first 16 KiB; the
        // index at the end reads at full speed.
        let source = SlowByteSource(bytes, chunk: 1_200, delay: 0.1, slow: 16_384..<Int64(bytes.count - 8_192))
        var options = HeadlessPlayer.Options()
        options.decodeAudio = false
        let stalls = StallRecorder()
        let start = PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: HostInstant.now().nanoseconds + 100_000_000))
        let player = try HeadlessPlayer(item: PlaybackItem(bytes: source, identifier: "slow"), options: options, timeline: start)
        defer { player.close() }
        player.setStallHandler { stalls.record($0) }
        #expect(stalls.wait(forCount: 1, timeout: 15))
        #expect(stalls.all.first == .began)
        #expect(player.isStalled || stalls.all.count > 1)
    }

    @Test func aFastDecoderNeverStalls() throws {
        var options = HeadlessPlayer.Options()
        options.decodeAudio = false
        let stalls = StallRecorder()
        let start = PresentationTimeline(rate: 2, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: HostInstant.now().nanoseconds + 150_000_000))
        let player = try HeadlessPlayer(url: SampleClip.h264.path, options: options, timeline: start)
        defer { player.close() }
        player.setStallHandler { stalls.record($0) }
        #expect(player.waitUntilEnded(timeout: 15))
        // At the end no frame is due: the end of the item is no stall either.
        #expect(stalls.all.isEmpty || player.statistics.droppedLateFrames >= 3)
        #expect(player.statistics.stalls == stalls.all.filter { $0 == .began }.count)
    }
}
