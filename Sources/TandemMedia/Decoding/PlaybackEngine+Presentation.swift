#if canImport(Glibc)
import Glibc
#endif
import TandemClock
extension PlaybackEngine {
    /// What the presentation thread does next.
    private enum Step {
        case presentVideo(VideoFrame, Presentation)
        case consumeAudio(AudioChunk, Presentation)
        /// Sleep until the deadline (or a change); `precise` when it is a video frame's.
        case sleep(until: HostInstant?, precise: Bool)
    }

    /// The presentation thread: presents each frame at its instant, consumes audio at the
    /// timeline's pace, drops what is late, and sleeps to the next deadline in between.
    func presentationLoop() {
        lock.lock()
        defer { lock.unlock() }
        while !stopped {
            deliverStallNoticesLocked()
            // As in the decoding loop: `stop()` may have run while the notices were delivered.
            if stopped { break }
            // On the schedule's clock: `latencyOffset` ahead of the monotonic one.
            let offset = latencyOffset
            let now = scheduleTime(.now())
            schedule.advance(to: now)
            promotePreparedIfDueLocked()
            if schedule.current.timeline.rate > 0 { hasPlayed = true }
            switch nextStepLocked(now: now) {
            case .presentVideo(let frame, let scheduled):
                let presentation = scheduled.shifted(by: -offset)
                let sinks = videoSinks
                lock.unlock()
                for sink in sinks { sink.present(frame, presentation) }
                lock.lock()
            case .consumeAudio(let chunk, let scheduled):
                let presentation = scheduled.shifted(by: -offset)
                let sinks = audioSinks
                lock.unlock()
                for sink in sinks { sink.consume(chunk, presentation) }
                lock.lock()
            case .sleep(let wake, let precise):
                updateEndedLocked()
                let starvation = starvationCheckLocked(now: now)
                if !stallNotices.isEmpty && !deliveringStallNotices { continue }
                let deadline = [wake, starvation].compactMap { $0 }.min()
                let precise = precise && deadline == wake
                guard let deadline else {
                    scheduleChanged.wait()
                    continue
                }
                if !precise || deadline - now > limits.spinLead {
                    let target = deadline - limits.spinLead - offset
                    if precise && limits.wakeGuard { WakeGuard.shared.cover(deadline: (deadline - offset).nanoseconds) }
                    if scheduleChanged.wait(until: target.nanoseconds) && limits.wakeGuard {
                        WakeGuard.shared.woke(deadline: target.nanoseconds)
                    }
                } else {
                    // The last stretch is spun, not slept: a timed wait wakes tens to hundreds of
                    // microseconds late, a spin on the clock within a few. The lock is released
                    // meanwhile so the decoder and callers are never held up. Each turn yields:
                    // presentation threads of several players share a real-time priority, and a
                    // spinning one would otherwise keep its core from the others due at the same
                    // instant until it presents (eight peers on two cores: the last ones up to
                    // 0.25 ms late).
                    lock.unlock()
                    while scheduleTime(.now()) < deadline { sched_yield() }
                    lock.lock()
                }
            }
        }
    }

