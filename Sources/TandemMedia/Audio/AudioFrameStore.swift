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
func mediaFrame(atMediaTime nanoseconds: Int64) -> Int64 {
    let rate = Int64(AudioChunk.sampleRate)
    let (seconds, rest) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
    return seconds * rate + (rest * rate + (rest >= 0 ? 500_000_000 : -500_000_000)) / 1_000_000_000
}

/// The decoded PCM the sound output plays from: the decoder's chunks, kept by generation (or,
/// for an item decoded ahead, by its preparation until a switch gives it a generation) and
/// addressed by media frame, so that the output can ask for the frames of any instant.
///
/// The decoder adds chunks as it decodes them (ahead of their instants, within the engine's
/// queue limits). The output notes what it reads (`note(_:)`: a `Reading`, a few numbers), and
/// the decoder's next `append` lets go of what the output no longer needs: frames more than
/// `history` behind its position, and generations that neither the schedule nor a fading sound
/// reads. Thread-safe.
///
/// The output's thread runs at a real-time priority and must never wait behind a thread that
/// allocates or frees memory (the allocator's locks inherit no priority): so the output's calls
/// (`read`, `decodedEnd`, `item`, `note`) allocate and free nothing, and the decoder's `append`
/// holds the store's lock only while it moves values: the sound let go is freed after the lock
/// is released, and in the steady state no array grows under it (a segment's chunks are
/// appended in place, and keep their capacity as old ones go).
final class AudioFrameStore: AudioFrameSource, Sendable {
    /// Where a run of chunks belongs.
    enum Key: Hashable, Sendable {
        /// A decoding generation of the current item (or of an item that took over).
        case generation(Int)
        /// An item decoded ahead, by its preparation's serial.
        case prepared(Int)
    }

    /// What the output reads: the generations it may still read, and its position in those it
    /// is reading, in a fixed space (no allocation to make or copy). Past `capacity` generations
    /// it is `overflowed`, and no generation is let go on its account.
    struct Reading: Sendable, Equatable {
        /// Generations one reading holds.
        static let capacity = 8
        private(set) var count = 0
        private(set) var overflowed = false
        private var generations = InlineArray<8, Int>(repeating: 0)
        /// The position read in each generation, `Int64.min` where none is.
        private var positions = InlineArray<8, Int64>(repeating: .min)

        /// Nothing read.
        init() {}

        /// The output may read `generation`, at `position` when given.
        mutating func add(_ generation: Int, position: Int64? = nil) {
            for index in 0..<count where generations[index] == generation {
                if let position { positions[index] = position }
                return
            }
            guard count < Self.capacity else {
                overflowed = true
                return
            }
            generations[count] = generation
            positions[count] = position ?? .min
            count += 1
        }

        /// Whether `generation` is one the output may read.
        func contains(_ generation: Int) -> Bool {
            for index in 0..<count where generations[index] == generation { return true }
            return false
        }

        /// The position read in `generation`, if any.
        func position(_ generation: Int) -> Int64? {
            for index in 0..<count where generations[index] == generation {
                return positions[index] == .min ? nil : positions[index]
            }
            return nil
        }

        /// The newest generation the output may read.
        var newest: Int? {
            var newest: Int?
            for index in 0..<count { newest = max(newest ?? generations[index], generations[index]) }
            return newest
        }

        static func == (lhs: Reading, rhs: Reading) -> Bool {
            guard lhs.count == rhs.count, lhs.overflowed == rhs.overflowed else { return false }
            for index in 0..<lhs.count where lhs.generations[index] != rhs.generations[index] || lhs.positions[index] != rhs.positions[index] {
                return false
            }
            return true
        }
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
        /// `refining`; otherwise as a new segment at its stamp. The last segment is changed in
        /// place, so that its chunks are not copied.
        mutating func append(_ samples: [Int16], stamped: Int64, continuity: Int64, refining: Int64) {
            let frames = Int64(samples.count / AudioChunk.channelCount)
            let last = segments.count - 1
            guard last >= 0, abs(stamped - segments[last].end) <= continuity else {
                segments.append(Segment(lowest: stamped, highest: stamped, chunks: [(0, samples)], length: frames))
                return
            }
            let length = segments[last].length
            if length < refining {
                segments[last].lowest = min(segments[last].lowest, stamped - length)
                segments[last].highest = max(segments[last].highest, stamped - length)
            }
            segments[last].chunks.append((length, samples))
            segments[last].length += frames
        }
    }

