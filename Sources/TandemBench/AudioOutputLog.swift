import Foundation

/// A participant's audio log (`tandem join --audio-log FILE`), read back: one JSON object a line,
/// by `kind`. Lines it cannot read are counted, not fatal.
public struct AudioOutputLog: Sendable {
    /// One write to the sound server.
    public struct Write: Sendable, Equatable, Decodable {
        /// The item it belongs to.
        public var item: String
        /// The media position of its first frame, in frames at 48 kHz.
        public var media: Double
        /// The instant the participant intended that frame to reach the output (monotonic ns).
        public var intended: Int64
        /// The instant the sound server's timing said it would (monotonic ns).
        public var expected: Int64
        /// Frames written.
        public var frames: Int
        /// The timeline's rate.
        public var rate: Double
        /// The resampler's correction in parts per million.
        public var correction: Double
    }

    /// A snap: a span dropped or inserted, or a seek, to catch up an error beyond the rate's reach.
    public struct Snap: Sendable, Equatable, Decodable {
        /// When (monotonic ns).
        public var at: Int64
        /// The error it took out (ns).
        public var error: Int64
    }

    /// The output's latency as the sound server reported it.
    public struct Latency: Sendable, Equatable, Decodable {
        /// When (monotonic ns).
        public var at: Int64
        /// The latency (ns).
        public var latency: Int64
    }

    /// The writes, in order.
    public var writes: [Write] = [] {
        didSet { index = WriteIndex(writes) }
    }
    /// The snaps.
    public var snaps: [Snap] = []
    /// When the sound server ran out of samples (monotonic ns).
    public var underruns: [Int64] = []
    /// The latencies reported.
    public var latencies: [Latency] = []
    /// Media frames the output wanted that were not decoded yet, over all its writes.
    public var missingFrames = 0
    /// Lines that were not a record of a known kind.
    public var unreadLines = 0
    /// Records the output's log left out, its ring being full (the log says how many).
    public var droppedRecords = 0
    /// Whether the output's thread got its real-time priority (nil: the log does not say).
    public var realtime: Bool?
    /// The writes ordered by intended instant, so that a look-up reads the few near an instant
    /// rather than a long run's every write.
    private var index = WriteIndex([])

    /// A log of these records (for tests).
    public init(writes: [Write] = [], snaps: [Snap] = [], underruns: [Int64] = [], latencies: [Latency] = []) {
        self.writes = writes
        index = WriteIndex(writes)
        self.snaps = snaps
        self.underruns = underruns
        self.latencies = latencies
    }

    private struct Kind: Decodable { var kind: String }
    private struct Underrun: Decodable { var at: Int64 }
    private struct Missing: Decodable { var frames: Int }
    private struct Dropped: Decodable { var count: Int }
    private struct Priority: Decodable { var realtime: Bool }

    /// Parses the text of a log.
    public init(text: String) {
        let decoder = JSONDecoder()
        var writes: [Write] = []
        defer {
            self.writes = writes
            index = WriteIndex(writes)
        }
        for line in text.split(separator: "\n") where !line.allSatisfy(\.isWhitespace) {
            let data = Data(line.utf8)
            guard let kind = try? decoder.decode(Kind.self, from: data) else {
                unreadLines += 1
                continue
            }
            switch kind.kind {
            case "write":
                if let write = try? decoder.decode(Write.self, from: data) { writes.append(write) } else { unreadLines += 1 }
            case "snap":
                if let snap = try? decoder.decode(Snap.self, from: data) { snaps.append(snap) } else { unreadLines += 1 }
            case "underrun":
                if let underrun = try? decoder.decode(Underrun.self, from: data) { underruns.append(underrun.at) } else { unreadLines += 1 }
            case "missing":
                if let missing = try? decoder.decode(Missing.self, from: data) { missingFrames += missing.frames } else { unreadLines += 1 }
            case "latency":
                if let latency = try? decoder.decode(Latency.self, from: data) { latencies.append(latency) } else { unreadLines += 1 }
            case "busy":
                break
            case "priority":
                if let priority = try? decoder.decode(Priority.self, from: data) { realtime = priority.realtime } else { unreadLines += 1 }
            case "dropped":
                if let dropped = try? decoder.decode(Dropped.self, from: data) { droppedRecords += dropped.count } else { unreadLines += 1 }
            default:
                unreadLines += 1
            }
        }
    }

