extension Scenario {
    /// `tandem bench sync` as a scenario of the suite: `peers` peers (the host included); the
    /// host plays, pauses, seeks and changes the rate (`SyncBenchmark.script`), a late joiner
    /// comes in while the group plays, and the host pauses. The late joiner is peer `peers`.
    public static func sync(peers: Int) -> Scenario {
        var steps: [Step] = []
        for step in SyncBenchmark.script {
            steps += [command(0, step.command), .hold(step.hold)]
        }
        steps += [.join(peers), .hold(SyncBenchmark.lateJoinHold), command(0, "pause"), .hold(SyncBenchmark.finalPause)]
        return Scenario(name: "sync", summary: "\(peers) peers follow the host's play, pause, seeks and rates; a late joiner comes in while they play.",
                        peers: peers, steps: steps)
    }
}
