extension RelayLimitOptions {
    /// The limits, explained with their defaults.
    static let help: [OptionHelp] = [
        OptionHelp("--memory-limit SIZE", "memory the relay's sessions may hold in all (default: 512M)"),
        OptionHelp("--max-sessions-per-address N", "sessions one address may create (default: 64)"),
        OptionHelp("--max-connections-per-address N", "connections one address may hold (default: 256)"),
        OptionHelp("--max-unauthenticated N", "connections not yet admitted, over the relay (default: 1024)"),
        OptionHelp("--max-unauthenticated-per-source N", "connections not yet admitted, per address (an IPv6 /64) (default: 32)"),
        OptionHelp("--hello-timeout SECONDS", "close a connection that has not said hello within this time (default: 2)"),
        OptionHelp("--unauthenticated-buffer SIZE", "what a connection not yet admitted may send (default: 128K)"),
        OptionHelp("--max-output-queue SIZE", "what may wait for one slow reader before it is dropped (default: 80M)"),
        OptionHelp("--max-attachments N", "attachments one session may hold (default: 1000)"),
        OptionHelp("--fanout-deliveries N/s", "copies one session may send a second (default: 200000)"),
        OptionHelp("--fanout-bytes SIZE/s", "bytes one session may send a second (default: 64M)"),
        OptionHelp("--fanout-deliveries-per-source N/s", "copies one address's sessions may send a second (default: 400000)"),
        OptionHelp("--fanout-bytes-per-source SIZE/s", "bytes one address's sessions may send a second (default: 128M)"),
        OptionHelp("--proofs-per-source N/s", "admission proofs checked a second per address, twice that as a burst (default: 100)"),
        OptionHelp("--proofs-per-second N/s", "admission proofs checked a second over the relay, twice that as a burst (default: 2000)"),
    ]
}

extension ServeCommand {
    static var options: [OptionHelp] {
        [OptionHelp("--port P", "the port, TCP and UDP (default: \(defaultPort); 0 picks a free one)"),
         OptionHelp("--bind HOST", "the address to listen on (default: 0.0.0.0; :: for IPv6 too)"),
         OptionHelp("--advertise HOST", "the address other relays of a cluster reach this one at"),
         OptionHelp("--session-epoch random|NS", "where the sessions' clock starts (default: random)"),
         OptionHelp("--stats-interval SECONDS", "print the relay's counts every so many seconds (default: never)"),
         OptionHelp("--priority normal|high|realtime", "the relay thread's scheduling priority (default: normal; the others need privilege)"),
         OptionHelp("--writer-threads 1|2", "threads that write a large broadcast (default: \(defaultWriterThreads))"),
         OptionHelp("--cluster nats://HOST:PORT[,…]", "share sessions with other relays through NATS JetStream"),
         OptionHelp("--cluster-credentials FILE", "the NATS user:password or token, read from FILE (or the environment "
            + "variable TANDEM_NATS_CREDENTIALS), never from the command line"),
         OptionHelp("--cluster-load-cap N", "sessions loaded from the cluster's log at once (default: 16)"),
         OptionHelp("--cluster-purge-delay SECONDS", "how long an ended session stays in the log (default: 60)"),
         OptionHelp("--cluster-session-log SIZE", "what one session may hold in the cluster's log (default: 256M)"),
         OptionHelp("--cluster-compaction SIZE", "entries after a session's last snapshot in the log that make a relay "
            + "write a new snapshot and purge what it covers (default: 16M, or a quarter of --cluster-session-log when smaller)"),
         OptionHelp("--cluster-stream-limit SIZE", "what the cluster's log may hold in all (default: 8G)"),
         OptionHelp("--measure-kernel", "benchmarking: stamp every delivery by the kernel's clocks and answer each "
            + "'stamps' line on standard input with what the relay forwarded since the last (default: off)"),
         OptionHelp("--measure-only-from HOST", "with --measure-kernel: stamp only the connections from HOST (default: all)"),
         OptionHelp("--clock-offset SECONDS", "benchmarking: run the sessions' clock that many seconds off (default: 0)"),
         OptionHelp("--clock-drift-ppm PPM", "benchmarking: make the sessions' clock drift by PPM parts per million (default: 0)")]
            + RelayLimitOptions.help
    }
}

extension NetsimCommand {
    static var options: [OptionHelp] {
        [OptionHelp("--listen HOST:PORT", "where to accept TCP connections and UDP datagrams"),
         OptionHelp("--to HOST:PORT", "where to pass them on"),
         OptionHelp("--delay MS", "delay each way (default: 0)"),
         OptionHelp("--jitter MS", "the delay varies by up to ± MS each way (default: 0)"),
         OptionHelp("--asymmetry MS", "more delay on the way back (default: 0)"),
         OptionHelp("--loss P", "the share of UDP datagrams lost, 0 to 1 (default: 0)"),
         OptionHelp("--reorder P", "the share of UDP datagrams reordered, 0 to 1 (default: 0)"),
         OptionHelp("--seed N", "the random seed, to repeat a run")]
    }
}

extension ClockSyncCommand {
    static var options: [OptionHelp] {
        [OptionHelp("HOST:PORT", "the time service (a relay, or tandem clock serve)"),
         OptionHelp("--duration SECONDS", "how long to probe (default: 10)"),
         OptionHelp("--json", "print the estimate as JSON"),
         OptionHelp("--measure-kernel", "benchmarking: stamp every delivery by the kernel's clocks and answer each "
            + "'stamps' line on standard input with what the relay forwarded since the last (default: off)"),
         OptionHelp("--measure-only-from HOST", "with --measure-kernel: stamp only the connections from HOST (default: all)"),
         OptionHelp("--clock-offset SECONDS", "benchmarking: run this clock that far off (default: 0)"),
         OptionHelp("--clock-drift-ppm PPM", "benchmarking: make this clock drift (default: 0)")]
    }
}
