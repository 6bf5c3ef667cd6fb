import Foundation
import TandemMediaTypes

/// Reads presentation logs of several peers of one session against each other: which
/// presentations are the same frame, how far apart the peers showed it, and when a late joiner
/// came in on time. Pure functions of the logs and the session's timeline changes.
///
/// A frame is keyed by its timeline segment and its media time, so that a frame shown twice
/// (after a seek back) pairs each showing with the same showing elsewhere. The segment of a
/// presentation is the number of timeline changes whose effective instant is at or before its
/// scheduled instant (plus `boundaryTolerance`, since a frame that starts a segment is scheduled
/// at the change's instant give or take the peer's clock error). Effective instants and log
/// instants are comparable because the session clock of `tandem host --session-epoch 0` is the raw CLOCK_MONOTONIC.
public enum SyncLogAnalysis {
    /// One frame showing: its segment, its media time in microseconds and its item.
    ///
    /// The item matters in a queue: the group moves to the next item at an item's end with no
    /// timeline change of anyone's, so two items' frames at the same media time fall in one
    /// segment. Keyed without the item, a peer that dropped the first item's frame was paired
    /// by its showing of the next item's, one item's length later (the queue scenario's
    /// 3,000 ms spread in one run, with its five 3 s items).
    public struct FrameKey: Hashable, Sendable, Comparable {
        /// Timeline changes in effect when it was scheduled.
        public var segment: Int
        /// Media time, microseconds.
        public var pts: Int64
        /// The item's identifier, as the presentation log names it.
        public var item: String = ""

        /// Orders frames by segment, then by presentation time, then by item.
        public static func < (lhs: FrameKey, rhs: FrameKey) -> Bool {
            (lhs.segment, lhs.pts, lhs.item) < (rhs.segment, rhs.pts, rhs.item)
        }
    }

    /// How the peers' showings of the same frames compare.
    public struct Spread: Sendable {
        /// Max − min of the presented instants, one value per frame that every peer showed (ms).
        public var presented: [Double]
        /// Max − min of the scheduled instants, for the same frames (ms): clock error alone.
        public var scheduled: [Double]
        /// Showings that some peers presented and others did not.
        public var unpaired: Int
    }

    /// How a late joiner came in.
    public struct LateJoin: Sendable {
        /// The joiner's first presented frame (raw monotonic ns), if any.
        public var firstFrame: Int64?
        /// The first of `run` consecutive frames each within `tolerance` of the others (ns).
        public var onTime: Int64?
        /// The joiner's error against the others' median for every frame they all showed,
        /// from `onTime` on (ms, signed: positive is late).
        public var errorsAfterOnTime: [Double]
        /// Frames the joiner and every other peer showed.
        public var framesCompared: Int
    }

    /// Half a millisecond more than any clock error we expect: enough to put a segment's first
    /// frame in its segment, far less than a frame.
    public static let boundaryTolerance: Int64 = 1_000_000

