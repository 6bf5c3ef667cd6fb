import Foundation
import Synchronization
import Testing
import TandemClock
import TandemMedia
import TandemMpv
import TandemPlayerSupport
@testable import TandemPlayback

/// mpv pre-rolls for real: a seek in anticipation of playback (the coordinator's, ahead of a
/// play the group's pre-roll gate holds) completes only once a real headless mpv is paused on the
/// frame the play begins from, and the play that follows starts mpv from that frame, on time,
/// with no seek of its own. Before, mpv completed the seek at once without seeking (so the gate
/// heard "pre-rolled" from a player that was not) and started from scratch at the play.
@Suite(.serialized, .timeLimit(.minutes(1))) struct MpvPrerollTests {
    /// One frame of the long clip and a little (ns): an exact seek lands on the first frame at or
    /// after its target.
    static let frame: Int64 = 34_000_000

    /// Issues `command` to `mpv` as its coordinator would and returns once mpv completes it.
    static func issue(_ command: PlaybackCommand, to mpv: MpvPlayer) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            mpv.playbackCoordinator(mpv.playbackCoordinator, didIssue: command) { done.resume() }
        }
    }

    @Test func thePrerollCompletesOnceMpvHasLandedAndThePlayAfterItSeeksNoMore() async throws {
        let clip = try MpvFixture.longClip()
        let mpv = try await MpvPlayer.launch(file: clip, options: MpvFixture.headless(ipcPath: MpvFixture.socketPath()))
        do throws(any Error) {
            let other = try MpvConnection(path: mpv.ipcPath)
            defer { other.close() }
            // Every seek mpv begins from now on, as mpv announces it to every client, and every
            // unpause, in order.
            let seen = Mutex<[String]>([])
            let events = other.events
            try await other.observe("pause")
            let watcher = Task {
                for await event in events {
                    if event.name == "seek" { seen.withLock { $0.append("seek") } }
                    if event.name == "property-change", event.propertyName == "pause", event.propertyValue.bool == false {
                        seen.withLock { $0.append("unpause") }
                    }
                }
            }
            defer { watcher.cancel() }
            let item = mpv.currentItemIdentifier
            let target: Int64 = 7_300_000_000
            let now = MonotonicClock.now()
            await Self.issue(.seek(SeekCommand(expectedCurrentItemIdentifier: item, originator: nil, itemTime: ItemTime(nanoseconds: target),
                                               shouldBufferInAnticipationOfPlayback: true, anticipatedPlaybackRate: 1,
                                               completionDueDate: HostInstant(nanoseconds: now + 1_000_000_000), version: 1)), to: mpv)

            // Completed: mpv is still, its seek finished, on the first frame at or after the target.
            #expect(try await other.get("seeking").bool == false)
            #expect(try await other.get("pause").bool == true)
            let landed = Int64(((try #require(try await other.get("time-pos").double)) * 1e9).rounded())
            #expect(landed >= target - 5_000_000 && landed < target + Self.frame, "landed at \(landed) ns, for \(target)")

            // The play from the pre-rolled position, half a second from now: mpv starts from the
            // frame it is on, at the play's instant.
            let host = MonotonicClock.now() + 500_000_000
            let timeline = SharedTimeline(item: item, rate: 1, anchorMediaTime: ItemTime(nanoseconds: target), anchorSessionTime: .zero, version: 1)
            await Self.issue(.play(PlayCommand(expectedCurrentItemIdentifier: item, originator: nil, rate: 1, itemTime: ItemTime(nanoseconds: target),
                                               hostTime: HostInstant(nanoseconds: host), completionDueDate: HostInstant(nanoseconds: host + 2_000_000_000),
                                               version: 1, timeline: timeline, issuedAt: .zero)), to: mpv)
            try await Task.sleep(for: .nanoseconds(host + 400_000_000 - MonotonicClock.now()))
            #expect(try await other.get("pause").bool == false)
            let reply = try await other.command(["get_property", "audio-pts"])
            let playing = Int64((try #require(reply.value.double) * 1e9).rounded())
            let error = playing - (target + (reply.midpoint - host))
            // As a start with a seek of its own is (`MpvCoordinationTests.tolerance`).
            #expect(abs(error) <= 5_000_000, "mpv is \(Double(error) / 1e6) ms off the play's timeline")
            // One seek before mpv first moved: the pre-roll's (mpv announced it before the
            // landing the completion waited for); a start from scratch would have seeked again.
            // (A start that lands over 10 ms off starts afresh, seeking, after that: a few in a
            // hundred on a busy machine, whether pre-rolled or not.)
            let order = seen.withLock { $0 }
            let unpause = try #require(order.firstIndex(of: "unpause"), "mpv never moved: \(order)")
            #expect(order[..<unpause] == ["seek"], "before mpv moved: \(order)")
        } catch {
            await mpv.close()
            throw error
        }
        await mpv.close()
        #expect(!mpv.process.isRunning)
    }
}
