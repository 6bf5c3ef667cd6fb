import TandemHarness

extension ScenarioAnalysis {
    /// How far before a peer's `stalled` event the group's waiting may take effect and still
    /// count as its answer (ns): the event reaches the suite through a pipe, a little after the
    /// player noticed.
    static let stallEventSlack: Int64 = 50_000_000
    /// How long after a stall the group's waiting still counts as its answer (ns).
    static let stallAnswerWindow: Int64 = 5_000_000_000

    /// What the players' own stalls did.
    struct StallFigures: Equatable {
        /// `stalled` events, all peers together.
        var stalls = 0
        /// For each stall the group waited for: from the `stalled` event to the waiting
        /// timeline's effective instant (ms; negative within the pipe's slack).
        var toWait: [Double] = []
        /// Stalls the group did not wait for within `stallAnswerWindow`.
        var unanswered = 0
        /// The spread of every frame shown from a resume's effective instant until the next
        /// change (ms).
        var resumedSpread: [Double] = []
    }

    /// The stall figures of a run: `events`, every peer's; `showings`, the frames compared;
    /// `timelines`, every change announced.
    static func stallFigures(events: [[WatchEvent]], showings: [SyncLogAnalysis.FrameShowing],
                             timelines: [Timeline]) -> StallFigures {
        var figures = StallFigures()
        let all = Array(events.joined())
        let waitingVersions = Set(all.filter { $0.event == "waiting" }.compactMap(\.version))
        let resumedVersions = Set(all.filter { $0.event == "resumed" }.compactMap(\.version))
        let waits = timelines.filter { waitingVersions.contains($0.version) }.map(\.effective).sorted()
        for stall in all where stall.event == "stalled" {
            figures.stalls += 1
            let instant = stall.receivedNanoseconds
            if let wait = waits.first(where: { $0 >= instant - stallEventSlack && $0 <= instant + stallAnswerWindow }) {
                figures.toWait.append(Double(wait - instant) / 1e6)
            } else {
                figures.unanswered += 1
            }
        }
        for resumed in timelines where resumedVersions.contains(resumed.version) {
            let until = timelines.filter { $0.version > resumed.version }.map(\.effective).min() ?? .max
            figures.resumedSpread += showings.filter { $0.firstPresented >= resumed.effective && $0.firstPresented < until }
                .map(\.presentedSpread)
        }
        return figures
    }
}