    /// Reads the log at `path`.
    public init(path: String) throws {
        do {
            self.init(text: try String(contentsOfFile: path, encoding: .utf8))
        } catch {
            throw BenchmarkError("cannot read the audio log \(path): \(error.localizedDescription)")
        }
    }

    /// The write of `item` that holds media position `media` (the last at or before it, at the
    /// latest instant when the position was written more than once, as after a seek back), and
    /// the instants it intended and expected for that position (monotonic ns).
    public func instants(item: String, media: Double, near instant: Int64) -> (intended: Int64, expected: Int64)? {
        // The nearest write holding the position: looked for among the writes intended within
        // `nearby` of the instant first (one found there is nearer than any beyond), then among all.
        let holds = { (write: Write) in
            write.item == item && write.media <= media && media < write.media + max(Double(write.frames) * max(write.rate, 0), 1)
        }
        let nearest = { (candidates: [Int]) -> Write? in
            candidates.lazy.filter { holds(writes[$0]) }
                .min { (abs(writes[$0].intended - instant), $0) < (abs(writes[$1].intended - instant), $1) }
                .map { writes[$0] }
        }
        guard let best = nearest(index.intended(from: instant - WriteIndex.nearby, through: instant + WriteIndex.nearby))
            ?? nearest(Array(writes.indices)), best.rate > 0 else { return nil }
        let seconds = (media - best.media) / best.rate / Double(AudioBenchSignal.sampleRate)
        let span = Int64((seconds * 1e9).rounded())
        return (best.intended + span, best.expected + span)
    }

    /// The media position the participant meant to reach the output at `instant`, and its item:
    /// from the write whose span of intended instants holds it.
    public func mediaPosition(at instant: Int64) -> (item: String, media: Double)? {
        // Writes are in order of intended instants, but for a seek or an item change: the last
        // in the log's order whose span holds the instant, among those intended within the
        // longest write's span before it.
        let duration = { (write: Write) in Int64(Double(write.frames) / Double(AudioBenchSignal.sampleRate) * 1e9) }
        let candidate = index.intended(from: instant - index.longest, through: instant)
            .filter { instant < writes[$0].intended + duration(writes[$0]) }.max()
        guard let write = candidate.map({ writes[$0] }) else { return nil }
        let elapsed = Double(instant - write.intended) / 1e9
        return (write.item, write.media + elapsed * Double(AudioBenchSignal.sampleRate) * write.rate)
    }
}

/// A log's writes ordered by intended instant.
private struct WriteIndex: Sendable {
    /// How far from an instant a write's intended instant is looked for first (ns).
    static let nearby: Int64 = 5_000_000_000
    /// The writes' positions in the log, by intended instant (then by position).
    let order: [Int]
    /// The intended instants in that order.
    let instants: [Int64]
    /// The longest write's span (ns).
    let longest: Int64

    init(_ writes: [AudioOutputLog.Write]) {
        order = writes.indices.sorted { (writes[$0].intended, $0) < (writes[$1].intended, $1) }
        instants = order.map { writes[$0].intended }
        longest = writes.map { Int64((Double($0.frames) / Double(AudioBenchSignal.sampleRate) * 1e9).rounded(.up)) }.max() ?? 0
    }

    /// The log positions of the writes intended from `low` through `high`.
    func intended(from low: Int64, through high: Int64) -> [Int] {
        Array(order[firstIndex(atLeast: low)..<firstIndex(atLeast: high &+ 1)])
    }

    private func firstIndex(atLeast value: Int64) -> Int {
        var (low, high) = (0, instants.count)
        while low < high {
            let middle = (low + high) / 2
            if instants[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
