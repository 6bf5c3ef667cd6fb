extension Scenario {
    /// The host leaves mid-play (`leave`, as `q` does: not `end`); the three others play on
    /// without it, and one of them controls the group after it (the session outlives
    /// its host). Whoever took the operator's role over ends the session at the end.
    static let hostLeaves = Scenario(
        name: "host-leaves",
        summary: "Four peers play; the host leaves mid-play (not ending the session): the three others play on, seek and pause without it.",
        peers: 4,
        steps: [command(0, "play"), .hold(4), .leave(0), .hold(6), command(1, "seek 4"), .hold(4), command(2, "pause"), .hold(0.3)])

    /// Two joiners without the file stream the host's: one there from the
    /// start, one joining while the group plays; two seeks.
    static let streamed: Scenario = {
        var scenario = Scenario(
            name: "streamed",
            summary: "Two joiners without the file stream the host's, one from the start and one joining mid-play: play, two seeks.",
            peers: 2,
            steps: [command(0, "play"), .hold(3), .join(2), .hold(3), command(0, "seek 12"), .hold(3), command(1, "seek 4"), .hold(3),
                    command(0, "pause"), .hold(0.3)])
        scenario.streamingJoiners = [1, 2]
        return scenario
    }()
}
