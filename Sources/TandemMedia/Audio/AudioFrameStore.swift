import Synchronization
import TandemPlayerSupport

/// Decoded sound that the playout core reads, addressed by media frame (at 48 kHz) within one
/// decoding generation.
protocol AudioFrameSource {
    /// Fills `destination` with frames `start..<start + count` of `generation`, interleaved
    /// stereo, as Float in −1...1 (a sample of Int16 divided by 32768); frames not decoded are
    /// silence. Returns how many of the frames were decoded.
    func read(generation: Int, from start: Int64, count: Int, into destination: inout [Float]) -> Int
}

/// The media frame (at `AudioChunk.sampleRate`) at which media time `nanoseconds` falls, rounded.
func mediaFrame(atMediaTime nanoseconds: Nanoseconds) -> Int64 {
    let rate = Int64(AudioChunk.sampleRate)
    let (seconds, rest) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
    return seconds * rate + (rest * rate + (rest >= 0 ? 500_000_000 : -500_000_000)) / 1_000_000_000
}

/// The decoded PCM the sound output plays from: the decoder's chunks, kept by generation (or,
/// for an item decoded ahead, by its preparation until a switch gives it a generation) and
/// addressed by media frame, so that the output can ask for the frames of any instant.
///
/// The decoder adds chunks as it decodes them (ahead of their instants, within the engine's
/// queue limits); the output reads and then tells the store what it no longer needs
/// (`retain(generations:from:)`): frames more than `history` behind its position, and
/// generations that neither the schedule nor a fading sound reads. Thread-safe.
final class AudioFrameStore: AudioFrameSource, Sendable {
    /// Where a run of chunks belongs.
    enum Key: Hashable, Sendable {
        /// A decoding generation of the current item (or of an item that took over).
        case generation(Int)
        /// An item decoded ahead, by its preparation's serial.
        case prepared(Int)
    }

    private struct Run {
        var item: String
        /// Chunks in decoding order, with the media frame of each one's first sample.
        var chunks: [(start: Int64, samples: [Int16])] = []
        /// The media frame after the last chunk appended (kept when old chunks are let go).
        var end: Int64?

        /// Where a chunk stamped at media frame `stamped` goes: right after the one before it
        /// when its stamp is within `continuity` of there, else at its stamp.
        func start(stamped: Int64, continuity: Int64) -> Int64 {
            guard let end, abs(stamped - end) <= continuity else { return stamped }
            return end
        }
    }

    private struct State {
        var runs: [Key: Run] = [:]
        /// Preparations that a scheduled switch has given a generation.
        var aliases: [Int: Int] = [:]
    }

    /// How far behind the output's position frames are kept: 1 s.
    let history: Int64 = Int64(AudioChunk.sampleRate)
    /// How far a chunk's time stamp may stray from the end of the chunk before it and still be
    /// placed right after it: 2 ms. A decoder's frames are contiguous, but containers round
    /// their stamps (Matroska to the millisecond: a 1,024-sample frame stamped 21 ms is 21.33 ms
    /// in), and placing each chunk at its rounded stamp would open a gap or an overlap of up
    /// to half a millisecond at every chunk boundary. A stamp further off is a real gap (or a
    /// jump) in the stream, and is honoured; so the sound is never more than this from its stamps.
    let continuity: Int64 = Int64(AudioChunk.sampleRate) / 500
    private let state = Mutex(State())

    init() {}