    private struct State {
        var runs: [Key: Run] = [:]
        /// Preparations that a scheduled switch has given a generation.
        var aliases: [Int: Int] = [:]
        /// What the output noted it reads last.
        var reading: Reading?
    }

    /// What a trim let go, freed once the store's lock is released.
    private struct Released {
        var chunks: [[Int16]] = []
        var runs: [Run] = []
        var keys: [Key] = []
        var serials: [Int] = []
        /// The runs' keys, visited one by one (a dictionary changed while its keys are iterated
        /// would be copied).
        var visit: [Key] = []
        /// The most chunks, and runs, a trim lets go at once (the rest goes at the next).
        let chunkLimit: Int
        let runLimit: Int

        /// Room for a trim of up to `chunkLimit` chunks and `runLimit` runs, made before the lock
        /// is taken, so that the trim only moves values under it.
        init(chunkLimit: Int = 64, runLimit: Int = 8) {
            self.chunkLimit = chunkLimit
            self.runLimit = runLimit
            chunks.reserveCapacity(min(chunkLimit, 1_024))
            runs.reserveCapacity(min(runLimit, 64))
            keys.reserveCapacity(min(runLimit, 64))
            serials.reserveCapacity(min(runLimit, 64))
            visit.reserveCapacity(64)
        }
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
    /// its stamp is more than `continuity` from there (see `Segment`); and lets go of what the
    /// output's last noted reading no longer needs.
    func append(_ chunk: AudioChunk, key: Key, item: String) {
        let stamped = mediaFrame(atMediaTime: chunk.presentationTime)
        var released = Released()
        state.withLock { state in
            if case .prepared(let serial) = key, state.runs[key] == nil {
                // A new preparation replaces the earlier ones that no switch has claimed.
                for case .prepared(let earlier) in state.runs.keys where earlier < serial && state.aliases[earlier] == nil {
                    released.keys.append(.prepared(earlier))
                }
                for other in released.keys {
                    if let run = state.runs.removeValue(forKey: other) { released.runs.append(run) }
                }
                released.keys.removeAll(keepingCapacity: true)
            }
            if state.runs[key] == nil { state.runs[key] = Run(item: item) }
            state.runs[key]?.append(chunk.samples, stamped: stamped, continuity: continuity, refining: refining)
            if let reading = state.reading { Self.trim(&state, reading, history: history, into: &released) }
        }
        // `released` is freed here, the lock released.
    }

    /// The chunks of preparation `serial` (decoded so far and to come) belong to `generation`.
    func assign(prepared serial: Int, to generation: Int) {
        state.withLock { state in
            state.aliases = state.aliases.filter { $0.value != generation }
            state.aliases[serial] = generation
        }
    }

    /// Calls `body` with each run that holds sound of `generation`: its own, and those of the
    /// preparations assigned to it. Lock held.
    private static func forEachRun(_ state: State, generation: Int, _ body: (Run) -> Void) {
        if let run = state.runs[.generation(generation)] { body(run) }
        for (serial, g) in state.aliases where g == generation {
            if let run = state.runs[.prepared(serial)] { body(run) }
        }
    }

