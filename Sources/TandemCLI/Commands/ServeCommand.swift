#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Synchronization
import TandemBench
import TandemClock
import TandemCluster
import TandemNATS
import TandemNet

/// `tandem serve`: a standalone relay for many sessions, until SIGINT or SIGTERM.
///
/// `--cluster nats://[USER:PASS@]HOST:PORT[,HOST:PORT…]` (or `nats://TOKEN@HOST:PORT`) makes it
/// one relay of a cluster that shares sessions through NATS JetStream (`ClusterRelay`): any relay
/// of the cluster serves any session. NATS unreachable at start: exit 1 with one line. The
/// secret is masked in every message. `--cluster-credentials FILE` (one line, `USER:PASS` or a
/// token) or else the environment's `TANDEM_NATS_CREDENTIALS` gives the credentials off the
/// command line (`NATSCredentialsSource`); a secret in the URL itself is taken with a warning. `--advertise HOST` is where the other relays reach this
/// one's time service (the cluster's one session time); without it, the bound address.
/// `--cluster-load-cap N` (default 16) is how many sessions the relay replays from the log at
/// once; `--cluster-purge-delay SECONDS` (default 60) is how long after a session's end its subject is
/// purged. `--cluster-session-log SIZE` (default 256M) is the most one session's log may hold
/// (`RelayCore+ClusterLogCap.swift`: a frame over it is refused and its sender dropped), and
/// `--cluster-stream-limit SIZE` (default 8G) the most each session stream holds before NATS
/// refuses new entries, a last resort. All go with `--cluster` only.
///
/// Two hidden flags make it the relay `tandem host` starts detached (`DetachedRelay`):
/// `--idle-exit S` exits S seconds after its last session ended (or after it started, if no
/// session ever comes; connections that make no session do not count), or after the record was
/// last touched by a host about to use it, whichever is later; and `--record PATH` (`PORT` in it
/// stands for the bound port) makes a creation key (`RelayCreationKey`: only a holder creates
/// sessions here), writes it beside the record (`.key` for `.json`, 0600) and the record there
/// once listening, then sends its output to `PATH` with `.log` for `.json` (its first line went
/// to whoever started it) and removes the record and the key as it exits.
struct ServeCommand: Command {
    static let words = ["serve"]
    static let usage = "serve [--port P] [--bind HOST] [--session-epoch random|NS] [--clock-offset SECONDS] [--clock-drift-ppm PPM] "
        + "[--stats-interval SECONDS] [--priority normal|high|realtime] [--writer-threads 1|2 (\(defaultWriterThreads))] [--cluster nats://HOST:PORT[,HOST:PORT...]] "
        + "[--cluster-credentials FILE] [--advertise HOST] "
        + "[--measure-kernel [--measure-only-from HOST]] [--cluster-load-cap N (16)] [--cluster-purge-delay SECONDS (60)] [--cluster-session-log SIZE (256M)] [--cluster-compaction SIZE (16M)] [--cluster-stream-limit SIZE (8G)] "
        + RelayLimitOptions.usage
    static let summary = "run a relay (TCP and UDP on one port, default 0.0.0.0:\(defaultPort)) until interrupted"

    /// The port a relay uses unless told otherwise: the time service's, which it also serves.
    static let defaultPort: UInt16 = ClockServeCommand.defaultPort