    /// The segment of a presentation scheduled at `scheduled`, given the changes' effective
    /// instants in ascending order.
    public static func segment(scheduled: Int64, changes: [Int64]) -> Int {
        // Binary search: the number of changes at or before scheduled + tolerance.
        var low = 0
        var high = changes.count
        let limit = scheduled + boundaryTolerance
        while low < high {
            let middle = (low + high) / 2
            if changes[middle] <= limit { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The key of `record`.
    public static func key(_ record: PresentationRecord, changes: [Int64]) -> FrameKey {
        FrameKey(segment: segment(scheduled: record.scheduledNanoseconds, changes: changes),
                 pts: Int64((record.pts * 1e6).rounded()), item: record.item)
    }

    /// Each peer's non-still presentations by key (a key seen twice keeps its first showing).
    public static func index(_ records: [PresentationRecord], changes: [Int64]) -> [FrameKey: PresentationRecord] {
        var byKey: [FrameKey: PresentationRecord] = [:]
        for record in records where record.still != true {
            let key = key(record, changes: changes)
            if byKey[key] == nil { byKey[key] = record }
        }
        return byKey
    }

    /// One frame that several peers showed, and how far apart they showed it.
    public struct FrameShowing: Sendable {
        /// The frame.
        public var key: FrameKey
        /// The earliest presented instant (raw monotonic ns).
        public var firstPresented: Int64
        /// Max − min of the presented instants (ms).
        public var presentedSpread: Double
        /// Max − min of the scheduled instants (ms).
        public var scheduledSpread: Double
        /// How many peers showed it.
        public var showings: Int
    }

    /// Every frame that at least `minimumPeers` of `peers` showed, in order of its key, with the
    /// spread of its showings.
    public static func showings(_ peers: [[PresentationRecord]], changes: [Int64], minimumPeers: Int) -> [FrameShowing] {
        let indexed = peers.map { index($0, changes: changes) }
        return Set(indexed.flatMap(\.keys)).sorted().compactMap { key in
            let showings = indexed.compactMap { $0[key] }
            guard showings.count >= max(minimumPeers, 1) else { return nil }
            return FrameShowing(key: key, firstPresented: showings.map(\.presentedNanoseconds).min()!,
                                presentedSpread: range(showings.map(\.presentedNanoseconds)),
                                scheduledSpread: range(showings.map(\.scheduledNanoseconds)), showings: showings.count)
        }
    }

    /// The spread between `peers` of every frame that all of them showed.
    public static func spread(_ peers: [[PresentationRecord]], changes: [Int64]) -> Spread {
        let all = showings(peers, changes: changes, minimumPeers: 1)
        let paired = all.filter { $0.showings == peers.count }
        return Spread(presented: paired.map(\.presentedSpread), scheduled: paired.map(\.scheduledSpread),
                      unpaired: all.count - paired.count)
    }

    /// How `joiner` came in against `others`: the first of `run` consecutive frames that every
    /// other peer showed too and that the joiner showed within `tolerance` of their median.
    public static func lateJoin(_ joiner: [PresentationRecord], others: [[PresentationRecord]], changes: [Int64],
                                tolerance: Int64 = 1_000_000, run: Int = 10) -> LateJoin {
        let indexed = others.map { index($0, changes: changes) }
        let own = joiner.filter { $0.still != true }.sorted { $0.presentedNanoseconds < $1.presentedNanoseconds }
        var compared: [(instant: Int64, error: Int64)] = []
        for record in own {
            let key = key(record, changes: changes)
            let showings = indexed.compactMap { $0[key]?.presentedNanoseconds }
            guard showings.count == indexed.count, !showings.isEmpty else { continue }
            compared.append((record.presentedNanoseconds, record.presentedNanoseconds - median(showings)))
        }
        var onTimeIndex: Int?
        var streak = 0
        for (position, sample) in compared.enumerated() {
            streak = abs(sample.error) <= tolerance ? streak + 1 : 0
            if streak == run {
                onTimeIndex = position - run + 1
                break
            }
        }
        let after = onTimeIndex.map { Array(compared[$0...]) } ?? []
        return LateJoin(firstFrame: own.first?.presentedNanoseconds,
                        onTime: onTimeIndex.map { compared[$0].instant },
                        errorsAfterOnTime: after.map { Double($0.error) / 1e6 },
                        framesCompared: compared.count)
    }

    /// The records of the presentation log at `log` that are not stills of a paused timeline;
    /// none when `peer` wrote no log (it never presented); a log that cannot be read is an error.
    public static func moving(log: String, of peer: String) throws -> [PresentationRecord] {
        guard FileManager.default.fileExists(atPath: log) else { return [] }
        do {
            return try PresentationRecord.read(path: log).filter { $0.still != true }
        } catch {
            throw BenchmarkError("cannot read \(peer)'s presentation log: \(error)")
        }
    }

    private static func range(_ instants: [Int64]) -> Double {
        Double(instants.max()! - instants.min()!) / 1e6
    }

    private static func median(_ values: [Int64]) -> Int64 {
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}
