import TandemHarness

/// The changes of a session's timeline on the machine's monotonic clock, as the host announced
/// them: what the audio bench classifies each window of its recording by (the rate in force, and
/// whether a change took effect in the 100 ms before).
public struct AudioTimeline: Sendable {
    /// One change.
    public struct Change: Sendable, Equatable {
        /// What changed (`play`, `seek 12.000`, …).
        public var change: String
        /// The instant it took effect (monotonic ns).
        public var instant: Int64
        /// The rate from then on (0: paused).
        public var rate: Double
    }

    /// The changes, in order of their instants.
    public var changes: [Change]

    /// A timeline of `changes`.
    public init(changes: [Change]) {
        self.changes = changes.sorted { $0.instant < $1.instant }
    }

    /// The timelines the host announced (`timeline` events, each version once), their effective
    /// session instants placed on the monotonic clock: the relay's session clock is its monotonic
    /// clock gaining `relayDriftPPM` from `relayOrigin` (`tandem serve --session-epoch 0
    /// --clock-drift-ppm`, started at that instant).
    public init(events: [WatchEvent], relayOrigin: Int64, relayDriftPPM: Double) {
        var byVersion: [Int: Change] = [:]
        for event in events where event.event == "timeline" {
            guard let version = event.version, let effective = event.effectiveSessionNanoseconds, let rate = event.rate,
                  byVersion[version] == nil else { continue }
            let instant = relayOrigin + Int64((Double(effective - relayOrigin) / (1 + relayDriftPPM / 1e6)).rounded())
            byVersion[version] = Change(change: event.change ?? "change", instant: instant, rate: rate)
        }
        self.init(versions: byVersion)
    }

    /// The changes that took effect, from the timelines by version: one that a later version
    /// overtook (a gated play, started earlier once everyone had pre-rolled) never did; the one
    /// that overtook it is named after it.
    init(versions: [Int: Change]) {
        var kept: [Change] = []
        var earliestLater = Int64.max
        for version in versions.keys.sorted(by: >) {
            guard let change = versions[version] else { continue }
            if change.instant <= earliestLater {
                kept.append(change)
                earliestLater = change.instant
            } else if let last = kept.indices.last, kept[last].change.hasPrefix("pre-rolled") {
                kept[last].change = change.change
            }
        }
        self.init(changes: kept)
    }

    /// The rate in force at `instant` (0 before any change).
    public func rate(at instant: Int64) -> Double {
        changes.last { $0.instant <= instant }?.rate ?? 0
    }

    /// The change whose first `within` ns overlap the span from `instant` for `span` ns, if any.
    public func change(near instant: Int64, span: Int64, within: Int64 = 100_000_000) -> Change? {
        changes.last { $0.instant < instant + span && instant < $0.instant + within }
    }
}
