import TandemNetsim
import TandemNet

extension Scenario {
    /// Every scenario of the full suite, in the order it runs. The clip is at least 20 s long;
    /// scripts stay within it.
    public static let catalogue: [Scenario] = [
        steady, storm, lateJoiners, leaveAndRejoin, stall(waiting: true), stall(waiting: false), stallAuto,
        longSession, impaired, asymmetric, eightPeers, queue, mpv, hostLeaves, streamed, sync(peers: 4),
    ]

    /// The short suite (`--quick`): two scenarios, well under a minute for both modes.
    public static let quickCatalogue: [Scenario] = {
        var steady = Scenario(name: "steady", summary: "Three peers play for 2.5 s, seek and play on.", peers: 3, steps: [
            command(0, "play"), .hold(2.5), command(1, "seek 12"), .hold(1.5), command(0, "pause"), .hold(0.3),
        ])
        steady.network = "loopback"
        var impaired = Scenario(name: "impaired", summary: "Three peers, joiners over 50 ± 20 ms with 2 % loss: play, seek, play on.",
                                peers: 3, steps: [
            command(0, "play"), .hold(2), command(2, "seek 8"), .hold(2), command(1, "pause"), .hold(0.3),
        ])
        impaired.impairEveryJoiner(badNetwork, joiners: 1...2)
        impaired.network = badNetworkWords
        return [steady, impaired]
    }()

    /// The scenario called `name` in either catalogue (the full one first).
    public static func named(_ name: String, quick: Bool) -> Scenario? {
        (quick ? quickCatalogue : catalogue).first { $0.name == name }
    }

    static let badNetwork = Impairment(delay: 50_000_000, jitter: 20_000_000, loss: 0.02)
    static let badNetworkWords = "50 ± 20 ms each way, 2 % UDP loss"

    static let steady = Scenario(
        name: "steady", summary: "Four peers play 15 s without a change.", peers: 4,
        steps: [command(0, "play"), .hold(15), command(0, "pause"), .hold(0.3)])

    static let storm = Scenario(
        name: "storm", summary: "Three participants change the timeline at the same moment, four times in a row: seeks, pauses and rates.",
        peers: 4, steps: [
            command(0, "play"), .hold(2),
            .commands([PeerCommand(1, "seek 8"), PeerCommand(2, "rate 1.5"), PeerCommand(3, "pause")]), .hold(1.5),
            .commands([PeerCommand(3, "play"), PeerCommand(1, "seek 3"), PeerCommand(2, "rate 0.75")]), .hold(2),
            .commands([PeerCommand(2, "seek 12"), PeerCommand(3, "rate 1.25"), PeerCommand(1, "seek 6")]), .hold(0.5),
            .commands([PeerCommand(1, "rate 1"), PeerCommand(2, "play"), PeerCommand(3, "seek 2")]), .hold(4),
            command(0, "pause"), .hold(0.3),
        ])

    static let lateJoiners = Scenario(
        name: "late-joiners", summary: "Three peers play; two more join 3 s apart while they do.", peers: 3,
        steps: [command(0, "play"), .hold(3), .join(3), .hold(4), .join(4), .hold(5), command(0, "pause"), .hold(0.3)])

    static let leaveAndRejoin = Scenario(
        name: "leave-rejoin", summary: "Four peers play; one leaves, and joins again 3 s later.", peers: 4,
        steps: [command(0, "play"), .hold(3), .leave(2), .hold(3), .join(2), .hold(5), command(0, "pause"), .hold(0.3)])

    static func stall(waiting: Bool) -> Scenario {
        Scenario(
            name: waiting ? "stall-wait" : "stall-alone",
            summary: waiting
                ? "A peer stalls for 1.5 s while four play; the group waits for it and resumes together."
                : "A peer stalls for 1.5 s while four play; the others play on and it catches up on its own.",
            peers: 4,
            steps: [command(0, "play"), .hold(3), command(2, waiting ? "stall 1.5" : "stall 1.5 nowait"), .hold(6),
                    command(0, "pause"), .hold(0.3)])
    }

    /// The decode throttle `stall-auto` applies to its slow peer, and for how long (s) each time.
    static let stallThrottle = (factor: 1_000.0, seconds: 1.5)

