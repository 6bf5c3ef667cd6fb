import Foundation
import TandemMediaTypes
import TandemHarness

/// Turns what one run of a scenario produced (events, presentation logs, commands, usage) into
/// its figures. Pure functions of the run's outcome.
///
/// The ground truth is the raw CLOCK_MONOTONIC that every peer on the host shares: presentation
/// logs record it, and the session clock of `tandem host --session-epoch 0` is that same clock, so a change's
/// effective instant and a frame's presented instant are directly comparable.
enum ScenarioAnalysis {
    /// Within this many ms of each other, peers count as together (convergence).
    static let convergenceTolerance = 1.0
    /// Frames in a row within the tolerance that make convergence.
    static let convergenceRun = 10
    /// A seek whose segment lasts less than this (ns) was superseded before it played.
    static let minimumSegment: Int64 = 500_000_000
    /// The width of the time bins in which position readings (mpv) are compared (ns).
    static let readingBin: Int64 = 100_000_000

    /// A timeline as the events announced it.
    struct Timeline: Equatable {
        var version: Int
        /// Effective instant, session (= raw monotonic) ns.
        var effective: Int64
        /// Media time at that instant, seconds.
        var mediaTime: Double
        var rate: Double
        /// The item it plays ("" before any, and where the events do not say).
        var item = ""
    }

