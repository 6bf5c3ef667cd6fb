import TandemMediaTypes

/// The audio bench's figures from what a run produced: the recording (a channel a participant),
/// where it sits on the machine's clock, the timeline's changes, and the participants' audio logs.
/// Pure, so that it is tested on recordings made up with known offsets.
public enum AudioBenchmarkAnalysis {
    /// What a run produced.
    public struct Input: Sendable {
        /// The recording, one array of samples per channel.
        public var channels: [[Float]]
        /// Where the recording's frames sit on the machine's monotonic clock.
        public var recording: RecordingClock
        /// The timeline's changes.
        public var timeline: AudioTimeline
        /// The script's span (monotonic ns): only the recording within it is analysed.
        public var scriptStarted: Int64
        public var scriptEnded: Int64
        /// The groups, each with its members' names and channels; one not measured says why.
        public var groups: [(name: String, summary: String, members: [(name: String, channel: Int)], notMeasured: String?)]
        /// Audio logs by participant name.
        public var logs: [String: AudioOutputLog]
        /// The media's samples by item (file name).
        public var sources: [String: [Float]]
        /// Presentation logs by participant name (the pictures of built-in players).
        public var presentations: [String: [PresentationRecord]]

        /// The input; see each property.
        public init(channels: [[Float]], recording: RecordingClock, timeline: AudioTimeline, scriptStarted: Int64, scriptEnded: Int64,
                    groups: [(name: String, summary: String, members: [(name: String, channel: Int)], notMeasured: String?)],
                    logs: [String: AudioOutputLog], sources: [String: [Float]], presentations: [String: [PresentationRecord]] = [:]) {
            (self.channels, self.recording, self.timeline, self.scriptStarted, self.scriptEnded) = (channels, recording, timeline, scriptStarted, scriptEnded)
            (self.groups, self.logs, self.sources, self.presentations) = (groups, logs, sources, presentations)
        }
    }

    /// How long after a change counts as "after a change" (ns).
    static let afterChange: Int64 = 100_000_000
    /// The largest own error (about the common offset, ns) taken for one: beyond it the window was
    /// paired with the wrong write.
    static let attributionBound = 500_000_000.0
    /// Samples between own-error windows (500 ms).
    static let ownErrorHop = 24_000

