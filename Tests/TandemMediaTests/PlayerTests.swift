import Foundation
import Synchronization
import Testing
import TandemMedia
import TandemTestKit
import TandemClock
import TandemMediaTypes

/// The headless player on the sample clips: frames presented at the instants the timeline gives,
/// through pauses, resumes, rate changes and seeks.
///
/// Instants are compared exactly where the timeline defines them (`scheduled`); how late the
/// presentation thread woke (`presented - scheduled`) is only bounded loosely, as this machine is
/// shared, and measured properly by `tandem play`'s report and the benchmarks.
@Suite(.serialized) struct PlayerIOTests {
    /// Every presentation, recorded with the frame's number read from its pixels.
    final class Recorder: VideoSink {
        struct Entry {
            let pts: Int64
            let number: Int
            let presentation: Presentation
        }
        let entries = Mutex<[Entry]>([])
        func present(_ frame: VideoFrame, _ presentation: Presentation) {
            let number = (try? FrameNumber.read(frame)) ?? -1
            entries.withLock { $0.append(Entry(pts: frame.presentationTime, number: number, presentation: presentation)) }
        }
        var all: [Entry] { entries.withLock { $0 } }
    }

    static let ms: Int64 = 1_000_000
    /// A generous bound on wake-up lateness, for a machine that may be busy.
    static let lateBound: Int64 = 30 * ms