    static func result(_ outcome: ScenarioRun.Outcome, scenario: Scenario, mode: SyncMode) throws -> ModeResult {
        let announced = timelines(outcome.peers.map(\.events))
        // A gated play's provisional timeline (anchored at the gate's deadline) never takes
        // effect: the version that completes the gate is anchored earlier.
        let timelines = inForce(announced)
        let changes = timelines.map(\.effective).sorted()
        let logs = try outcome.peers.map { try records($0) }
        let start = outcome.scriptStarted
        func seconds(_ instant: Int64) -> Double { Double(instant - start) / 1e9 }

        // Spread, and its series.
        var spreadSeries: [SeriesPoint]
        var showings: [SyncLogAnalysis.FrameShowing] = []
        if scenario.player == .mpv {
            spreadSeries = readingSpreads(logs, timelines: timelines).map { SeriesPoint(t: seconds($0.instant), value: $0.spread) }
        } else {
            showings = SyncLogAnalysis.showings(logs, changes: changes, minimumPeers: 2)
            spreadSeries = showings.map { SeriesPoint(t: seconds($0.firstPresented), value: $0.presentedSpread) }
        }
        spreadSeries.sort { $0.t < $1.t }

        // Clock error: the coordinator's only; the baseline has no clock.
        var clockSeries: [PeerSeries] = []
        if mode == .coordinator {
            for (peer, log) in zip(outcome.peers, logs) {
                let points = log.compactMap { record -> SeriesPoint? in
                    let instant = scenario.player == .mpv ? record.presentedNanoseconds : record.scheduledNanoseconds
                    guard let ideal = idealInstant(pts: record.pts, item: record.item, at: instant, timelines: timelines) else { return nil }
                    return SeriesPoint(t: seconds(instant), value: Double(instant - ideal) / 1e6)
                }
                clockSeries.append(PeerSeries(peer: label(peer, among: outcome.peers), points: points))
            }
        }

        // Command to effect.
        var errors = outcome.errors
        var toEffect: [Double] = []
        // The change each command became, once for both the effect and the convergence.
        let versions = outcome.commands.map { change(for: $0, outcome: outcome) }
        for (command, version) in zip(outcome.commands, versions) {
            guard isTimelineCommand(command.line) else { continue }
            guard let version else {
                errors.append("peer-\(command.peer)'s '\(command.line)' became no timeline change")
                continue
            }
            let effect: Int64?
            switch mode {
            case .coordinator:
                effect = completing(version, in: announced)?.effective
            case .onReceipt:
                // Each peer acts when the change reaches it: the effect is complete when it has
                // reached the last of them (of those already there: one that joins later hears
                // it in the history it is given, which is no effect of the command).
                effect = outcome.peers.filter { $0.started < command.written }.compactMap { peer in
                    peer.events.first { $0.event == "timeline" && $0.version == version }?.receivedNanoseconds
                }.max()
            }
            if let effect { toEffect.append(Double(effect - command.written) / 1e6) }
        }

        // Convergence after seeks and joins.
        var convergence: [Double] = []
        var notConverged = 0
        var events = 0
        if scenario.player == .builtin {
            for (command, version) in zip(outcome.commands, versions) where command.line.hasPrefix("seek") {
                // A seek while paused shows one still frame until the next change: there is no
                // run of frames to converge, and it is not counted (the queue scenario's paused
                // seek read as never converged).
                guard let version, let completed = completing(version, in: announced), completed.rate > 0 else { continue }
                let effective = completed.effective
                // Until the next change takes effect; a seek superseded at once (in a storm) never
                // really played, and is not counted.
                let until = timelines.filter { $0.version > completed.version }.map(\.effective).min() ?? .max
                guard until - effective >= minimumSegment else { continue }
                events += 1
                let segment = SyncLogAnalysis.segment(scheduled: effective, changes: changes)
                let window = showings.filter { $0.key.segment >= segment && $0.firstPresented >= command.written && $0.firstPresented < until }
                if let converged = convergedInstant(window) {
                    convergence.append(Double(converged - command.written) / 1e6)
                } else {
                    notConverged += 1
                }
            }
            for (position, peer) in outcome.peers.enumerated() where peer.joinedDuringScript {
                events += 1
                // Against the peers there from the start (not this one's own earlier run, which left).
                let others = outcome.peers.indices.filter { outcome.peers[$0].index != peer.index && !outcome.peers[$0].joinedDuringScript }
                    .map { logs[$0] }
                let join = SyncLogAnalysis.lateJoin(logs[position], others: others, changes: changes,
                                                    tolerance: Int64(convergenceTolerance * 1e6), run: convergenceRun)
                if let onTime = join.onTime {
                    convergence.append(Double(onTime - peer.started) / 1e6)
                } else {
                    notConverged += 1
                }
            }
        }

        for peer in outcome.peers where ![0, 3].contains(peer.exitStatus ?? -1) {
            errors.append("\(peer.name) exited with status \(peer.exitStatus.map(String.init) ?? "none (killed)")")
        }
        let statistics = outcome.peers.compactMap { $0.events.last { $0.event == "statistics" } }
        // mpv reports no frames, only its position: none are counted for it.
        let presented = statistics.compactMap(\.presented).reduce(0, +)
        let stalls = stallFigures(events: outcome.peers.map(\.events), showings: showings, timelines: timelines)
        var result = ModeResult(
            mode: mode, spread: Percentiles(spreadSeries.map(\.value)),
            clockError: Percentiles(clockSeries.flatMap(\.points).map { abs($0.value) }),
            commandToEffect: Percentiles(toEffect), convergence: Percentiles(convergence),
            convergenceEvents: events, notConverged: notConverged,
            framesPresented: presented, framesDropped: statistics.compactMap(\.dropped).reduce(0, +),
            peers: outcome.peers.map { peer in
                var usage = peer.usage
                usage.peer = label(peer, among: outcome.peers)
                return usage
            },
            spreadSeries: spreadSeries, clockErrorSeries: clockSeries, errors: errors)
        if stalls.stalls > 0 {
            result.stalls = stalls.stalls
            result.unansweredStalls = stalls.unanswered
            result.stallToWait = Percentiles(stalls.toWait)
            result.resumedSpread = Percentiles(stalls.resumedSpread)
        }
        if scenario.queueItems > 0 {
            let transitions = QueueAnalysis.transitions(logs)
            result.transitions = transitions.count
            result.transitionSpread = Percentiles(transitions.flatMap(\.spreads))
        }
        result.hostLeave = hostLeave(outcome, logs: logs, timelines: timelines)
        result.streamed = try streamed(outcome, scenario: scenario, logs: logs, timelines: timelines)
        if let proposals = outcome.proposals {
            result.rawProposals = proposals.sent
            result.rawProposalSeconds = proposals.seconds
        }
        return result
    }

