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
    public var writes: [Write] = []
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

    /// A log of these records (for tests).
    public init(writes: [Write] = [], snaps: [Snap] = [], underruns: [Int64] = [], latencies: [Latency] = []) {
        self.writes = writes
        self.snaps = snaps
        self.underruns = underruns
        self.latencies = latencies
    }

    private struct Kind: Decodable { var kind: String }
    private struct Underrun: Decodable { var at: Int64 }
    private struct Missing: Decodable { var frames: Int }

    /// Parses the text of a log.
    public init(text: String) {
        let decoder = JSONDecoder()
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
        var best: Write?
        var bestDistance = Int64.max
        for write in writes where write.item == item && write.media <= media {
            let span = Double(write.frames) * max(write.rate, 0)
            guard media < write.media + max(span, 1) else { continue }
            let distance = abs(write.intended - instant)
            if distance < bestDistance {
                best = write
                bestDistance = distance
            }
        }
        guard let best, best.rate > 0 else { return nil }
        let seconds = (media - best.media) / best.rate / Double(AudioBenchSignal.sampleRate)
        let span = Int64((seconds * 1e9).rounded())
        return (best.intended + span, best.expected + span)
    }

    /// The media position the participant meant to reach the output at `instant`, and its item:
    /// from the write whose span of intended instants holds it.
    public func mediaPosition(at instant: Int64) -> (item: String, media: Double)? {
        // Writes are in order of intended instants, but for a seek or an item change.
        var candidate: Write?
        for write in writes where write.intended <= instant {
            let seconds = Double(write.frames) / Double(AudioBenchSignal.sampleRate)
            if instant < write.intended + Int64(seconds * 1e9) { candidate = write }
        }
        guard let write = candidate else { return nil }
        let elapsed = Double(instant - write.intended) / 1e9
        return (write.item, write.media + elapsed * Double(AudioBenchSignal.sampleRate) * write.rate)
    }
}