    /// Adds a decoded chunk of item `item` under `key`: right after the chunk before it, unless
    /// its time stamp is more than `continuity` from there.
    func append(_ chunk: AudioChunk, key: Key, item: String) {
        let stamped = mediaFrame(atMediaTime: chunk.presentationTime)
        let frames = Int64(chunk.samples.count / AudioChunk.channelCount)
        state.withLock { state in
            if case .prepared(let serial) = key, state.runs[key] == nil {
                // A new preparation replaces the earlier ones that no switch has claimed.
                state.runs = state.runs.filter { other, _ in
                    guard case .prepared(let earlier) = other else { return true }
                    return earlier > serial || state.aliases[earlier] != nil
                }
            }
            var run = state.runs.removeValue(forKey: key) ?? Run(item: item)
            let start = run.start(stamped: stamped, continuity: continuity)
            run.chunks.append((start, chunk.samples))
            run.end = start + frames
            state.runs[key] = run
        }
    }

    /// The chunks of preparation `serial` (decoded so far and to come) belong to `generation`.
    func assign(prepared serial: Int, to generation: Int) {
        state.withLock { state in
            state.aliases = state.aliases.filter { $0.value != generation }
            state.aliases[serial] = generation
        }
    }

    /// The identifier of the item whose sound generation `generation` is, if any is stored.
    func item(generation: Int) -> String? {
        state.withLock { state in
            if let run = state.runs[.generation(generation)] { return run.item }
            for (serial, g) in state.aliases where g == generation {
                if let run = state.runs[.prepared(serial)] { return run.item }
            }
            return nil
        }
    }

    /// Frames stored in all, for the bounds' tests.
    var storedFrames: Int {
        state.withLock { state in
            state.runs.values.reduce(0) { $0 + $1.chunks.reduce(0) { $0 + $1.samples.count / AudioChunk.channelCount } }
        }
    }

    /// Keeps only what the output may still read: the runs of `generations` and of later ones
    /// (and of the preparations assigned to those, and of preparations not yet assigned), and
    /// in each, nothing that ends more than `history` before `positions[generation]`.
    func retain(generations: Set<Int>, positions: [Int: Int64]) {
        guard let newest = generations.max() else { return }
        let wanted = { (generation: Int) in generations.contains(generation) || generation > newest }
        state.withLock { state in
            let aliases = state.aliases
            state.aliases = aliases.filter { wanted($0.value) }
            state.runs = state.runs.filter { key, _ in
                switch key {
                case .generation(let g): return wanted(g)
                case .prepared(let serial): return aliases[serial].map(wanted) ?? true
                }
            }
            for (key, run) in state.runs {
                let generation: Int?
                switch key {
                case .generation(let g): generation = g
                case .prepared(let serial): generation = state.aliases[serial]
                }
                guard let generation, let position = positions[generation] else { continue }
                let limit = position - history
                let kept = run.chunks.filter { $0.start + Int64($0.samples.count / AudioChunk.channelCount) > limit }
                if kept.count != run.chunks.count { state.runs[key]?.chunks = kept }
            }
        }
    }

    func read(generation: Int, from start: Int64, count: Int, into destination: inout [Float]) -> Int {
        let channels = AudioChunk.channelCount
        if destination.count < count * channels { destination = [Float](repeating: 0, count: count * channels) }
        for index in 0..<(count * channels) { destination[index] = 0 }
        return state.withLock { state in
            var runs: [Run] = []
            if let run = state.runs[.generation(generation)] { runs.append(run) }
            for (serial, g) in state.aliases where g == generation {
                if let run = state.runs[.prepared(serial)] { runs.append(run) }
            }
            var found = 0
            let end = start + Int64(count)
            for run in runs {
                for chunk in run.chunks {
                    let frames = Int64(chunk.samples.count / channels)
                    let lower = max(start, chunk.start), upper = min(end, chunk.start + frames)
                    guard lower < upper else { continue }
                    chunk.samples.withUnsafeBufferPointer { samples in
                        for frame in lower..<upper {
                            let source = Int(frame - chunk.start) * channels
                            let target = Int(frame - start) * channels
                            for channel in 0..<channels {
                                destination[target + channel] = Float(samples[source + channel]) / 32768
                            }
                        }
                    }
                    found += Int(upper - lower)
                }
            }
            return min(found, count)
        }
    }
}