    @Test func presentsEveryFrameAtItsInstant() throws {
        let clip = SampleClip.h264
        let recorder = Recorder()
        let start = HostInstant.now().nanoseconds + 150 * Self.ms
        let timeline = PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: start))
        let player = try HeadlessPlayer(url: clip.path, videoSinks: [recorder], timeline: timeline)
        #expect(player.waitUntilEnded(timeout: 15))
        let entries = recorder.all
        let statistics = player.statistics
        #expect(entries.count + statistics.droppedLateFrames == clip.frameCount)
        #expect(statistics.droppedLateFrames <= 2)
        for entry in entries {
            #expect(entry.presentation.scheduled == timeline.localTime(forMediaTime: entry.pts))
            #expect(entry.presentation.presented >= entry.presentation.scheduled, "presented early")
            #expect(entry.number == clip.frame(at: entry.pts))
        }
        let lateness = entries.map(\.presentation.lateness).sorted()
        #expect(lateness[lateness.count / 2] < Self.lateBound)
    }

    @Test func pauseResumeAndRateChangeFollowTheTimeline() throws {
        let clip = SampleClip.h264BFrames
        let recorder = Recorder()
        let t0 = HostInstant.now().nanoseconds + 150 * Self.ms
        let playing = PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: t0))
        let player = try HeadlessPlayer(url: clip.path, videoSinks: [recorder], timeline: playing)
        // Scheduled ahead, as a coordinator does: pause at t0 + 0.5 s, resume at double speed
        // 0.4 s later.
        let pauseAt = t0 + 500 * Self.ms
        let resumeAt = pauseAt + 400 * Self.ms
        try player.setTimeline(.paused(at: .init(nanoseconds: playing.mediaTime(atLocalTime: pauseAt)), from: .init(nanoseconds: pauseAt)))
        Thread.sleep(forTimeInterval: 0.2)
        #expect(player.timeline.rate == 0)
        let fast = PresentationTimeline(rate: 2, anchorItemTime: .init(nanoseconds: 500 * Self.ms), anchorHostTime: .init(nanoseconds: resumeAt))
        // Wait until the pause is in force before scheduling the resume.
        Thread.sleep(forTimeInterval: max(0, Double(pauseAt - HostInstant.now().nanoseconds) / 1e9 + 0.05))
        try player.setTimeline(fast)
        #expect(player.waitUntilEnded(timeout: 15))

        let entries = recorder.all.filter { !$0.presentation.isStill }
        #expect(!entries.isEmpty)
        for entry in entries {
            let expected = entry.pts < 500 * Self.ms
                ? playing.localTime(forMediaTime: entry.pts)!
                : max(fast.localTime(forMediaTime: entry.pts)!, resumeAt)
            #expect(entry.presentation.scheduled == expected, "frame at \(entry.pts)")
            // Nothing is shown while paused.
            #expect(entry.presentation.presented < pauseAt || entry.presentation.presented >= resumeAt)
            #expect(entry.number == clip.frame(at: entry.pts))
        }
        // After the resume, frames come twice as fast: 30 frames/s of media in 1/60 s steps.
        let after = entries.filter { $0.presentation.scheduled > resumeAt }.map(\.presentation.scheduled)
        #expect(after.count > 50)
        for (earlier, later) in zip(after, after.dropFirst()) {
            #expect(abs((later - earlier) - 16_666_667) <= 1)
        }
        // Every frame was shown once: on schedule, or as the still of the pause (the frame that
        // starts exactly at the paused position), or dropped late.
        let statistics = player.statistics
        #expect(statistics.presentedFrames + statistics.stillFrames + statistics.droppedLateFrames == clip.frameCount)
        #expect(statistics.stillFrames <= 1)
    }

    @Test func seekWhilePlayingLandsOnTheTargetFrameAtItsInstant() throws {
        let clip = SampleClip.vp9
        let recorder = Recorder()
        let t0 = HostInstant.now().nanoseconds + 100 * Self.ms
        let player = try HeadlessPlayer(url: clip.path, videoSinks: [recorder],
                                        timeline: PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: t0)))
        Thread.sleep(forTimeInterval: 0.4)
        let seekAt = HostInstant.now().nanoseconds + 100 * Self.ms
        let target = MediaTime.nanoseconds(seconds: 3.0)
        try player.seek(to: target, at: seekAt)
        #expect(player.waitUntilEnded(timeout: 15))
        let entries = recorder.all
        let afterSeek = entries.filter { $0.presentation.scheduled >= seekAt }
        let first = try #require(afterSeek.first)
        #expect(first.number == clip.frame(at: target))
        #expect(first.presentation.scheduled == seekAt)
        // Nothing from before the target is shown after the seek.
        #expect(afterSeek.allSatisfy { $0.pts + 42 * Self.ms > target })
        // The frames before the seek were from the start of the clip.
        #expect(entries.filter { $0.presentation.scheduled < seekAt }.allSatisfy { $0.pts < MediaTime.nanoseconds(seconds: 1) })
        #expect(player.statistics.seeks == 1)
    }

    @Test func pausedPlayerShowsTheStillAtTheSeekTarget() throws {
        let clip = SampleClip.mpeg4
        let recorder = Recorder()
        let player = try HeadlessPlayer(url: clip.path, videoSinks: [recorder])
        player.seek(to: MediaTime.nanoseconds(seconds: 2.5))
        let deadline = Date().addingTimeInterval(10)
        while recorder.all.filter({ $0.number == 62 }).isEmpty && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        let stills = recorder.all.filter(\.presentation.isStill)
        #expect(stills.map(\.number).contains(62))
        #expect(recorder.all.allSatisfy { $0.presentation.isStill })
        #expect(player.statistics.presentedFrames == 0)
        #expect(player.mediaTime() == MediaTime.nanoseconds(seconds: 2.5))
    }

    @Test(arguments: [0.25, 4.0])
    func extremeRatesKeepTheSchedule(rate: Double) throws {
        let clip = SampleClip.h264
        let recorder = Recorder()
        let audio = NullAudioSink()
        let start = MediaTime.nanoseconds(seconds: rate < 1 ? 3.5 : 0)
        let timeline = PresentationTimeline(rate: rate, anchorItemTime: .init(nanoseconds: start), anchorHostTime: .init(nanoseconds: HostInstant.now().nanoseconds + 100 * Self.ms))
        let player = try HeadlessPlayer(url: clip.path, videoSinks: [recorder], audioSinks: [audio], timeline: timeline)
        #expect(player.waitUntilEnded(timeout: 15))
        let entries = recorder.all
        #expect(entries.count + player.statistics.droppedLateFrames == clip.frameCount - clip.frame(at: start))
        for entry in entries {
            #expect(entry.presentation.scheduled == timeline.localTime(forMediaTime: max(entry.pts, start)) ?? -1)
        }
        // The audio kept the same pace: all of it, from the start position on, was consumed or
        // dropped late, as the frames are counted above (a loaded machine drops chunks whose end
        // has passed: 0.45 s of them once in CI at 4x). Dropped chunks count at the consumed
        // ones' mean length.
        let meanChunk = audio.consumedChunks > 0 ? Double(audio.consumedFrames) / Double(audio.consumedChunks) : 0
        let accounted = Double(audio.consumedFrames) + Double(player.statistics.droppedAudioChunks) * meanChunk
        let seconds = accounted / Double(AudioChunk.sampleRate)
        #expect(abs(seconds - (4 - MediaTime.seconds(start))) < 0.15, "consumed \(audio.consumedChunks) chunks, dropped \(player.statistics.droppedAudioChunks)")
        #expect(audio.consumedChunks > player.statistics.droppedAudioChunks)
    }

    @Test func rejectsRatesOutsideTheSupportedRange() throws {
        let player = try HeadlessPlayer(url: SampleClip.h264.path)
        #expect(throws: MediaError.self) { try player.setRate(8) }
        #expect(throws: MediaError.self) { try player.play(rate: 0.1) }
        #expect(throws: MediaError.self) { try player.play(rate: 0) }
        #expect(player.timeline.rate == 0)
    }
}