    /// Decides the next step at `now`, dropping what is stale or late on the way.
    private func nextStepLocked(now: HostInstant) -> Step {
        var wake = schedule.nextChange
        while let head = video.first {
            let next = video.dropFirst().first { $0.generation == head.generation }
            let end = next?.item.itemTime ?? head.item.itemEndTime
            let (due, timeline) = schedule.due(start: head.item.itemTime, end: end, generation: head.generation)
            switch due {
            case .stale:
                popVideoLocked()
                statistics.discardedFrames += 1
                continue
            case .still:
                popVideoLocked()
                statistics.stillFrames += 1
                let anchor = timeline?.anchorHostTime ?? now
                return .presentVideo(head.item, Presentation(item: item, scheduledInstant: anchor, presentedInstant: now, isStill: true))
            case .waiting:
                break
            case .at(let instant):
                if instant > now {
                    wake = min(wake ?? instant, instant)
                    break
                }
                popVideoLocked()
                let playing = hasPlayed && (timeline?.rate ?? 0) > 0
                if let endInstant = timeline?.hostTime(forItemTime: end), now >= endInstant {
                    statistics.droppedLateFrames += 1
                    if playing { noteStallLocked(stall.droppedLate(buffered: primaryBufferedLocked())) }
                    continue
                }
                statistics.presentedFrames += 1
                lastPresented = (end, head.generation)
                if playing { noteStallLocked(stall.presented(late: now - instant > nominalFrameDuration, buffered: primaryBufferedLocked())) }
                return .presentVideo(head.item, Presentation(item: item, scheduledInstant: instant, presentedInstant: now, isStill: false))
            }
            break
        }
        let videoWake = wake
        while let head = audio.first {
            let (due, timeline) = schedule.due(start: head.item.itemTime, end: head.item.itemEndTime, generation: head.generation)
            switch due {
            case .stale:
                popAudioLocked()
                continue
            case .still, .waiting:
                break
            case .at(let instant):
                if instant > now {
                    wake = min(wake ?? instant, instant)
                    break
                }
                popAudioLocked()
                // Without video, sound is what must keep its schedule.
                let primary = !decoder.hasVideo && hasPlayed && (timeline?.rate ?? 0) > 0
                if let endInstant = timeline?.hostTime(forItemTime: head.item.itemEndTime), now >= endInstant {
                    statistics.droppedAudioChunks += 1
                    if primary { noteStallLocked(stall.droppedLate(buffered: primaryBufferedLocked())) }
                    continue
                }
                statistics.consumedAudioChunks += 1
                if !decoder.hasVideo {
                    lastPresented = (head.item.itemEndTime, head.generation)
                    if primary { noteStallLocked(stall.presented(late: now - instant > nominalFrameDuration, buffered: primaryBufferedLocked())) }
                }
                return .consumeAudio(head.item, Presentation(item: item, scheduledInstant: instant, presentedInstant: now, isStill: false))
            }
            break
        }
        return .sleep(until: wake, precise: wake != nil && wake == videoWake)
    }

    private func popVideoLocked() {
        video.removeFirst()
        decodingWanted.broadcast()
    }

    private func popAudioLocked() {
        audioBuffered -= audio.removeFirst().item.length
        decodingWanted.broadcast()
    }

    /// Whether the player is starved: a playing timeline is in force (after the first play, with
    /// no discontinuous change pending), the decoder has not reached the end, and no frame of
    /// the position in force is decoded one frame duration after the next fell due. Raises the
    /// stall then; otherwise returns when to look again, if it may come to that.
    private func starvationCheckLocked(now: HostInstant) -> HostInstant? {
        let entry = schedule.current
        guard hasPlayed, !stall.isStalled, entry.timeline.rate > 0, entry.generation == schedule.newestGeneration,
              pendingSwitch == nil, endOfStreamGeneration != entry.generation else { return nil }
        let queued = decoder.hasVideo ? video.contains { $0.generation == entry.generation }
            : audio.contains { $0.generation == entry.generation }
        guard !queued else { return nil }
        var dueMedia = entry.timeline.anchorItemTime
        if let last = lastPresented, last.generation == entry.generation { dueMedia = max(dueMedia, last.mediaEnd) }
        let due = max(entry.timeline.hostTime(forItemTime: dueMedia) ?? entry.timeline.anchorHostTime, entry.timeline.anchorHostTime)
        let threshold = due + nominalFrameDuration
        guard now >= threshold else { return threshold }
        noteStallLocked(stall.starved())
        return nil
    }

    /// Playback has ended when everything of the newest generation has been decoded and
    /// presented (or dropped), and no change is pending.
    private func updateEndedLocked() {
        let isEnded = video.isEmpty && audio.isEmpty && schedule.nextChange == nil
            && endOfStreamGeneration == schedule.newestGeneration && seekRequest == nil
        if isEnded != ended {
            ended = isEnded
            progress.broadcast()
        }
    }
}

extension Presentation {
    /// The same presentation with its instants moved by `span` (from the schedule's clock to
    /// the monotonic one, by minus the latency offset).
    func shifted(by span: TimeSpan) -> Presentation {
        Presentation(item: item, scheduledInstant: scheduledInstant + span, presentedInstant: presentedInstant + span,
                     isStill: isStill)
    }
}
