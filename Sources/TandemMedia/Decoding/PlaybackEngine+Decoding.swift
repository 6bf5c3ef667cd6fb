extension PlaybackEngine {
    /// The decoding thread: decodes ahead into the queues, and seeks when asked.
    func decodingLoop(_ decoder: MediaDecoder) {
        lock.lock()
        defer { lock.unlock() }
        while !stopped {
            let waitingForSpace = queuesFullLocked(hasVideo: decoder.hasVideo, hasAudio: decoder.hasAudio)
            if seekRequest == nil && (endOfStreamGeneration == decodingGeneration || waitingForSpace) {
                decodingWanted.wait()
                continue
            }
            let seek = seekRequest
            seekRequest = nil
            let generation = seek?.generation ?? decodingGeneration
            lock.unlock()
            var decoded: DecodedMedia?
            var failure: MediaError?
            do throws(MediaError) {
                if let seek { try decoder.seek(to: seek.target) }
                decoded = try decoder.next()
            } catch {
                failure = error
            }
            lock.lock()
            statistics.corruptPackets = decoder.corruptPackets
            if seek != nil { statistics.seeks += 1 }
            guard generation == decodingGeneration, seekRequest == nil else { continue }
            switch decoded {
            case .video(let frame)?:
                video.append(Queued(item: frame, generation: generation))
            case .audio(let chunk)?:
                audio.append(Queued(item: chunk, generation: generation))
                audioBuffered += chunk.duration
            case nil:
                endOfStreamGeneration = generation
                if let error = failure ?? decoder.readError {
                    statistics.decodingError = error.description
                }
            }
            scheduleChanged.broadcast()
        }
    }
}