    /// Every timeline that `timeline`, `waiting`, `resumed`, `item-ended` and `hold-expired` events
    /// announced, once each, in order of version and, within a version, of effective instant.
    ///
    /// An item's end (and a hold's release, alike) re-anchors the timeline at the end's instant, on the next item (or paused
    /// on the last frame), without a new version (an end is no record): it is the version's
    /// timeline from then on. Kept by version alone, the item-ends were lost, and every frame
    /// after the first end was measured against the first item's timeline (the queue
    /// scenario's clock-error p99 of 5.8 to 17.8 s).
    static func timelines(_ events: [[WatchEvent]]) -> [Timeline] {
        struct Key: Hashable { var version: Int, effective: Int64 }
        var announced: [Key: Timeline] = [:]
        for event in events.joined() where ["timeline", "waiting", "resumed", "item-ended", "hold-expired"].contains(event.event) {
            guard let version = event.version, let effective = event.effectiveSessionNanoseconds,
                  let mediaTime = event.mediaTime, let rate = event.rate else { continue }
            announced[Key(version: version, effective: effective)] = Timeline(version: version, effective: effective, mediaTime: mediaTime,
                                                                               rate: rate, item: event.payload.timeline?.item ?? "")
        }
        return announced.values.sorted { ($0.version, $0.effective) < ($1.version, $1.effective) }
    }

    /// The timelines that took effect, in order of version: a version superseded by a later one
    /// anchored before it never took effect (a gated play's provisional timeline, anchored at the
    /// gate's deadline, once the gate completes with the play's real start), and is dropped.
    static func inForce(_ timelines: [Timeline]) -> [Timeline] {
        var kept: [Timeline] = []
        var earliestLater = Int64.max
        for timeline in timelines.sorted(by: { ($0.version, $0.effective) > ($1.version, $1.effective) }) {
            if timeline.effective <= earliestLater { kept.append(timeline) }
            earliestLater = min(earliestLater, timeline.effective)
        }
        return kept.reversed()
    }

    /// The timeline that carried out `version`: that version if it took effect, or else the
    /// first later version anchored before it that did (the one completing a gated play).
    static func completing(_ version: Int, in timelines: [Timeline]) -> Timeline? {
        let ordered = timelines.sorted { $0.version < $1.version }
        guard let timeline = ordered.first(where: { $0.version == version }) else { return nil }
        guard let superseding = ordered.first(where: { $0.version > version && $0.effective < timeline.effective }) else {
            return timeline
        }
        return completing(superseding.version, in: ordered)
    }

    /// The instant the shared timeline gives media time `pts` (seconds) of `item`, under that
    /// item's timeline in force at `instant`; nil when that timeline is paused. A frame that
    /// starts before the timeline's anchor (the frame covering a seek's target) is due at the
    /// anchor.
    ///
    /// A frame is held to its own item's timelines (and to those that name none): around a
    /// switch of items, the last frames of one item and the first of the next are presented on
    /// either side of the switch, and measuring a frame against the other item's timeline would
    /// read as a clock error of a whole clip. Without an item, or when no timeline names it,
    /// every timeline counts.
    static func idealInstant(pts: Double, item: String? = nil, at instant: Int64, timelines: [Timeline]) -> Int64? {
        let limit = instant + SyncLogAnalysis.boundaryTolerance
        var candidates = timelines
        if let item, !item.isEmpty, timelines.contains(where: { $0.item == item }) {
            candidates = timelines.filter { $0.item == item || $0.item.isEmpty }
        }
        guard let timeline = candidates.filter({ $0.effective <= limit }).max(by: { ($0.effective, $0.version) < ($1.effective, $1.version) }),
              timeline.rate > 0 else { return nil }
        return timeline.effective + Int64((max(0, pts - timeline.mediaTime) / timeline.rate * 1e9).rounded())
    }

