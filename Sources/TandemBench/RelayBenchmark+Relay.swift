import Foundation
import TandemNet
import TandemHarness

/// The relay a `RelayBenchmark` measures: `tandem serve` as its own process, or a
/// `RelayServer` in this process. Either way the caps meant for the open internet that would
/// refuse the benchmark's own load are raised, and only those: every participant connects from
/// 127.0.0.1 (the caps per source address), the flood limit and the outbox are lifted (the
/// benchmark measures the relay, not its flood control), and so is the session fan-out budget
/// (the throughput phase sends as fast as it can).
struct RelayBenchmarkRelay {
    /// The relay's port on 127.0.0.1.
    let port: UInt16
    /// The relay, when it runs in this process.
    let server: RelayServer?
    /// The kernel id of the relay's loop thread, when it runs in this process.
    let loopThread: Int32?
    /// The processor the relay's loop thread is pinned to, when it is.
    let cpu: Int?
    private let process: WatchProcess?

    /// The arguments the relay process gets after `serve`.
    static let serveArguments = [
        "--bind", "127.0.0.1", "--port", "0",
        "--max-sessions-per-address", "1000000", "--max-connections-per-address", "1000000",
        "--fanout-deliveries", "1000000000", "--fanout-bytes", "1024G",
        "--proofs-per-source", "1000000", "--proofs-per-second", "1000000", "--max-unauthenticated-per-source", "1000000",
        "--fanout-deliveries-per-source", "1000000000", "--fanout-bytes-per-source", "1024G",
    ]

    /// Starts the relay: `executable serve` when given, else in this process.
    /// With `writerThreads`, the relay writes large broadcasts with that many threads
    /// (`tandem serve --writer-threads`); nil leaves the relay's default (and runs a build that
    /// has no such flag).
    /// In this process, `measuring` turns the relay's measuring mode on
    /// (`RelayServer.measureKernelTimestamps()`) and `cpu` pins its loop thread to that processor.
    init(executable: String?, priority: ThreadPriority, writerThreads: Int? = nil, measuring: Bool = false, cpu: Int? = nil,
         progress: @Sendable (String) -> Void) throws {
        guard let executable else {
            var configuration = RelayCoreConfiguration()
            configuration.floodRate = 10_000_000
            configuration.floodBurst = 10_000_000
            configuration.maximumOutboxFrames = 1_000_000
            configuration.maximumSessionsPerAddress = 1_000_000
            configuration.maximumConnectionsPerAddress = 1_000_000
            configuration.fanoutDeliveriesPerSecond = 1e9
            configuration.fanoutBytesPerSecond = 1e12
            configuration.proofsPerSecondPerSource = 1e9
            configuration.proofBurstPerSource = 1e9
            configuration.proofsPerSecond = 1e9
            configuration.maximumUnadmittedPerSource = 1_000_000
            configuration.fanoutDeliveriesPerSecondPerSource = 1e12
            configuration.fanoutBytesPerSecondPerSource = 1e15
            let server = try RelayServer(address: try SocketAddress(host: "127.0.0.1", port: 0), configuration: configuration,
                                         writerThreads: writerThreads ?? 1)
            if measuring { server.measureKernelTimestamps() }
            do {
                try server.start(priority: priority)
            } catch {
                server.stop()
                throw RelayBenchmarkError("cannot run the relay at priority \(priority.rawValue): \(error)")
            }
            let thread = server.loopThreadID()
            if let cpu {
                guard let thread else {
                    server.stop()
                    throw RelayBenchmarkError("the relay's loop did not answer")
                }
                do {
                    try SocketTimestamping.pin(task: thread, toCPU: cpu)
                } catch {
                    server.stop()
                    throw RelayBenchmarkError("cannot pin the relay's loop to processor \(cpu): \(error)")
                }
            }
            self.server = server
            process = nil
            port = server.port
            loopThread = thread
            self.cpu = cpu
            return
        }
        let arguments = ["serve"] + Self.serveArguments + (priority == .normal ? [] : ["--priority", priority.rawValue])
            + (writerThreads.map { ["--writer-threads", String($0)] } ?? [])
        progress("starting the relay: \(executable) \(arguments.joined(separator: " "))")
        let relay = try WatchProcess(executable: executable, arguments: arguments,
                                     name: "relay", acceptsCommands: false)
        guard let line = relay.waitForLine(startingWith: "relay listening on", timeout: 20),
              let text = line.split(separator: " ").first(where: { $0.hasPrefix("127.0.0.1:") }),
              let port = try? SocketAddress(parsing: String(text)).port else {
            relay.kill()
            throw RelayBenchmarkError("the relay printed no address: \(relay.standardError)")
        }
        self.port = port
        process = relay
        server = nil
        loopThread = nil
        self.cpu = nil
    }

    /// The relay process's CPU seconds so far (user and system); nil when it runs in this process.
    var cpuSeconds: Double? { process.map { RelayProcessMemory(pid: $0.processIdentifier).cpuSeconds } }

    /// Stops the relay (the process is killed).
    func stop() {
        server?.stop()
        process?.kill()
    }
}
