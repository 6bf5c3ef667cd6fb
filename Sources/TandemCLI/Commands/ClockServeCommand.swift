#if canImport(Glibc)
import Glibc
#endif
import TandemClock
import TandemNet

/// `tandem clock serve`: a standalone time service on the system's monotonic clock plus a random
/// epoch (`--session-epoch`, as `tandem serve` takes it), so that its replies do not reveal uptime.
struct ClockServeCommand: Command {
    static let words = ["clock", "serve"]
    static let usage = "clock serve [--port P] [--bind HOST] [--session-epoch random|NS]"
    static let summary = "answer clock probes on UDP (default 0.0.0.0:\(defaultPort)) until interrupted"

    /// The port a time service uses unless told otherwise.
    static let defaultPort: UInt16 = 7462

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try Arguments(arguments, options: ["port", "bind", "session-epoch"])
        try options.expectPositionals(atMost: 0)
        let address = try listenAddress(options, defaultPort: defaultPort)
        let clock = try ServeCommand.sessionClock(options)
        let service: TimeService
        do {
            service = try TimeService(clock: clock, address: address)
        } catch {
            throw CLIError.cannotListen(on: address, error)
        }
        service.start()
        print("serving session time on \(service.localAddress) (CLOCK_MONOTONIC \(clock.offset == 0 ? "itself" : "plus an epoch")); interrupt to stop")
        // Whoever started us (a script, a test) may be waiting for that line through a pipe.
        fflush(nil)
        var reported = TimeServiceStatistics(answered: 0, ignored: 0)
        while true {
            try await Task.sleep(for: .seconds(10))
            let statistics = service.statistics
            if statistics != reported {
                printError("clock serve: \(statistics.answered) probes answered, \(statistics.ignored) datagrams ignored")
                reported = statistics
            }
        }
    }
}
