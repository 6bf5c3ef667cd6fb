import Foundation
import Testing
@testable import TandemMedia
import TandemTestKit
import TandemClock

/// `close()` while the engine delivers a stall notice. The handler runs with the engine's lock
/// released, so `stop()` can set `stopped` and broadcast its wake-up in that window; a loop that
/// then waited without looking at `stopped` again slept for ever, and `close()` hung joining it
/// (seen once in `ItemSourceProcessTests`, an HTTP item, the decoder waiting on its condition).
@Suite(.serialized) struct EngineStopIOTests {
    @Test func closingWhileAStallNoticeIsDeliveredEndsBothThreads() throws {
        var options = HeadlessPlayer.Options()
        options.decodeAudio = false
        // Paused far ahead: both threads soon have nothing to do but wait.
        let paused = PresentationTimeline(rate: 0, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: HostInstant.now().nanoseconds))
        let player = try HeadlessPlayer(url: SampleClip.h264.path, options: options, timeline: paused)
        let engine = player.engine
        let entered = DispatchSemaphore(value: 0)
        engine.lock.withLock {
            engine.stallHandler = { _ in
                entered.signal()
                // Return only once `stop()` has set `stopped` and sent its wake-up, from another
                // thread, while this one holds no lock: the window the loops must survive.
                let deadline = HostInstant.now().nanoseconds + 5_000_000_000
                while !engine.lock.withLock({ engine.stopped }) && HostInstant.now().nanoseconds < deadline {
                    usleep(200)
                }
            }
        }
        // Once the decoder's queues are full it has nothing to do but wait for a wake-up.
        let filled = HostInstant.now().nanoseconds + 5_000_000_000
        while !engine.lock.withLock({ engine.queuesFull(videoCount: engine.video.count, audioBuffered: engine.audioBuffered,
                                                        hasVideo: engine.decoder.hasVideo, hasAudio: false) })
                && HostInstant.now().nanoseconds < filled {
            usleep(1_000)
        }
        engine.lock.withLock {
            engine.noteStallLocked(.began)
            engine.decodingWanted.broadcast()
        }
        #expect(entered.wait(timeout: .now() + 5) == .success, "the stall notice was never delivered")
        let closed = DispatchSemaphore(value: 0)
        let closer = Thread {
            player.close()
            closed.signal()
        }
        closer.start()
        #expect(closed.wait(timeout: .now() + 10) == .success, "close() did not return: a loop waits after stop()")
    }
}
