import TandemBench

/// The options of the benchmarks and the time service, as `tandem help bench NAME` and
/// `tandem help clock serve` explain them.
extension BenchAllCommand {
    static var options: [OptionHelp] {
        [OptionHelp("--out DIR", "where the report goes: report.json, report.md, SVG plots and index.html (default: bench-report)"),
         OptionHelp("--quick", "two short scenarios (steady, impaired), under a minute: a check rather than a measurement"),
         OptionHelp("--scenario NAME[,NAME…]", "only these scenarios (--list names them)"),
         OptionHelp("--clip PATH", "the media every peer plays (default: Samples/Media/watch-together.mp4, else a 20 s clip made "
            + "with ffmpeg)"),
         OptionHelp("--keep-logs DIR", "keep every peer's presentation log, its events and its standard error there"),
         OptionHelp("--check", "exit 1 when the report breaks the suite's loose limits (a regression check for a noisy machine)"),
         OptionHelp("--list", "list the scenarios and what each does, and run none")]
    }
}

extension BenchSyncCommand {
    static var options: [OptionHelp] {
        [OptionHelp("--peers N", "how many participants, the host among them (2 to \(SyncBenchmark.maximumPeers); default: 4)"),
         OptionHelp("--clip PATH", "the media every peer plays (default: the sample clip)"),
         OptionHelp("--json", "print the report as JSON instead of the table"),
         OptionHelp("--out FILE", "also write the report as JSON to FILE")]
    }
}

extension BenchRelayCommand {
    static var options: [OptionHelp] {
        [OptionHelp("--adversarial", "the relay as its own process, quiet and then under attack, with the same honest load"),
         OptionHelp("--each", "with --adversarial: each kind of attack alone too, before all of them together"),
         OptionHelp("--in-process", "the relay in this process, beside the links (default: a tandem serve of its own)"),
         OptionHelp("--relay-executable PATH", "another build's tandem as the relay, under this build's load"),
         OptionHelp("--full-stack-only", "only the phases through the whole client stack, not the relay's own delivery"),
         OptionHelp("--delivery-only", "only the relay's own delivery and its floor: short enough to alternate two builds"),
         OptionHelp("--relay-cost", "the relay's latency by the kernel's socket timestamps and its CPU per delivery, beside a "
            + "bare forwarder's, both pinned to one processor (the relay in this process); with --adversarial, the relay's "
            + "own latency by the kernel's clocks in each run, from its process's measuring mode (serve --measure-kernel)"),
         OptionHelp("--relay-cpu N", "with --relay-cost: the processor to pin them to (default: the last one this process may use)"),
         OptionHelp("--priority normal|high|realtime", "how the relay's loop and the probe's threads are scheduled "
            + "(default: normal)"),
         OptionHelp("--busy-poll", "the probe's reading thread polls instead of sleeping"),
         OptionHelp("--writer-threads 1|2", "how many threads the relay writes large broadcasts with (default: the relay's own)"),
         OptionHelp("--participants N", "participants in the broadcast session (2 to 1000; default: 200)"),
         OptionHelp("--json", "print the report as JSON instead of the table"),
         OptionHelp("--out FILE", "also write the report as JSON to FILE")]
    }
}

extension BenchClusterCommand {
    static var options: [OptionHelp] {
        [OptionHelp("--players", "four built-in players split over two relays, beside the same four on one relay"),
         OptionHelp("--failover", "the players, with the second relay killed while they play"),
         OptionHelp("--ordered", "ordered delivery across three relays, beside the same NATS cluster alone in their shape (every chain at once, then paced at each rate)"),
         OptionHelp("--sessions N", "ordered delivery for N sessions of four (implies --ordered; default: 1000)"),
         OptionHelp("--joins-only", "only the three relays' joins of those sessions, run after run (implies --ordered)"),
         OptionHelp("--clock", "the relays' cluster time, its authority killed midway"),
         OptionHelp("--seconds SECONDS", "how long the players play (at most 60) and the clock is read (default: 10)"),
         OptionHelp("--clip PATH", "the media the players play (default: a clip made once with ffmpeg)"),
         OptionHelp("--no-failover", "kill neither the second relay nor the clock's authority"),
         OptionHelp("--keep-logs DIR", "keep the players' presentation logs there"),
         OptionHelp("--wake-guard", "run the players with --wake-guard"),
         OptionHelp("--json", "print the report as JSON instead of the table"),
         OptionHelp("--out FILE", "also write the report as JSON to FILE"),
         OptionHelp("rows", "with none of --players, --failover, --ordered, --sessions and --clock, every row runs")]
    }
}

extension BenchDecodeCommand {
    static var options: [OptionHelp] {
        [OptionHelp("FILE", "the media to decode"),
         OptionHelp("--threads N", "decoding threads, for Tandem and for the ffmpeg command line alike (default: 1)"),
         OptionHelp("--runs K", "runs of each (default: 5)"),
         OptionHelp("--json", "print the figures as JSON")]
    }
}

extension BenchPresentCommand {
    static var options: [OptionHelp] {
        [OptionHelp("FILE", "the media to present"),
         OptionHelp("--runs K", "runs of each mode, sleeping and spinning (default: 3)"),
         OptionHelp("--rate R", "the rate to present at (default: 1)"),
         OptionHelp("--json", "print the figures as JSON")]
    }
}

extension BenchClockCommand {
    static var options: [OptionHelp] {
        [OptionHelp("--json", "print the report as JSON instead of the table"),
         OptionHelp("--out FILE", "also write the report as JSON to FILE")]
    }
}

extension ClockServeCommand {
    static var options: [OptionHelp] {
        [OptionHelp("--port P", "the UDP port to answer on (default: \(defaultPort); 0 picks a free one)"),
         OptionHelp("--bind HOST", "the address to answer on (default: 0.0.0.0, every IPv4 address)"),
         OptionHelp("--session-epoch random|NS", "where the time it hands out starts, from the monotonic clock (default: random, "
            + "so that its answers do not tell the machine's uptime)")]
    }
}