    /// How many threads write a large broadcast unless `--writer-threads` says otherwise
    /// (`RelayFanoutWriter`). One: alternated with `tandem bench relay --delivery-only
    /// --writer-threads 1|2` on a 2-core machine under four other builds, two writers left the
    /// 199-recipient broadcast's p50 where it was (1.3–1.4 ms at realtime priority) and lowered
    /// its median p99 only within the noise (2.8–3.1 ms against 3.8–4.3 ms), though the second
    /// thread wrote more than half of the broadcasts' writes: the probe reads all 199 on one
    /// thread, which the floor (0.9–1.0 ms p50) shares.
    static let defaultWriterThreads = 1

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try Arguments(arguments, options: RelayLimitOptions.names.union(["port", "bind", "session-epoch", "stats-interval",
                                                                                       "idle-exit", "record", "clock-offset", "clock-drift-ppm", "priority",
                                                                                       "cluster", "advertise", "writer-threads", "cluster-load-cap",
                                                                                       "cluster-purge-delay", "cluster-credentials",
                                                                                       "cluster-session-log", "cluster-stream-limit", "cluster-compaction",
                                                                                       "measure-only-from"]),
                                    flags: ["measure-kernel"])
        try options.expectPositionals(atMost: 0)
        let address = try listenAddress(options, defaultPort: defaultPort)
        let sessionClock = try injectedClockError(options, on: try sessionClock(options))
        var configuration = try RelayLimitOptions.configuration(options)
        let statsInterval = try options.double("stats-interval")
        if let statsInterval, !(statsInterval > 0) { throw CLIError.usage("--stats-interval wants seconds above 0") }
        let idleExit = try options.double("idle-exit")
        if let idleExit, !(0...86_400).contains(idleExit) { throw CLIError.usage("--idle-exit wants seconds from 0 to 86400") }
        let recordPattern = options.value("record")
        // The relay of a host: strangers may join its sessions, never create their own.
        if recordPattern != nil { configuration.creationKey = RelayCreationKey.generate() }
        let priorityName = options.value("priority") ?? "normal"
        guard let priority = ThreadPriority(rawValue: priorityName) else {
            throw CLIError.usage("--priority wants normal, high (nice -10) or realtime (SCHED_RR 10), not '\(priorityName)'")
        }
        guard let writerThreads = try options.int("writer-threads", default: defaultWriterThreads), (1...2).contains(writerThreads) else {
            throw CLIError.usage("--writer-threads wants 1 or 2")
        }
        // A detached relay writes to a log, never to a pipe whose reader went away.
        if recordPattern != nil { Glibc.signal(SIGPIPE, SIG_IGN) }
        let clusterLog = HeldLines()
        let clusterURL = try options.value("cluster").map { text throws(CLIError) in
            try NATSCredentialsSource.resolve(try parseCluster(text), file: options.value("cluster-credentials"),
                                              environment: NATSCredentialsSource.inherited, warn: clusterLog.write)
        }
        if options.value("advertise") != nil, clusterURL == nil { throw CLIError.usage("--advertise goes with --cluster") }
        if options.value("cluster-credentials") != nil, clusterURL == nil { throw CLIError.usage("--cluster-credentials goes with --cluster") }
        let clusterTuning = try clusterTuning(options, clustered: clusterURL != nil)
        RelayLimitOptions.keepResidentMemoryHonest()
        // In a cluster the relay serves the cluster's session time (`ClusterSessionTime`): its own
        // clock until it follows the cluster's time authority, mapped onto the authority's after.
        let servedClock: any MonotonicDerivedClock = clusterURL == nil ? sessionClock : ClusterSessionClock(base: sessionClock)
        let server: RelayServer
        do {
            // A process that is only a relay: its resident memory beyond its start counts for
            // admission against --memory-limit (`RelayCore.footprintBytes`).
            server = try RelayServer(address: address, configuration: configuration, clock: servedClock,
                                     writerThreads: writerThreads, countsResidentMemory: true)
        } catch {
            throw CLIError.cannotListen(on: address, error)
        }
        var cluster: ClusterRelay?
        var clusterTime: ClusterSessionTime?
        if let clusterURL, let clusterClock = servedClock as? ClusterSessionClock {
            do {
                let relay = try await ClusterRelay.connect(server, to: clusterURL, purgeDelay: clusterTuning.purgeDelay,
                                                    concurrentLoads: clusterTuning.loadCap, sessionLogLimit: clusterTuning.sessionLog,
                                                    compactionThreshold: clusterTuning.compaction, streamLimit: clusterTuning.streamLimit)
                cluster = relay
                clusterTime = try await ClusterSessionTime.start(nats: relay.connection, timeService: try timeService(options, of: server, warn: clusterLog.write),
                                                                 clock: clusterClock, log: { clusterLog.write("serve: \($0)") })
            } catch {
                // The server never started: its sockets close as the process exits.
                await cluster?.stop()
                throw CLIError.failure("\(error)")
            }
        }
        let measuring = options.flags.contains("measure-kernel")
        let measuredHost = options.value("measure-only-from")
        if measuredHost != nil, !measuring { throw CLIError.usage("--measure-only-from goes with --measure-kernel") }
        if measuring { server.measureKernelTimestamps(from: measuredHost.map { [$0] }) }
        do {
            try server.start(priority: priority)
        } catch {
            await clusterTime?.stop()
            clusterLog.release()
            server.stop()
            await cluster?.stop()
            throw CLIError.failure("cannot run the relay at --priority \(priority.rawValue) (it needs CAP_SYS_NICE or root): \(error)")
        }
        // Written before the line below: whoever reads that line may look for the record at once.
        let record = try recordPattern.map { pattern throws(CLIError) in
            try writeRecord(of: server, pattern: pattern, clock: sessionClock, creationKey: configuration.creationKey ?? [])
        }
        let clustered = cluster.map { "; cluster \($0.url)" } ?? ""
        print("relay listening on \(server.address) (TCP and UDP); memory limit \(configuration.memoryLimit) bytes\(clustered); interrupt to stop")
        // Scripts read the port from this line, often through a pipe: do not let it sit in a buffer.
        fflush(nil)
        clusterLog.release()
        if sessionClock.driftPPM != 0 || options.value("clock-offset") != nil {
            printError("serve: the session clock runs with an injected error: --clock-offset \(options.value("clock-offset") ?? "0") s, "
                + "--clock-drift-ppm \(sessionClock.driftPPM) (a benchmarking aid)")
        }
        if let record { redirectOutput(beside: record) }
        let statisticsTimer = statsInterval.map { startStatistics(of: server, every: $0) }
        if measuring { answerStampRequests(of: server) }
        let signal = await waitForTermination(idleExit: idleExit.map { ($0, server, record) })
        statisticsTimer?.cancel()
        // Removed first: a host that looks now starts a relay of its own rather than use this one.
        if let record, DetachedRelay.readRecord(at: record)?.pid == getpid() {
            unlink(record)
            unlink(DetachedRelay.keyPath(forRecord: record))
        }
        // Goodbye first: the other relays choose a time authority again at once.
        await clusterTime?.stop()
        server.stop()
        await cluster?.stop()
        let statistics = server.statistics
        printError("serve: stopped by \(signal); \(statistics.connectionsAccepted) connections, \(statistics.framesReceived) frames, "
            + "\(statistics.datagramsRouted) datagrams routed, \(statistics.timeRequestsAnswered) time probes, \(statistics.offendersDropped) offenders dropped")
        return 0
    }

    /// The measuring mode's answers (`RelayServeStamps`): each `stamps` line on standard input is
    /// answered on standard output, from a thread of its own, until standard input closes.
    static func answerStampRequests(of server: RelayServer) {
        let thread = server.loopThreadID()
        Thread.detachNewThread {
            while let line = readLine() {
                guard line == RelayServeStamps.command else { continue }
                print(RelayServeStamps.answer(server: server, thread: thread) ?? "\(RelayServeStamps.prefix){}")
                fflush(nil)
            }
        }
    }

    /// Where the other relays of the cluster reach this relay's time service: `--advertise HOST`
    /// at the bound port, else the bound address (a wildcard bind announced as loopback, which
    /// serves relays on this host only: said once on standard error).
    static func timeService(_ options: Arguments, of server: RelayServer, warn: (String) -> Void) throws -> SocketAddress {
        if let host = options.value("advertise") {
            do {
                return try SocketAddress(host: host, port: server.address.port)
            } catch {
                throw CLIError.usage("--advertise wants the host other relays reach this one at: \(error)")
            }
        }
        if ["0.0.0.0", "::"].contains(server.address.host) {
            warn("serve: the cluster reaches this relay's time service at loopback; relays on other hosts need --advertise HOST")
        }
        return server.address
    }

    /// The most `--cluster-load-cap` takes: a relay replaying more logs at once gains nothing.
    static let maximumClusterLoadCap = 4096
    /// The longest `--cluster-purge-delay` takes (a day).
    static let maximumClusterPurgeDelay: Double = 86_400

    /// `--cluster-load-cap N` (sessions replaying their logs at once, 1…4096, default 16),
    /// `--cluster-purge-delay SECONDS` (seconds from a session's end to its subject's purge, 0…86400,
    /// default 60), `--cluster-session-log SIZE` (at least 1M, default 256M),
    /// `--cluster-compaction SIZE` (entries after a session's last snapshot that make a relay
    /// compact it, at least 64K; default 16M or a quarter of the session log's cap when smaller)
    /// and `--cluster-stream-limit SIZE` (at least 16M, default 8G), refused without `--cluster`.
    static func clusterTuning(_ options: Arguments, clustered: Bool) throws(CLIError)
        -> (loadCap: Int, purgeDelay: Duration, sessionLog: Int, streamLimit: Int, compaction: Int?) {
        for name in ["cluster-load-cap", "cluster-purge-delay", "cluster-session-log", "cluster-stream-limit", "cluster-compaction"]
        where options.value(name) != nil && !clustered {
            throw .usage("--\(name) goes with --cluster")
        }
        let loadCap = try options.int("cluster-load-cap", default: 16)!
        guard (1...maximumClusterLoadCap).contains(loadCap) else {
            throw .usage("--cluster-load-cap wants sessions from 1 to \(maximumClusterLoadCap), not \(loadCap)")
        }
        let delay = try options.double("cluster-purge-delay", default: 60)!
        guard (0...maximumClusterPurgeDelay).contains(delay) else {
            throw .usage("--cluster-purge-delay wants seconds from 0 to \(Int(maximumClusterPurgeDelay))")
        }
        func size(_ name: String, default value: Int, atLeast minimum: Int, _ least: String) throws(CLIError) -> Int {
            guard let text = options.value(name) else { return value }
            guard let bytes = RelayLimitOptions.parseSize(text), bytes >= minimum else {
                throw .usage("--\(name) wants a size of at least \(least), such as 256M or 1G, not '\(text)'")
            }
            return bytes
        }
        let sessionLog = try size("cluster-session-log", default: RelayCore.defaultClusterSessionLogLimit, atLeast: 1 << 20, "1M")
        let streamLimit = try size("cluster-stream-limit", default: ClusterRelay.defaultStreamLimit, atLeast: 16 << 20, "16M")
        let compaction = options.value("cluster-compaction") == nil ? nil : try size("cluster-compaction", default: 0, atLeast: 64 << 10, "64K")
        return (loadCap, .nanoseconds(Int64((delay * 1e9).rounded())), sessionLog, streamLimit, compaction)
    }

    /// `--cluster`'s URL; the error never repeats what was given, which may hold a secret.
    static func parseCluster(_ text: String) throws(CLIError) -> NATSURL {
        do {
            return try NATSURL(parsing: text)
        } catch {
            throw .usage("--cluster wants nats://HOST:PORT[,HOST:PORT...] (credentials: --cluster-credentials FILE)")
        }
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

    /// `clock` with the error `--clock-offset S` (seconds, within ±86400) and `--clock-drift-ppm
    /// PPM` (within ±1000) inject, a benchmarking aid as participants' flags of the same names
    /// are: the relay's time service and the instants it stamps then run off by that much. A
    /// detached relay's record carries only an offset, so a drift is refused with `--record`.
    static func injectedClockError(_ options: Arguments, on clock: SessionEpochClock) throws(CLIError) -> SessionEpochClock {
        let offset = try options.double("clock-offset", default: 0)!
        let drift = try options.double("clock-drift-ppm", default: 0)!
        let maximumSeconds = Double(SessionEpochClock.maximumInjectedOffset) / 1e9
        guard offset.isFinite, abs(offset) <= maximumSeconds else {
            throw .usage("--clock-offset wants seconds within ±\(Int(maximumSeconds))")
        }
        guard drift.isFinite, abs(drift) <= SessionEpochClock.maximumInjectedDrift else {
            throw .usage("--clock-drift-ppm wants parts per million within ±\(Int(SessionEpochClock.maximumInjectedDrift))")
        }
        if drift != 0, options.value("record") != nil { throw .usage("--clock-drift-ppm does not go with --record") }
        guard offset != 0 || drift != 0 else { return clock }
        guard let skewed = clock.injecting(offset: Int64((offset * 1e9).rounded()), driftPPM: drift) else {
            throw .usage("--clock-offset or --clock-drift-ppm is out of range")
        }
        return skewed
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

    /// Writes the creation key and then the record of a detached relay (`pattern` with `PORT`
    /// replaced by the bound port), so that a host that finds the record finds the key; returns
    /// the record's path.
    private static func writeRecord(of server: RelayServer, pattern: String, clock: SessionEpochClock,
                                    creationKey: [UInt8]) throws(CLIError) -> String {
        let path = pattern.replacingOccurrences(of: "PORT", with: String(server.port))
        do {
            try DetachedRelay.write(Data(creationKey), at: DetachedRelay.keyPath(forRecord: path))
            try DetachedRelay.write(DetachedRelay.Record(pid: getpid(), port: server.port, epoch: clock.offset), at: path)
        } catch {
            server.stop()
            throw .failure("cannot write the relay's record \(path): \(error)")
        }
        return path
    }

    /// Sends standard output and error to the log beside the record at `path` (`.log` for
    /// `.json`), or to /dev/null if it cannot be opened: whoever read the first line is gone.
    private static func redirectOutput(beside path: String) {
        let log = path.hasSuffix(".json") ? String(path.dropLast(5)) + ".log" : path + ".log"
        let descriptor = open(log, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        if descriptor >= 0 {
            dup2(descriptor, 1)
            dup2(descriptor, 2)
            close(descriptor)
        } else {
            let null = open("/dev/null", O_WRONLY)
            dup2(null, 1)
            dup2(null, 2)
            close(null)
        }
    }

    /// Waits for SIGINT or SIGTERM and returns its name (`tandem netsim` waits the same way). The
    /// signals are ignored by default handling first, so that a dispatch source, not the default
    /// action, receives them. With `idleExit`, also returns once the server has held no session
    /// for that many seconds, counted from the later of the last session's end and the last
    /// change of the record's modification time (a host touches it as it picks this relay), or,
    /// once `SIGUSR1` came (the host that started it failed), as soon as it holds no session.
    /// Connections count for nothing: a stranger who keeps connecting keeps no relay alive.
    static func waitForTermination(idleExit: (seconds: Double, server: RelayServer, record: String?)? = nil) async -> String {
        await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            let resumed = Resumption(continuation, idleSince: DispatchTime.now().uptimeNanoseconds)
            let check: (@Sendable () -> String?)? = idleExit.map { seconds, server, record in
                { @Sendable in
                    // A session, or a host that touched the record as it picked this relay (it
                    // starts a session here next), restarts the count.
                    let touched = record.flatMap(DetachedRelay.modificationTime(of:))
                    return resumed.idle(now: DispatchTime.now().uptimeNanoseconds, sessions: server.statistics.sessions,
                                        recordTouched: touched, limit: UInt64(seconds * 1e9)).map { "--idle-exit (\($0))" }
                }
            }
            resumed.listen(signals: [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")], idleCheck: check)
        }
    }
}

/// Resumes a continuation once, from whichever signal (or the idle-exit check) comes first, and
/// keeps the signal sources and the idle count. Its state sits behind a lock: the handlers run on
/// one serial queue, but the sources are handed over from the caller's thread.
private final class Resumption: Sendable {
    private struct State {
        var continuation: CheckedContinuation<String, Never>?
        var sources: [any DispatchSourceSignal] = []
        /// The idle-exit check, if any.
        var timer: (any DispatchSourceTimer)?
        /// Since when (uptime ns) the relay has held no session, for the idle-exit check.
        var idleSince: UInt64
        /// The record's modification time (ns since the epoch) at the last idle-exit check.
        var recordTouched: Int64?
        /// The host that started the relay failed (`SIGUSR1`): exit once no session is held,
        /// without the linger, unless another host touches the record first.
        var lingerWaived = false
        /// Whether a check has read the record's modification time yet.
        var checked = false
    }

    private let state: Mutex<State>

    init(_ continuation: CheckedContinuation<String, Never>, idleSince: UInt64) {
        state = Mutex(State(continuation: continuation, idleSince: idleSince))
    }

    /// Starts listening, on one serial queue, for `signals` (ignored by default handling first,
    /// so that a dispatch source, not the default action, receives them) and, every 250 ms, for
    /// `idleCheck` to name a reason. The sources are kept for as long as the resumption lives:
    /// their handlers hold the resumption, so both live as long as the process, which ends soon
    /// after the first signal.
    /// With `idleCheck`, `SIGUSR1` waives the linger (`waiveLinger()`).
    func listen(signals: [(Int32, String)], idleCheck: (@Sendable () -> String?)?) {
        let queue = DispatchQueue(label: "tandem-serve-signals")
        state.withLock { state in
            if let idleCheck {
                let timer = DispatchSource.makeTimerSource(queue: queue)
                timer.schedule(deadline: .now() + .milliseconds(250), repeating: .milliseconds(250))
                timer.setEventHandler { [self] in if let reason = idleCheck() { resume(reason) } }
                state.timer = timer
                timer.resume()
                Glibc.signal(SIGUSR1, SIG_IGN)
                let release = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: queue)
                release.setEventHandler { [self] in waiveLinger() }
                state.sources.append(release)
                release.resume()
            }
            for (number, name) in signals {
                Glibc.signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { [self] in resume(name) }
                state.sources.append(source)
                source.resume()
            }
        }
    }

    /// Counts an idle-exit check at `now` (uptime ns): why the relay exits (it has held no
    /// session, and the record has not been touched, for `limit` ns; or it holds none and the
    /// linger was waived), nil while it stays.
    func idle(now: UInt64, sessions: Int, recordTouched: Int64?, limit: UInt64) -> String? {
        state.withLock { state in
            // A host that touched the record since the first check picked this relay: it lingers
            // for that host again.
            if state.checked, recordTouched != state.recordTouched { state.lingerWaived = false }
            state.checked = true
            if sessions > 0 || recordTouched != state.recordTouched { state.idleSince = now }
            state.recordTouched = recordTouched
            if now - state.idleSince >= limit { return "no session for \(Double(limit) / 1e9) s" }
            return state.lingerWaived && sessions == 0 ? "no session, and the host that started it failed" : nil
        }
    }

    /// From now on the idle-exit check exits once no session is held, without the linger.
    func waiveLinger() { state.withLock { $0.lingerWaived = true } }

    func resume(_ name: String) {
        let continuation = state.withLock { state in
            defer { state.continuation = nil }
            state.timer?.cancel()
            return state.continuation
        }
        continuation?.resume(returning: name)
    }
}

/// Lines held back until `release()`, then written to standard error as they come: what the
/// cluster's time says while the relay starts follows the line that says where it listens,
/// which whoever started the relay reads first.
private final class HeldLines: Sendable {
    private let held = Mutex<[String]?>([])

    /// Holds `line` until `release()`, or writes it now if that was called.
    func write(_ line: String) {
        let written = held.withLock { lines -> Bool in
            guard lines != nil else { return true }
            lines!.append(line)
            return false
        }
        if written { printError(line) }
    }

    /// Writes the held lines, then lets later ones through at once.
    func release() {
        let lines = held.withLock { lines -> [String] in
            defer { lines = nil }
            return lines ?? []
        }
        lines.forEach { printError($0) }
    }
}