    /// The report's figures (its date, machine and durations left for the caller).
    public static func analyse(_ input: Input, windowing: AudioSpreadAnalysis.Windowing = .init()) -> AudioBenchmarkReport {
        let rate = Double(AudioBenchSignal.sampleRate)
        let instant = { (index: Double) -> Int64 in input.recording.instant(ofFrame: index) }
        let frames = input.channels.first?.count ?? 0
        let first = max(0, min(frames, Int(input.recording.frame(at: input.scriptStarted).rounded(.up))))
        let last = max(first, min(frames, Int(input.recording.frame(at: input.scriptEnded).rounded(.down))))
        let windowSpan = Int64(Double(windowing.window) * 1e9 / rate)
        let microseconds = { (samples: Double) in samples * 1e6 / rate }
        let changes = input.timeline.changes.filter { $0.instant >= input.scriptStarted && $0.instant <= input.scriptEnded }
        var largest: [[String: Double]] = changes.map { _ in [:] }
        func note(_ group: String, at time: Int64, span: Int64, spread: Double) {
            for (index, change) in changes.enumerated() where change.instant < time + span && time < change.instant + afterChange {
                largest[index][group] = max(largest[index][group] ?? 0, spread)
            }
        }

        var groups: [AudioBenchmarkReport.Group] = []
        for group in input.groups {
            var row = AudioBenchmarkReport.Group(name: group.name, summary: group.summary, participants: group.members.map(\.name),
                                                 notMeasured: group.notMeasured, windows: 0, skippedWindows: 0)
            guard group.notMeasured == nil else {
                groups.append(row)
                continue
            }
            guard group.members.count >= 2, group.members.allSatisfy({ input.channels.indices.contains($0.channel) }) else {
                row.notMeasured = "fewer than two participants recorded"
                groups.append(row)
                continue
            }
            let cropped = group.members.map { Array(input.channels[$0.channel][first..<last]) }
            let result = AudioSpreadAnalysis.windows(channels: cropped, members: Array(cropped.indices), windowing: windowing)
            var steady: [Double] = [], after: [Double] = [], all: [Double] = []
            var clocks: [Double] = [], outputs: [Double] = []
            let memberLogs = group.members.compactMap { input.logs[$0.name] }
            var used = 0
            for window in result.windows {
                let time = instant(Double(window.position + first))
                guard input.timeline.rate(at: time) == 1 else { continue }
                used += 1
                let spread = microseconds(window.spread)
                all.append(spread)
                if input.timeline.change(near: time, span: windowSpan, within: afterChange) != nil {
                    after.append(spread)
                    note(group.name, at: time, span: windowSpan, spread: spread)
                } else {
                    steady.append(spread)
                    if memberLogs.count == group.members.count,
                       let split = AudioSpreadAnalysis.clockSplit(lags: window.lags, at: time, logs: memberLogs, sampleRate: rate) {
                        clocks.append(split.clocks / 1_000)
                        outputs.append(split.outputs / 1_000)
                    }
                }
            }
            row.windows = used
            row.skippedWindows = result.skipped
            row.steady = Percentiles(steady)
            row.afterChanges = Percentiles(after)
            row.all = Percentiles(all)
            row.clocksSteady = Percentiles(clocks)
            row.outputsSteady = Percentiles(outputs)
            let onsets = cropped.map { AudioClicks.onsets($0) }
            let clicks = AudioClicks.spreads(reference: onsets[0], others: Array(onsets.dropFirst()), within: Double(windowing.wideSearch))
            var clickSteady: [Double] = []
            for click in clicks {
                let time = instant(click.position + Double(first))
                let spread = microseconds(click.spread)
                if input.timeline.change(near: time, span: 0, within: afterChange) != nil {
                    note(group.name, at: time, span: 0, spread: spread)
                } else {
                    clickSteady.append(spread)
                }
            }
            row.clicks = Percentiles(clicks.map { microseconds($0.spread) })
            row.clicksSteady = Percentiles(clickSteady)
            groups.append(row)
        }

        // Each logged output's own error, at rate-1 instants away from changes.
        var ownErrors: [String: [AudioSpreadAnalysis.OwnError]] = [:]
        var ownWindowing = windowing
        ownWindowing.wideSearch = 2 * windowing.wideSearch
        for group in input.groups where group.notMeasured == nil {
            for member in group.members {
                guard let log = input.logs[member.name], input.channels.indices.contains(member.channel) else { continue }
                let positions = stride(from: first, to: last - windowing.window, by: ownErrorHop).filter { position in
                    let time = instant(Double(position))
                    return input.timeline.rate(at: time) == 1 && input.timeline.change(near: time, span: windowSpan, within: afterChange) == nil
                }
                ownErrors[member.name] = AudioSpreadAnalysis.ownErrors(channel: input.channels[member.channel], sources: input.sources, log: log,
                                                                       positions: positions, instant: { instant(Double($0)) }, windowing: ownWindowing)
            }
        }
        let timedGroup = input.groups.first { $0.notMeasured == nil && $0.members.contains { ownErrors[$0.name]?.isEmpty == false } }
        let reference = timedGroup.map { group in group.members.flatMap { ownErrors[$0.name] ?? [] } } ?? []
        let common = median(reference.map(\.error))
        // The recording's frames and the machine's clock can part at a change (a stream's flush
        // rewinds the sink, and the monitor keeps what it had passed on): the common offset is
        // taken between each change and the next, and how far it moved is reported.
        let segment = { (position: Int) -> Int in
            let time = instant(Double(position))
            return input.timeline.changes.filter { $0.instant <= time }.count
        }
        var segmentOffsets: [Int: (error: Double, expected: Double)] = [:]
        for (key, errors) in Dictionary(grouping: reference, by: { segment($0.position) }) {
            if let error = median(errors.map(\.error)), let expected = median(errors.map(\.errorAgainstExpected)) {
                segmentOffsets[key] = (error, expected)
            }
        }
        // A window whose media position the log intended more than half a second from where it
        // was recorded was paired with the wrong write (one of two that meant the same instant,
        // around a seek or a snap): counted, not measured.
        var unattributed: [String: Int] = [:]
        if let common {
            for (name, errors) in ownErrors {
                let kept = errors.filter { abs($0.error - common) <= attributionBound }
                unattributed[name] = errors.count - kept.count
                ownErrors[name] = kept
            }
        }

        var participants: [AudioBenchmarkReport.Participant] = []
        for group in input.groups {
            for member in group.members {
                var participant = AudioBenchmarkReport.Participant(name: member.name, group: group.name, sink: "p\(member.channel)",
                                                                   clockOffsetSeconds: 0, clockDriftPPM: 0)
                if let log = input.logs[member.name] {
                    participant.writes = log.writes.count
                    participant.correctionPPM = Percentiles(log.writes.map(\.correction))
                    participant.snaps = log.snaps.count
                    participant.underruns = log.underruns.filter { $0 >= input.scriptStarted && $0 <= input.scriptEnded }.count
                    participant.underrunsBeforeScript = log.underruns.filter { $0 < input.scriptStarted }.count
                    participant.missingFrames = log.missingFrames
                    participant.latencyMilliseconds = Percentiles(log.latencies.map { Double($0.latency) / 1e6 })
                    participant.outputRealtime = log.realtime
                }
                if let errors = ownErrors[member.name]?.filter({ segmentOffsets[segment($0.position)] != nil }) {
                    participant.ownErrorMicroseconds = Percentiles(errors.map { ($0.error - segmentOffsets[segment($0.position)]!.error) / 1_000 })
                    participant.errorAgainstExpectedMicroseconds = Percentiles(errors.map {
                        ($0.errorAgainstExpected - segmentOffsets[segment($0.position)]!.expected) / 1_000
                    })
                    participant.ownErrorPeak = Percentiles(errors.map(\.peak))
                    participant.ownErrorWindows = errors.map { error in
                        let offsets = segmentOffsets[segment(error.position)]!
                        return [Double(instant(Double(error.position)) - input.scriptStarted) / 1e9,
                                (error.error - offsets.error) / 1_000, (error.errorAgainstExpected - offsets.expected) / 1_000]
                    }
                    participant.ownErrorUnattributed = unattributed[member.name]
                }
                if let log = input.logs[member.name], let records = input.presentations[member.name] {
                    let pictures = picturesAfterSound(records, log: log, input: input)
                    participant.picturesAfterSoundMicroseconds = Percentiles(pictures.values)
                    participant.picturesUnpaired = pictures.unpaired
                }
                participants.append(participant)
            }
        }
        let changeRows = changes.enumerated().map { index, change in
            AudioBenchmarkReport.Change(change: change.change, atSeconds: Double(change.instant - input.scriptStarted) / 1e9, rate: change.rate,
                                        largestSpread: largest[index])
        }
        return AudioBenchmarkReport(date: "", machine: "", seconds: 0, scriptSeconds: Double(input.scriptEnded - input.scriptStarted) / 1e9,
                                    relayDriftPPM: 0, builtinSound: true, participants: participants, groups: groups, changes: changeRows,
                                    commonOffsetMicroseconds: common.map { $0 / 1_000 },
                                    commonOffsetRangeMicroseconds: segmentOffsets.isEmpty ? nil
                                        : (segmentOffsets.values.map(\.error).max()! - segmentOffsets.values.map(\.error).min()!) / 1_000,
                                    placementNanoseconds: input.recording.origin,
                                    recordingClockPPM: input.recording.ppm(nominalPeriod: 1e9 / rate), errors: [])
    }

    /// For each moving picture presented within the script at rate 1, outside the 100 ms after a
    /// change: its presentation instant less the instant the audio log expected the sound of the
    /// same media position at the output (µs). A picture whose sound was written more than half a
    /// second from it was paired with another playing of that position (around a seek back), or
    /// its sound was never written (the picture of a pre-roll): counted in `unpaired`.
    static func picturesAfterSound(_ records: [PresentationRecord], log: AudioOutputLog, input: Input) -> (values: [Double], unpaired: Int) {
        let rate = Double(AudioBenchSignal.sampleRate)
        var values: [Double] = [], unpaired = 0
        for record in records {
            let presented = record.presentedNanoseconds
            guard record.still != true, record.reading != true, presented >= input.scriptStarted, presented <= input.scriptEnded,
                  input.timeline.rate(at: presented) == 1, input.timeline.change(near: presented, span: 0, within: afterChange) == nil else { continue }
            guard let sound = log.instants(item: record.item, media: record.pts * rate, near: presented),
                  abs(Double(presented - sound.expected)) <= attributionBound else {
                unpaired += 1
                continue
            }
            values.append(Double(presented - sound.expected) / 1_000)
        }
        return (values, unpaired)
    }

    /// The median of `values`, nil when empty.
    static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}
