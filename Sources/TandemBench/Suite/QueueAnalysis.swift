import TandemMediaTypes

/// The `queue` scenario's measure: how tightly in step the peers present the first frames of
/// each item the group advances to. Pure functions of the presentation logs, which record the
/// item of every frame.
enum QueueAnalysis {
    /// Frames of each next item compared.
    static let firstFrames = 50

    /// One item the group advanced to, and the spreads of its first frames.
    struct Transition: Equatable {
        /// The item's identifier, as the logs record it.
        var item: String
        /// For each of its first frames (in media order) that at least two peers presented: the
        /// latest presented instant minus the earliest (ms).
        var spreads: [Double]
    }

    /// Every item after the first that any peer presented, in the order they first appear, with
    /// the spreads of its first `frames` frames. A frame shown twice by one peer (a repeat of the
    /// item later on) counts at its first showing.
    static func transitions(_ logs: [[PresentationRecord]], frames: Int = firstFrames) -> [Transition] {
        let moving = logs.map { log in log.filter { $0.still != true }.sorted { $0.presentedNanoseconds < $1.presentedNanoseconds } }
        var order: [String] = []
        for record in moving.joined().sorted(by: { $0.presentedNanoseconds < $1.presentedNanoseconds }) where !order.contains(record.item) {
            order.append(record.item)
        }
        return order.dropFirst().map { item in
            // Each peer's first showing of each frame of the item, by media time (µs).
            let shown: [[Int64: Int64]] = moving.map { log in
                var first: [Int64: Int64] = [:]
                for record in log where record.item == item {
                    let key = Int64((record.pts * 1e6).rounded())
                    if first[key] == nil { first[key] = record.presentedNanoseconds }
                }
                return first
            }
            let keys = Set(shown.flatMap(\.keys)).sorted().prefix(frames)
            let spreads = keys.compactMap { key -> Double? in
                let instants = shown.compactMap { $0[key] }
                guard instants.count >= 2 else { return nil }
                return Double(instants.max()! - instants.min()!) / 1e6
            }
            return Transition(item: item, spreads: spreads)
        }
    }
}
