import Synchronization
import TandemClock

/// Decoded sound that the playout core reads, addressed by media frame (at 48 kHz) within one
/// decoding generation.
protocol AudioFrameSource {
    /// Fills `destination` with frames `start..<start + count` of `generation`, interleaved
    /// stereo, as Float in −1...1 (a sample of Int16 divided by 32768); frames not decoded are
    /// silence. Returns how many of the frames were decoded.
    func read(generation: Int, from start: Int64, count: Int, into destination: inout [Float]) -> Int

    /// The media frame after the last one decoded, without a gap, from `frame` on in
    /// `generation`; nil when `frame` itself is not decoded. The output holds back a write that
    /// would read past it while the decoding is still catching up with a start.
    func decodedEnd(generation: Int, from frame: Int64) -> Int64?
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

    /// Chunks that follow one another without a gap, placed together. Containers round their
    /// stamps (Matroska to the millisecond: 1,024-sample frames at 0, 21.33, 42.67 ms are stamped
    /// 0, 21, 43), so one stamp says where a frame is only to the rounding; but a decoder's frames
    /// are contiguous, so every chunk's stamp less the frames before it in the segment is a
    /// reading of where the segment starts. The segment starts at the middle of those readings'
    /// range (the rounding's errors lie on both sides), refined over its first `refining`
    /// frames and then kept: every participant, whichever packet its decoding started at, finds
    /// the same place, and the sound has no gap or overlap at the chunks' boundaries.
    private struct Segment {
        /// The lowest and highest reading of the segment's start, in media frames.
        var lowest: Int64
        var highest: Int64
        /// Chunks in order, with the frames of the segment before each one.
        var chunks: [(offset: Int64, samples: [Int16])] = []
        /// Frames in the segment so far (kept when old chunks are let go).
        var length: Int64 = 0

        /// The media frame of the segment's first frame.
        var start: Int64 { lowest + (highest - lowest) / 2 }
        /// The media frame after its last.
        var end: Int64 { start + length }
    }

    private struct Run {
        var item: String
        /// Segments in decoding order.
        var segments: [Segment] = []

        /// Adds `samples` stamped at media frame `stamped`: to the last segment when the stamp is
        /// within `continuity` of its end, refining the segment's start while it is shorter than
        /// `refining`; otherwise as a new segment at its stamp.
        mutating func append(_ samples: [Int16], stamped: Int64, continuity: Int64, refining: Int64) {
            let frames = Int64(samples.count / AudioChunk.channelCount)
            guard var last = segments.last, abs(stamped - last.end) <= continuity else {
                segments.append(Segment(lowest: stamped, highest: stamped, chunks: [(0, samples)], length: frames))
                return
            }
            if last.length < refining {
                last.lowest = min(last.lowest, stamped - last.length)
                last.highest = max(last.highest, stamped - last.length)
            }
            last.chunks.append((last.length, samples))
            last.length += frames
            segments[segments.count - 1] = last
        }
    }

    private struct State {
        var runs: [Key: Run] = [:]
        /// Preparations that a scheduled switch has given a generation.
        var aliases: [Int: Int] = [:]
    }

    /// How far behind the output's position frames are kept: 1 s.
    let history: Int64 = Int64(AudioChunk.sampleRate)
    /// How far a chunk's stamp may stray from the end of the sound before it and still follow it
    /// (a segment's chunks): 2 ms, beyond any container's rounding. A stamp further off is a
    /// real gap (or a jump) in the stream, and is honoured.
    let continuity: Int64 = Int64(AudioChunk.sampleRate) / 500
    /// Over how much of a segment its start is refined from its chunks' stamps: 250 ms.
    let refining: Int64 = Int64(AudioChunk.sampleRate) / 4
    private let state = Mutex(State())

    init() {}

    /// Adds a decoded chunk of item `item` under `key`: right after the sound before it, unless
    /// its stamp is more than `continuity` from there (see `Segment`).
    func append(_ chunk: AudioChunk, key: Key, item: String) {
        let stamped = mediaFrame(atMediaTime: chunk.presentationTime)
        state.withLock { state in
            if case .prepared(let serial) = key, state.runs[key] == nil {
                // A new preparation replaces the earlier ones that no switch has claimed.
                state.runs = state.runs.filter { other, _ in
                    guard case .prepared(let earlier) = other else { return true }
                    return earlier > serial || state.aliases[earlier] != nil
                }
            }
            var run = state.runs.removeValue(forKey: key) ?? Run(item: item)
            run.append(chunk.samples, stamped: stamped, continuity: continuity, refining: refining)
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

    func decodedEnd(generation: Int, from frame: Int64) -> Int64? {
        state.withLock { state in
            var runs: [Run] = []
            if let run = state.runs[.generation(generation)] { runs.append(run) }
            for (serial, g) in state.aliases where g == generation {
                if let run = state.runs[.prepared(serial)] { runs.append(run) }
            }
            // Segments of a run follow one another in decoding order; one that starts where
            // another ends continues it.
            var end: Int64?
            for segment in runs.flatMap(\.segments).sorted(by: { $0.start < $1.start }) {
                if let reached = end {
                    guard segment.start <= reached else { break }
                    end = max(reached, segment.end)
                } else if segment.start <= frame && frame < segment.end {
                    end = segment.end
                }
            }
            return end
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
            state.runs.values.reduce(0) { total, run in
                total + run.segments.reduce(0) { $0 + $1.chunks.reduce(0) { $0 + $1.samples.count / AudioChunk.channelCount } }
            }
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
                var segments = run.segments
                for index in segments.indices {
                    let start = segments[index].start
                    segments[index].chunks.removeAll { start + $0.offset + Int64($0.samples.count / AudioChunk.channelCount) <= limit }
                }
                // An emptied segment goes, but for the last, which the next chunk may follow.
                let last = segments.count - 1
                segments = segments.enumerated().filter { $0.offset == last || !$0.element.chunks.isEmpty }.map(\.element)
                state.runs[key]?.segments = segments
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
            for segment in runs.flatMap(\.segments) where segment.start < end && segment.end > start {
                for chunk in segment.chunks {
                    let frames = Int64(chunk.samples.count / channels)
                    let first = segment.start + chunk.offset
                    let lower = max(start, first), upper = min(end, first + frames)
                    guard lower < upper else { continue }
                    chunk.samples.withUnsafeBufferPointer { samples in
                        for frame in lower..<upper {
                            let source = Int(frame - first) * channels
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
