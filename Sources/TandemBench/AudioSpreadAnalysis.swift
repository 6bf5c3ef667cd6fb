/// The audio spread of a group of participants, read off one recording of all their outputs
/// (one channel each): each member's channel correlated against the first member's over short
/// windows, and each output's own error, its channel located in the media it was given and
/// compared with the instant its audio log intended. Pure: samples and logs in, figures out.
public enum AudioSpreadAnalysis {
    /// How the recording is cut into windows and how far a match is looked for, in samples.
    public struct Windowing: Sendable {
        /// Samples a window holds (30 ms at 48 kHz).
        public var window = 1_440
        /// Samples from one window to the next (100 ms).
        public var hop = 4_800
        /// How far from the last match (or from the same instant) a match is looked for first (5 ms).
        public var search = 240
        /// How far from the same instant it is looked for when the first search fails (50 ms).
        public var wideSearch = 2_400
        /// The lowest normalised correlation peak a window counts with.
        public var minimumPeak = 0.8
        /// The RMS amplitude below which a window counts as silence and is skipped.
        public var silence: Float = 0.003

        /// The bench's windowing: 30 ms windows every 100 ms, matches within 5 ms, then 50 ms.
        public init() {}
    }

    /// One window where every member's sound was found.
    public struct Window: Sendable, Equatable {
        /// The recording's sample index where the window begins.
        public var position: Int
        /// Each member's lag behind the first member, in samples (the first's is 0).
        public var lags: [Double]
        /// The latest member's lag minus the earliest's, in samples.
        public var spread: Double
        /// The lowest correlation peak among the members.
        public var peak: Double
    }

    /// The windows of `channels[members]` where every member's sound matched the first member's,
    /// and how many windows were skipped (silence in the first member's channel, or a member
    /// that did not match: silent, or playing something else).
    public static func windows(channels: [[Float]], members: [Int], windowing: Windowing = Windowing()) -> (windows: [Window], skipped: Int) {
        guard let first = members.first, members.allSatisfy({ channels.indices.contains($0) }) else { return ([], 0) }
        let reference = channels[first]
        var lastLag = [Int](repeating: 0, count: members.count)
        var windows: [Window] = []
        var skipped = 0
        var position = 0
        while position + windowing.window <= reference.count {
            defer { position += windowing.hop }
            var lags = [Double](repeating: 0, count: members.count)
            var lowestPeak = 1.0
            var complete = true
            for (slot, member) in members.enumerated().dropFirst() {
                let match = AudioCorrelation.locate(reference, start: position, length: windowing.window, in: channels[member],
                                                    center: position + lastLag[slot], radius: windowing.search,
                                                    silence: windowing.silence, minimumPeak: windowing.minimumPeak)
                    ?? AudioCorrelation.locate(reference, start: position, length: windowing.window, in: channels[member],
                                               center: position, radius: windowing.wideSearch,
                                               silence: windowing.silence, minimumPeak: windowing.minimumPeak)
                guard let match else {
                    complete = false
                    break
                }
                lags[slot] = match.position - Double(position)
                lastLag[slot] = Int(lags[slot].rounded())
                lowestPeak = min(lowestPeak, match.peak)
            }
            guard complete else {
                skipped += 1
                continue
            }
            let spread = (lags.max() ?? 0) - (lags.min() ?? 0)
            windows.append(Window(position: position, lags: lags, spread: spread, peak: lowestPeak))
        }
        return (windows, skipped)
    }

    /// One window of a member's own error.
    public struct OwnError: Sendable, Equatable {
        /// The recording's sample index where the window begins.
        public var position: Int
        /// The item and media position (frames) found there.
        public var item: String
        public var media: Double
        /// The instant the window's first sample reached the recording, less the instant the
        /// participant intended for that media position (ns; positive: late).
        public var error: Double
        /// The same against the instant the sound server's timing led it to expect (ns).
        public var errorAgainstExpected: Double
        /// The correlation peak with the media (below 1 where the output reshaped the waveform:
        /// resampled it, or stretched it).
        public var peak: Double
    }

    /// The lowest correlation peak with the media an own-error window counts with: an output
    /// that resamples or stretches (even at the timeline's rate 1 in host time, which the
    /// session clock's drift makes 1 ± 100 ppm) correlates with the media it was given far
    /// less than two outputs of the same process correlate with each other; a match of noise by
    /// chance stays under 0.1 over a 30 ms window.
    public static let ownErrorMinimumPeak = 0.4

    /// The own error of the output recorded in `channel`, at `positions` (sample indices of the
    /// recording): each window located in the media the participant was given (`sources`, by
    /// item; an item the log names that `sources` lacks is looked for in every source) near the
    /// position its log says it intended for that instant, then compared with that intention.
    /// `instant` maps a recording sample index to the machine's monotonic clock (ns).
    public static func ownErrors(channel: [Float], sources: [String: [Float]], log: AudioOutputLog, positions: [Int],
                                 instant: (Int) -> Int64, windowing: Windowing = Windowing()) -> [OwnError] {
        var errors: [OwnError] = []
        // The last error found (ns): the next window's intention is looked up that much earlier.
        var shift: Int64?
        for position in positions where position >= 0 && position + windowing.window <= channel.count {
            let recorded = instant(position)
            guard let intended = log.mediaPosition(at: recorded - (shift ?? 0)) else { continue }
            let candidates = sources[intended.item].map { [(intended.item, $0)] }
                ?? sources.filter { intended.item.hasSuffix($0.key) || $0.key.hasSuffix(intended.item) }.map { ($0.key, $0.value) }
                .nilIfEmpty ?? sources.map { ($0.key, $0.value) }
            let center = Int(intended.media.rounded())
            var found: (item: String, match: AudioCorrelation.Match)?
            for (item, source) in candidates {
                let radius = shift == nil ? windowing.wideSearch : windowing.search
                if let match = AudioCorrelation.locate(channel, start: position, length: windowing.window, in: source, center: center,
                                                       radius: radius, silence: windowing.silence, minimumPeak: ownErrorMinimumPeak)
                    ?? (shift == nil ? nil : AudioCorrelation.locate(channel, start: position, length: windowing.window, in: source,
                                                                      center: center, radius: windowing.wideSearch,
                                                                      silence: windowing.silence, minimumPeak: ownErrorMinimumPeak)) {
                    if found == nil || match.peak > found!.match.peak { found = (item, match) }
                }
            }
            guard let found, let instants = log.instants(item: intended.item, media: found.match.position, near: recorded) else { continue }
            let error = Double(recorded - instants.intended)
            errors.append(OwnError(position: position, item: found.item, media: found.match.position, error: error,
                                   errorAgainstExpected: Double(recorded - instants.expected), peak: found.match.peak))
            shift = Int64(error.rounded())
        }
        return errors
    }
}

extension Array {
    fileprivate var nilIfEmpty: Self? { isEmpty ? nil : self }
}
