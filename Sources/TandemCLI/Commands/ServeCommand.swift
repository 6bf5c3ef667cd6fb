#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import TandemClock
import TandemNet

/// `tandem serve`: a standalone relay for many sessions, until SIGINT or SIGTERM.
struct ServeCommand: Command {
    static let words = ["serve"]
    static let usage = "serve [--port P] [--bind ADDR] [--session-epoch random|NS] [--stats-interval S] " + RelayLimitOptions.usage
    static let summary = "run a relay (TCP and UDP on one port, default 0.0.0.0:\(defaultPort)) until interrupted"

    /// The port a relay uses unless told otherwise: the time service's, which it also serves.
    static let defaultPort: UInt16 = ClockServeCommand.defaultPort

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try Arguments(arguments, options: RelayLimitOptions.names.union(["port", "bind", "session-epoch", "stats-interval"]))
        try options.expectPositionals(atMost: 0)
        let address = try listenAddress(options, defaultPort: defaultPort)
        let sessionClock = try sessionClock(options)
        let configuration = try RelayLimitOptions.configuration(options)
        let statsInterval = try options.double("stats-interval")
        if let statsInterval, !(statsInterval > 0) { throw CLIError.usage("--stats-interval wants seconds above 0") }
        RelayLimitOptions.keepResidentMemoryHonest()
        let server: RelayServer
        do {
            server = try RelayServer(address: address, configuration: configuration, clock: sessionClock)
        } catch {
            throw CLIError.failure("cannot serve on \(address): \(error)")
        }
        server.start()
        print("relay listening on \(server.address) (TCP and UDP); memory limit \(configuration.memoryLimit) bytes; interrupt to stop")
        // Scripts read the port from this line, often through a pipe: do not let it sit in a buffer.
        fflush(nil)
        let statisticsTimer = statsInterval.map { startStatistics(of: server, every: $0) }
        let signal = await waitForTermination()
        statisticsTimer?.cancel()
        server.stop()
        let statistics = server.statistics
        printError("serve: stopped by \(signal); \(statistics.connectionsAccepted) connections, \(statistics.framesReceived) frames, "
            + "\(statistics.datagramsRouted) datagrams routed, \(statistics.timeRequestsAnswered) time probes, \(statistics.offendersDropped) offenders dropped")
        return 0
    }

    /// The relay's session clock as `--session-epoch` names it: `random` (the default) starts it at
    /// a random reading, so that session times do not reveal the host's uptime; a number of ns is
    /// its offset from the raw monotonic clock (0: that clock itself, for benchmarks that compare
    /// session instants with presentation logs on it).
    static func sessionClock(_ options: Arguments) throws(CLIError) -> SessionEpochClock {
        let text = options.value("session-epoch") ?? "random"
        guard let clock = SessionEpochClock(argument: text) else {
            throw .usage("--session-epoch wants random or an offset in ns within ±2^60, not '\(text)'")
        }
        return clock
    }

    /// Prints `server`'s counts on one line every `seconds`, until the returned timer is cancelled.
    private static func startStatistics(of server: RelayServer, every seconds: Double) -> any DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "tandem-serve-stats"))
        let interval = DispatchTimeInterval.nanoseconds(Int(min(seconds, 86_400) * 1e9))
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler {
            print("stats: \(server.statistics.line)")
            fflush(nil)
        }
        timer.resume()
        return timer
    }

    /// Waits for SIGINT or SIGTERM and returns its name (`tandem netsim` waits the same way). The
    /// signals are ignored by default handling first, so that a dispatch source, not the default
    /// action, receives them.
    static func waitForTermination() async -> String {
        await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            let queue = DispatchQueue(label: "tandem-serve-signals")
            let resumed = Resumption(continuation)
            var sources: [any DispatchSourceSignal] = []
            for (number, name) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")] {
                Glibc.signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { resumed.resume(name) }
                sources.append(source)
            }
            // The handlers hold the resumption, which holds the sources: they live as long as the
            // process, which ends soon after the first signal.
            resumed.sources = sources
            for source in sources { source.resume() }
        }
    }
}

/// Resumes a continuation once, from whichever signal comes first, and keeps the signal sources.
private final class Resumption: @unchecked Sendable {
    // Set before the sources start, then touched only on their one serial queue.
    private var continuation: CheckedContinuation<String, Never>?
    var sources: [any DispatchSourceSignal] = []

    init(_ continuation: CheckedContinuation<String, Never>) { self.continuation = continuation }

    func resume(_ name: String) {
        continuation?.resume(returning: name)
        continuation = nil
    }
}