    /// The first frame of `convergenceRun` frames in a row (in order of presentation) whose
    /// spread is within the tolerance: its first presented instant.
    static func convergedInstant(_ showings: [SyncLogAnalysis.FrameShowing]) -> Int64? {
        let ordered = showings.sorted { $0.firstPresented < $1.firstPresented }
        var streak = 0
        for (position, showing) in ordered.enumerated() {
            streak = showing.presentedSpread <= convergenceTolerance ? streak + 1 : 0
            if streak == convergenceRun { return ordered[position - convergenceRun + 1].firstPresented }
        }
        return nil
    }

    /// Spreads of position readings: in each bin of `readingBin`, each peer's mean error against
    /// the shared timeline, and the largest minus the smallest of those (ms), where at least
    /// two peers read their position.
    static func readingSpreads(_ logs: [[PresentationRecord]], timelines: [Timeline]) -> [(instant: Int64, spread: Double)] {
        var bins: [Int64: [Int: (sum: Double, count: Int)]] = [:]
        for (peer, log) in logs.enumerated() {
            for record in log {
                guard let ideal = idealInstant(pts: record.pts, item: record.item, at: record.presentedNanoseconds, timelines: timelines) else { continue }
                let bin = record.presentedNanoseconds / readingBin
                let error = Double(record.presentedNanoseconds - ideal) / 1e6
                let current = bins[bin, default: [:]][peer] ?? (0, 0)
                bins[bin, default: [:]][peer] = (current.sum + error, current.count + 1)
            }
        }
        return bins.keys.sorted().compactMap { bin in
            let means = bins[bin]!.values.map { $0.sum / Double($0.count) }
            guard means.count >= 2 else { return nil }
            return (bin * readingBin, means.max()! - means.min()!)
        }
    }

    /// The timeline version that `command` became: that peer's next change of the command's
    /// kind announced after it was written, by the peer's name.
    static func change(for command: ScenarioRun.Command, outcome: ScenarioRun.Outcome) -> Int? {
        let name = "peer-\(command.peer)"
        let earlier = outcome.commands.filter { $0.peer == command.peer && $0.written < command.written && isTimelineCommand($0.line) }.count
        guard isTimelineCommand(command.line) else { return nil }
        // Every change that peer made, in order of version; the command is the (earlier + 1)th.
        var versions: [Int: WatchEvent] = [:]
        for event in outcome.peers.flatMap(\.events) where event.event == "timeline" && event.by == name {
            if let version = event.version, let change = event.change,
               ["play", "pause", "seek", "rate"].contains(where: { change.hasPrefix($0) }) {
                versions[version] = event
            }
        }
        let ordered = versions.keys.sorted()
        return earlier < ordered.count ? ordered[earlier] : nil
    }

    private static func isTimelineCommand(_ line: String) -> Bool {
        ["play", "pause", "seek", "rate"].contains { line.hasPrefix($0) }
    }

    /// A peer's name, with its run number when it joined more than once.
    private static func label(_ peer: ScenarioRun.Peer, among peers: [ScenarioRun.Peer]) -> String {
        let same = peers.filter { $0.index == peer.index }
        guard same.count > 1, let position = same.firstIndex(where: { $0.started == peer.started }) else { return peer.name }
        return position == 0 ? peer.name : "\(peer.name) (again)"
    }

    private static func records(_ peer: ScenarioRun.Peer) throws -> [PresentationRecord] {
        try SyncLogAnalysis.moving(log: peer.log, of: peer.name)
    }
}