    func decodedEnd(generation: Int, from frame: Int64) -> Int64? {
        state.withLock { state in
            // The segment that holds `frame`, then any that starts within what is found so far
            // and ends beyond it, until none does (segments are few; nothing is sorted or copied).
            var end: Int64?
            Self.forEachRun(state, generation: generation) { run in
                for segment in run.segments where segment.start <= frame && frame < segment.end {
                    end = max(end ?? segment.end, segment.end)
                }
            }
            guard var reached = end else { return nil }
            var extended = true
            while extended {
                extended = false
                Self.forEachRun(state, generation: generation) { run in
                    for segment in run.segments where segment.start <= reached && segment.end > reached {
                        reached = segment.end
                        extended = true
                    }
                }
            }
            return reached
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

    /// Notes what the output reads; the decoder's next `append` lets go of what it no longer
    /// needs. A copy of a few numbers: the output's thread's part of the trimming.
    func note(_ reading: Reading) {
        state.withLock { $0.reading = reading }
    }

    /// Keeps only what the output may still read: the runs of `generations` and of later ones
    /// (and of the preparations assigned to those, and of preparations not yet assigned), and
    /// in each, nothing that ends more than `history` before `positions[generation]`.
    func retain(generations: Set<Int>, positions: [Int: Int64]) {
        var reading = Reading()
        for generation in generations.sorted() { reading.add(generation, position: positions[generation]) }
        retain(reading)
    }

    /// As `retain(generations:positions:)`, for what `reading` says the output reads.
    func retain(_ reading: Reading) {
        var released = Released(chunkLimit: .max, runLimit: .max)
        state.withLock { Self.trim(&$0, reading, history: history, into: &released) }
    }

    /// Moves what `reading` no longer needs out of `state` into `released` (up to its limits;
    /// the rest at the next trim), without freeing anything. Lock held.
    private static func trim(_ state: inout State, _ reading: Reading, history: Int64, into released: inout Released) {
        if !reading.overflowed, let newest = reading.newest {
            let wanted = { (generation: Int) in reading.contains(generation) || generation > newest }
            for (serial, generation) in state.aliases where !wanted(generation) && released.serials.count < released.runLimit {
                released.serials.append(serial)
            }
            for key in state.runs.keys where released.keys.count < released.runLimit {
                switch key {
                case .generation(let g): if !wanted(g) { released.keys.append(key) }
                case .prepared(let serial): if let g = state.aliases[serial], !wanted(g) { released.keys.append(key) }
                }
            }
            for serial in released.serials { state.aliases.removeValue(forKey: serial) }
            for key in released.keys where released.runs.count < released.runLimit {
                if let run = state.runs.removeValue(forKey: key) { released.runs.append(run) }
            }
        }
        for key in state.runs.keys where released.visit.count < released.visit.capacity { released.visit.append(key) }
        for key in released.visit {
            let generation: Int?
            switch key {
            case .generation(let g): generation = g
            case .prepared(let serial): generation = state.aliases[serial]
            }
            guard let generation, let position = reading.position(generation) else { continue }
            let limit = position - history
            let segments = state.runs[key]?.segments.count ?? 0
            for index in 0..<segments {
                // Chunks are in order: those that end before the limit lead the segment. They are
                // counted in a scope of their own, so that no copy of the segment is alive when
                // its chunks are removed in place.
                var expired = 0
                do {
                    guard let segment = state.runs[key]?.segments[index] else { continue }
                    for chunk in segment.chunks {
                        guard segment.start + chunk.offset + Int64(chunk.samples.count / AudioChunk.channelCount) <= limit,
                              released.chunks.count < released.chunkLimit else { break }
                        released.chunks.append(chunk.samples)
                        expired += 1
                    }
                }
                if expired > 0 { state.runs[key]?.segments[index].chunks.removeFirst(expired) }
            }
            // An emptied segment goes, but for the last, which the next chunk may follow.
            let emptied = state.runs[key].map { run in run.segments.dropLast().contains { $0.chunks.isEmpty } } ?? false
            if emptied, let run = state.runs[key] {
                let last = run.segments.count - 1
                state.runs[key]?.segments = run.segments.enumerated().filter { $0.offset == last || !$0.element.chunks.isEmpty }.map(\.element)
            }
        }
        released.visit.removeAll(keepingCapacity: true)
    }

    func read(generation: Int, from start: Int64, count: Int, into destination: inout [Float]) -> Int {
        let channels = AudioChunk.channelCount
        if destination.count < count * channels { destination = [Float](repeating: 0, count: count * channels) }
        destination.withUnsafeMutableBufferPointer { destination in
            for index in 0..<(count * channels) { destination[index] = 0 }
        }
        return state.withLock { state in
            var found = 0
            let end = start + Int64(count)
            Self.forEachRun(state, generation: generation) { run in
                for segment in run.segments where segment.start < end && segment.end > start {
                    for chunk in segment.chunks {
                        let frames = Int64(chunk.samples.count / channels)
                        let first = segment.start + chunk.offset
                        let lower = max(start, first), upper = min(end, first + frames)
                        guard lower < upper else { continue }
                        chunk.samples.withUnsafeBufferPointer { samples in
                            destination.withUnsafeMutableBufferPointer { destination in
                                for frame in lower..<upper {
                                    let source = Int(frame - first) * channels
                                    let target = Int(frame - start) * channels
                                    for channel in 0..<channels {
                                        destination[target + channel] = Float(samples[source + channel]) / 32768
                                    }
                                }
                            }
                        }
                        found += Int(upper - lower)
                    }
                }
            }
            return min(found, count)
        }
    }
}
