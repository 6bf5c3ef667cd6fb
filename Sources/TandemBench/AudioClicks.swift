/// The onsets of clicks in a recorded channel: where the sound first crosses a threshold after
/// a stretch of quiet, to a fraction of a sample (linear between the two samples around the
/// crossing). Clicks survive a time stretch where noise does not: a stretcher copies short
/// stretches of the waveform at their own speed, so a click keeps its shape and its onset.
public enum AudioClicks {
    /// What counts as an onset.
    public struct Detector: Sendable {
        /// The amplitude (full scale 1) the click crosses.
        public var threshold: Float = 0.45
        /// The amplitude below which the sound counts as quiet.
        public var quietLevel: Float = 0.05
        /// How many quiet samples must come before an onset.
        public var quietSamples = 96
        /// How many samples after an onset no other is looked for.
        public var holdOff = 240
        /// How many samples the rise from quiet to the threshold may take.
        public var rise = 48

        /// The detector for the bench's clicks (`AudioBenchSignal`): 2 ms of quiet, then past 0.45.
        public init() {}
    }

    /// Every onset in `samples`, in order, as fractional sample indices.
    public static func onsets(_ samples: [Float], detector: Detector = Detector()) -> [Double] {
        var onsets: [Double] = []
        var quietRun = 0
        // The last sample of the latest quiet stretch long enough to precede an onset.
        var quietEnded = Int.min / 2
        var index = 0
        while index < samples.count {
            let level = abs(samples[index])
            if level >= detector.threshold, index - quietEnded <= detector.rise, index > 0 {
                let before = abs(samples[index - 1])
                let fraction = Double((detector.threshold - before) / (level - before))
                onsets.append(Double(index - 1) + fraction)
                index += detector.holdOff
                quietRun = 0
                quietEnded = Int.min / 2
                continue
            }
            quietRun = level < detector.quietLevel ? quietRun + 1 : 0
            if quietRun >= detector.quietSamples { quietEnded = index }
            index += 1
        }
        return onsets
    }

    /// For each onset of `reference`, the spread (latest minus earliest, in samples) of it and the
    /// nearest onset of every other channel in `others`, when each has one within `within`
    /// samples whose nearest reference onset is this one (a click a stretcher repeated in one
    /// channel is not paired with another's single click); with the reference onset's position.
    public static func spreads(reference: [Double], others: [[Double]], within: Double) -> [(position: Double, spread: Double)] {
        var cursors = [Int](repeating: 0, count: others.count)
        var result: [(position: Double, spread: Double)] = []
        for (position, onset) in reference.enumerated() {
            var earliest = onset
            var latest = onset
            var complete = true
            for (channel, list) in others.enumerated() {
                var cursor = cursors[channel]
                while cursor + 1 < list.count, abs(list[cursor + 1] - onset) <= abs(list[cursor] - onset) { cursor += 1 }
                cursors[channel] = cursor
                guard cursor < list.count, abs(list[cursor] - onset) <= within else {
                    complete = false
                    continue
                }
                let distance = abs(list[cursor] - onset)
                let closerNeighbour = (position > 0 && abs(reference[position - 1] - list[cursor]) < distance)
                    || (position + 1 < reference.count && abs(reference[position + 1] - list[cursor]) < distance)
                guard !closerNeighbour else {
                    complete = false
                    continue
                }
                earliest = min(earliest, list[cursor])
                latest = max(latest, list[cursor])
            }
            if complete { result.append((onset, latest - earliest)) }
        }
        return result
    }
}
