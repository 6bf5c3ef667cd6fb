import TandemClock
import TandemMediaTypes
import TandemPlayback

extension PlaybackEngine {
    /// What the decoding thread decodes next.
    private enum Job {
        /// The current item, for the queue, in `generation` (seeking first to `seek`).
        case current(MediaDecoder, seek: ItemTime?, generation: Int)
        /// The prepared item, ahead (seeking first to `seek`).
        case prepared(MediaDecoder, seek: ItemTime?, serial: Int)
        /// Asking `follower` for the item after `current`, and opening it.
        case follow(Follower, current: String)
    }

    /// The decoding thread: decodes ahead into the queues, and seeks when asked; with the
    /// current item's queues full, decodes the prepared item ahead.
    func decodingLoop() {
        lock.lock()
        defer { lock.unlock() }
        while !stopped {
            deliverStallNoticesLocked()
            // Delivering notices lets go of the lock: `stop()` may have run meanwhile, and its
            // wake-up is gone, so waiting now would wait for ever.
            if stopped { break }
            guard let job = nextJobLocked() else {
                decodingWanted.wait()
                continue
            }
            let decoder: MediaDecoder
            let seek: ItemTime?
            switch job {
            case .current(let current, let target, _): (decoder, seek) = (current, target)
            case .prepared(let prepared, let target, _): (decoder, seek) = (prepared, target)
            case .follow(let follower, let current):
                lock.unlock()
                let following = follower(current)
                lock.lock()
                prepareFollowingLocked(following, after: current)
                continue
            }
            lock.unlock()
            let started = HostInstant.now()
            var decoded: DecodedMedia?
            var failure: MediaError?
            do throws(MediaError) {
                if let seek { try decoder.seek(to: seek.nanoseconds) }
                decoded = try decoder.next()
            } catch {
                failure = error
            }
            lock.lock()
            throttleLocked(since: started)
            switch job {
            case .current(let decoder, let seek, let generation):
                finishCurrentLocked(decoder: decoder, seeked: seek != nil, generation: generation, decoded, failure)
            case .prepared(let decoder, _, let serial):
                finishPreparedLocked(decoder: decoder, serial: serial, decoded, failure)
            case .follow:
                break
            }
        }
    }

    /// Prepares the item a follower opened after `current`, from its start, if the player still
    /// plays `current` and nothing else was prepared or switched to meanwhile. Lock held.
    private func prepareFollowingLocked(_ following: (item: PlaybackItem, decoder: MediaDecoder)?, after current: String) {
        guard let following, prepared == nil, pendingSwitch == nil, currentItem.identifier == current else { return }
        let start = ItemTime.zero + .seconds(following.decoder.file.info.startTime ?? 0)
        prepareLocked(item: following.item, decoder: following.decoder, at: max(start, .zero))
    }

    /// The current item's seek or next frame while its queues want one; otherwise the prepared
    /// item's; nil when neither needs decoding. Lock held.
    private func nextJobLocked() -> Job? {
        if let seek = seekRequest {
            seekRequest = nil
            return .current(decoder, seek: seek.target, generation: seek.generation)
        }
        if endOfStreamGeneration != decodingGeneration
            && !queuesFull(videoCount: video.count, audioBuffered: audioBuffered, hasVideo: decoder.hasVideo, hasAudio: decoder.hasAudio) {
            return .current(decoder, seek: nil, generation: decodingGeneration)
        }
        if var incoming = prepared, !incoming.endOfStream,
           !queuesFull(videoCount: incoming.video.count, audioBuffered: incoming.audioBuffered,
                       hasVideo: incoming.decoder.hasVideo, hasAudio: incoming.decoder.hasAudio) {
            let seek = incoming.needsSeek ? incoming.target : nil
            incoming.needsSeek = false
            prepared = incoming
            return .prepared(incoming.decoder, seek: seek, serial: incoming.serial)
        }
        // With the current item decoded ahead and nothing prepared, the item after it is opened
        // (once per current item), to be decoded ahead in turn.
        if let follower, prepared == nil, pendingSwitch == nil, followed != currentItem.identifier {
            followed = currentItem.identifier
            return .follow(follower, current: currentItem.identifier)
        }
        return nil
    }

    /// With a decode throttle of FACTOR, waits until the frame has taken FACTOR times as long
    /// as its decoding did (woken early only by `stop`). Lock held.
    private func throttleLocked(since started: HostInstant) {
        guard limits.decodeThrottle > 1 else { return }
        let until = started + (HostInstant.now() - started) * limits.decodeThrottle
        while !stopped && HostInstant.now() < until {
            decodingWanted.wait(until: until.nanoseconds)
        }
    }

    private func finishCurrentLocked(decoder job: MediaDecoder, seeked: Bool, generation: Int,
                                     _ decoded: DecodedMedia?, _ failure: MediaError?) {
        guard job === decoder else { return }
        statistics.corruptPackets = corruptPacketsBefore + decoder.corruptPackets
        if seeked { statistics.seeks += 1 }
        guard generation == decodingGeneration, seekRequest == nil else { return }
        appendLocked(decoded, failure: failure, readError: decoder.readError, generation: generation)
    }

    private func finishPreparedLocked(decoder job: MediaDecoder, serial: Int, _ decoded: DecodedMedia?, _ failure: MediaError?) {
        if var incoming = prepared, incoming.serial == serial {
            switch decoded {
            case .video(let frame)?:
                frame.queuedAt = HostInstant.now().nanoseconds
                incoming.video.append(frame)
            case .audio(let chunk)?:
                audioStore?.append(chunk, key: .prepared(serial), item: incoming.item.identifier)
                incoming.audio.append(chunk)
                incoming.audioBuffered += chunk.length
            case nil:
                incoming.endOfStream = true
                incoming.decodingError = (failure ?? job.readError)?.description
            }
            prepared = incoming
            progress.broadcast()
            return
        }
        // It took over while this frame was decoded: the frame is the queue's now.
        guard let promoted, promoted.serial == serial, job === decoder,
              promoted.generation == decodingGeneration, seekRequest == nil else { return }
        appendLocked(decoded, failure: failure, readError: job.readError, generation: promoted.generation)
    }

    private func appendLocked(_ decoded: DecodedMedia?, failure: MediaError?, readError: MediaError?, generation: Int) {
        switch decoded {
        case .video(let frame)?:
            frame.queuedAt = HostInstant.now().nanoseconds
            video.append(Queued(item: frame, generation: generation))
        case .audio(let chunk)?:
            audioStore?.append(chunk, key: .generation(generation), item: item)
            audio.append(Queued(item: chunk, generation: generation))
            audioBuffered += chunk.length
        case nil:
            endOfStreamGeneration = generation
            if let error = failure ?? readError {
                statistics.decodingError = error.description
            }
        }
        noteStallLocked(stall.buffered(frames: primaryBufferedLocked(), endOfStream: endOfStreamGeneration == decodingGeneration))
        scheduleChanged.broadcast()
        progress.broadcast()
    }
}