    /// A peer whose decoder falls behind three times: its player stalls and suspends itself,
    /// the group waits and resumes, with no playback command from anyone (`throttle` is the
    /// bench's way of making a decoder slow, not a command to the group).
    static let stallAuto: Scenario = {
        let throttle = command(2, "throttle \(stallThrottle.factor) \(stallThrottle.seconds)")
        return Scenario(
            name: "stall-auto",
            summary: "Four peers play; one's decoder is slowed \(Int(stallThrottle.factor))× for \(stallThrottle.seconds) s, three times: "
                + "its player stalls by itself, the group waits for it and resumes, with no command from anyone.",
            peers: 4,
            steps: [command(0, "play"), .hold(3), throttle, .hold(4.5), throttle, .hold(4.5), throttle, .hold(4.5),
                    command(0, "pause"), .hold(0.3)])
    }()

    /// Proposals the raw client of `long-session` makes.
    static let longSessionProposals = 100_000

    /// A long session's history: a raw client makes 100,000 proposals while three peers wait
    /// (paused, so that the media lasts whatever the relay's pace), then they play and a late
    /// joiner comes in, to be on time as fast as in a short session.
    static let longSession = Scenario(
        name: "long-session",
        summary: "A raw client makes \(longSessionProposals) proposals (item reports, kept as playback records) in a session of three; "
            + "they play, and a fourth joins late.",
        peers: 3,
        steps: [.proposals(longSessionProposals), command(0, "play"), .hold(2), .join(3), .hold(5),
                command(0, "pause"), .hold(0.3)])

    /// Four peers across five transitions of a shared queue: the main clip, then five short
    /// clips, advanced through at each item's end (`tandem host FILE…`: each peer is given the
    /// same list of files).
    public static let queue: Scenario = {
        var scenario = Scenario(
            name: "queue", summary: "Four peers play a queue of six clips: five transitions at the ends of items, each next item pre-rolled.",
            peers: 4, steps: [command(0, "seek 17"), .hold(0.5), command(0, "play"), .hold(3 + 5 * 3 + 1.5), command(0, "pause"), .hold(0.3)])
        scenario.queueItems = 5
        return scenario
    }()

    static let impaired: Scenario = {
        var scenario = Scenario(
            name: "impaired", summary: "Four peers, each joiner over 50 ± 20 ms with 2 % loss: play, seek, rate, pause and play.",
            peers: 4, steps: [
                command(0, "play"), .hold(3), command(1, "seek 10"), .hold(3), command(2, "rate 1.25"), .hold(3),
                command(3, "pause"), .hold(1), command(1, "play"), .hold(3), command(0, "pause"), .hold(0.3),
            ])
        scenario.impairEveryJoiner(badNetwork, joiners: 1...3)
        scenario.network = badNetworkWords
        return scenario
    }()

    static let asymmetric: Scenario = {
        var scenario = Scenario(
            name: "asymmetric", summary: "Four peers; two joiners' paths are 10 ms up and 30 ms down, one's is 20 ms both ways: play and seek.",
            peers: 4, steps: [command(0, "play"), .hold(5), command(3, "seek 4"), .hold(5), command(0, "pause"), .hold(0.3)])
        let lopsided = Impairment(delay: 10_000_000, asymmetry: 20_000_000)
        scenario.impairments = [1: lopsided, 2: lopsided, 3: Impairment(delay: 20_000_000)]
        scenario.network = "10 ms up, 30 ms down (two joiners); 20 ms both ways (one)"
        return scenario
    }()

    static let eightPeers = Scenario(
        name: "eight-peers", summary: "Eight peers on two cores play, seek and play on.", peers: 8,
        steps: [command(0, "play"), .hold(6), command(5, "seek 4"), .hold(6), command(0, "pause"), .hold(0.3)])

    static let mpv: Scenario = {
        var scenario = Scenario(
            name: "mpv", summary: "Three real mpv players (headless), coordinated through their IPC: play, seek, play on.",
            peers: 3, steps: [command(0, "play"), .hold(6), command(1, "seek 10"), .hold(6), command(0, "pause"), .hold(0.3)])
        scenario.player = .mpv
        return scenario
    }()
}
