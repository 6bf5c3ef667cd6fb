import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TandemClock
import TandemNet
import TandemHarness

/// `tandem bench relay --adversarial`: the relay as its own `tandem serve` process, one session of
/// honest participants in this process, and the attackers in a third process
/// (`tandem bench relay --attack PORT`, raw sockets) at the rates a `RelayAttackPlan` states. The same honest load runs quiet, then under attack, in
/// one sitting against one relay process, whose memory is read from `/proc` throughout.
public struct RelayAdversarialBenchmark: Sendable {
    /// The `tandem` executable to run as the attackers (and as the relay, unless `relayExecutable`).
    public var executable: String
    /// Another build's `tandem` to run as the relay, under the same attackers: A/B in one sitting.
    public var relayExecutable: String?
    /// Honest participants in one session.
    public var participants = 200
    /// Reliable broadcasts from one of them in each run.
    public var broadcasts = 100
    /// The pause between broadcasts.
    public var broadcastInterval: Duration = .milliseconds(10)
    /// What the attackers do.
    public var plan = RelayAttackPlan()
    /// How long the attack runs before the honest load starts under it, so that it is at full
    /// strength (memory already held, floods flowing).
    public var rampUp: Duration = .seconds(3)
    /// The relay-wide memory budget the issue sets (`--memory-limit`, default 512M).
    public var memoryBudget = 512 * 1024 * 1024
    /// Whether each kind of attack also runs alone, before all of them together.
    public var eachAttack = false
    /// How the relay's loop thread is scheduled (`tandem serve --priority`); the honest links and
    /// the attackers keep the default.
    public var priority = ThreadPriority.normal
    /// The sizes of the honest uploads whose relay CPU is measured, after the attacks.
    public var uploadSizes = [10 << 20, 50 << 20, 100 << 20]
    /// The share of one processor the attackers' process may use, enforced by a CPU cgroup the
    /// benchmark creates and removes (`RelayAttackerBudget`); nil leaves them uncapped.
    public var attackerCPUShare: Double? = 0.5
    /// Whether the relay runs in its measuring mode (`tandem serve --measure-kernel`), so that
    /// each run reports what the relay forwarded by the kernel's clocks: arrival to each send of
    /// the honest records, those that arrive from 127.0.0.1 (`--measure-only-from`), copied to
    /// the honest participants (`RelayServeStamps`). A relay build without the mode is run
    /// without it.
    public var measuresKernelTimestamps = false

    /// A benchmark running `executable serve` as its relay.
    public init(executable: String) { self.executable = executable }

    /// Runs the quiet and the attacked run; `progress` hears what is happening.
    public func run(progress: @Sendable (String) -> Void) async throws -> RelayAdversarialReport {
        let priorityArguments = priority == .normal ? [] : ["--priority", priority.rawValue]
        progress("starting the relay: \(relayExecutable ?? executable) serve --bind 127.0.0.1 --port 0 \(priorityArguments.joined(separator: " "))")
        // The honest participants connect from 127.0.0.1 and the attackers from sources of their
        // own (127.0.0.2 to 127.0.0.6): the caps per source are raised so that the 200 honest
        // joins in a row and the attackers measure the other defences (the fair shares between
        // sources, and every other limit, keep their defaults); a real attacker from one address
        // would meet those caps first.
        let relayPath = relayExecutable ?? executable
        // A build from before the per-source caps (run with `--relay-executable`) has no such flags.
        let serveHelp = RelayAdversarialBenchmark.serveHelp(relayPath)
        let perSource = serveHelp.contains("--proofs-per-source")
            ? ["--proofs-per-source", "1000000", "--max-unauthenticated-per-source", "1000"] : []
        let measuring = measuresKernelTimestamps && serveHelp.contains("--measure-kernel")
        if measuresKernelTimestamps && !measuring { progress("the relay build has no --measure-kernel: its kernel timestamps are not taken") }
        let relay = try WatchProcess(executable: relayPath,
                                     arguments: ["serve", "--bind", "127.0.0.1", "--port", "0",
                                                 "--max-sessions-per-address", "1000000", "--max-connections-per-address", "1000000"]
                                         + perSource + priorityArguments + (measuring ? ["--measure-kernel", "--measure-only-from", "127.0.0.1"] : []),
                                     name: "relay", acceptsCommands: measuring)
        defer { relay.kill() }
        guard let line = relay.waitForLine(startingWith: "relay listening on", timeout: 20),
              let text = line.split(separator: " ").first(where: { $0.hasPrefix("127.0.0.1:") }),
              let port = try? SocketAddress(parsing: String(text)).port else {
            throw RelayBenchmarkError("the relay printed no address: \(relay.standardError)")
        }
        let memory = RelayProcessMemory(pid: relay.processIdentifier)
        let stamped = measuring ? relay : nil
        let connector = NetworkRelayConnector(host: "127.0.0.1", port: port)
        let recorder = RelayDeliveryRecorder(clock: SystemClock())
        let helper = RelayBenchmark()

        progress("joining \(participants) honest participants to one session")
        let session = UUID()
        var links: [any RelayLink] = []
        for index in 0..<participants {
            let link = try await connector.join(helper.request(session, "p\(index)", create: index == 0))
            recorder.follow(link)
            links.append(link)
        }
        try await Task.sleep(for: .milliseconds(300))

        progress("quiet: \(broadcasts) reliable broadcasts")
        var phase: UInt8 = 10
        var runs = [try await measure("quiet", plan: nil, links: links, phase: phase, port: port, memory: memory,
                                      stamped: stamped, recorder: recorder, progress: progress)]
        // The never-reading and memory attacks last of the single ones: what they make the relay
        // hold may stay resident after them, and would cloud the memory of the runs after them.
        let singles: [RelayAttackPlan.Kind] = [.partialFrames, .datagrams, .idleSockets, .fanOut, .neverReading, .memoryHog]
        let kinds: [RelayAttackPlan.Kind?] = (eachAttack ? singles : []) + [nil]
        for kind in kinds {
            phase += 1
            let name = kind?.rawValue ?? "all"
            let attack = kind.map { plan.only($0) } ?? plan
            progress("attack \(name): \(attack.connections) attacking connections for \(rampUp) before the honest load, then \(broadcasts) broadcasts")
            runs.append(try await measure(name, plan: attack, kind: kind, links: links, phase: phase, port: port, memory: memory,
                                          stamped: stamped, recorder: recorder, progress: progress))
        }
        // The machine is shared and noisy: the quiet load again, after every attack, shows how
        // far the quiet figure itself moves within one sitting.
        phase += 1
        progress("quiet again: \(broadcasts) reliable broadcasts")
        runs.append(try await measure("quiet, after", plan: nil, links: links, phase: phase, port: port, memory: memory,
                                      stamped: stamped, recorder: recorder, progress: progress))
        progress("uploads of \(uploadSizes.map { "\($0 >> 20) MiB" }.joined(separator: ", ")), one at a time")
        let uploads = await uploadCosts(uploadSizes, link: links[0], memory: memory)
        progress("leaving")
        await withTaskGroup(of: Void.self) { group in
            for link in links { group.addTask { await link.leave() } }
        }
        return RelayAdversarialReport(participants: participants, broadcasts: broadcasts, plan: plan, runs: runs,
                                      relayAliveAfterAttack: memory.isAlive, memoryBudget: memoryBudget, uploads: uploads)
    }

    /// One run of the honest load, under `plan`'s attack when there is one; `stamped` is the
    /// relay when it runs in its measuring mode.
    private func measure(_ name: String, plan: RelayAttackPlan?, kind: RelayAttackPlan.Kind? = nil, links: [any RelayLink],
                         phase: UInt8, port: UInt16,
                         memory: RelayProcessMemory, stamped: WatchProcess?, recorder: RelayDeliveryRecorder,
                         progress: @Sendable (String) -> Void) async throws -> RelayAdversarialReport.Run {
        let before = memory.resident
        var attackers: WatchProcess?
        var budget: RelayAttackerBudget?
        var capped: String?
        if plan != nil {
            // Long enough for the ramp, the broadcasts and their stragglers, and no longer.
            let limit = rampUp + broadcastInterval * broadcasts + .seconds(70)
            let process = try WatchProcess(executable: executable, arguments: [
                "bench", "relay", "--attack", "\(port)", "--attack-kind", kind?.rawValue ?? "all",
                "--attack-seconds", "\(limit.components.seconds)",
            ], name: "attackers", acceptsCommands: true)
            guard process.waitForLine(startingWith: RelayAttackerProcess.readyLine, timeout: 20) != nil else {
                process.kill()
                throw RelayBenchmarkError("the attackers did not start: \(process.standardError)")
            }
            attackers = process
            if let share = attackerCPUShare {
                do {
                    let group = try RelayAttackerBudget(name: "tandem-attackers-\(getpid())-\(phase)", share: share)
                    budget = group
                    try group.admit(process: process.processIdentifier)
                    capped = "\(share) of one processor (cgroup v1 cpu, \(group.path))"
                } catch {
                    capped = "not capped: \(error)"
                    progress("attackers \(capped ?? "")")
                }
            }
        }
        // The relay's peak memory, sampled by a child task until the run has what it measures.
        let sampling = SamplingStop()
        async let sampledPeak = Self.peakResident(of: memory, until: sampling)
        if plan != nil { try await Task.sleep(for: rampUp) }
        let relayCPUBefore = memory.threadCPUSeconds
        let attackersCPUBefore = attackers.map { RelayProcessMemory(pid: $0.processIdentifier).threadCPUSeconds }
        let stampsBefore = stamped.flatMap(Self.stampReading)
        let latency = try await broadcast(from: links[0], phase: phase, recorder: recorder)
        let relayCPU = memory.threadCPUSeconds - relayCPUBefore
        var kernel = stamped.flatMap(Self.stampReading).flatMap { after in
            stampsBefore.map { RelayServeStamps.window(from: $0, to: after, delivered: recorder.count(phase)) }
        }
        kernel?.clients = latency
        let attackersCPU = attackers.flatMap { process in
            attackersCPUBefore.map { RelayProcessMemory(pid: process.processIdentifier).threadCPUSeconds - $0 }
        }
        let resident = memory.resident
        let alive = memory.isAlive
        let refused = await admissions(port: port)
        var counts: RelayAttackCounts?
        if let attackers {
            attackers.send("stop")
            if let line = attackers.waitForLine(startingWith: RelayAttackerProcess.countsPrefix, timeout: 30) {
                counts = try? JSONDecoder().decode(RelayAttackCounts.self, from: Data(line.dropFirst(RelayAttackerProcess.countsPrefix.count).utf8))
            }
            _ = attackers.waitForExit(timeout: 10)
            attackers.kill()
        }
        let throttled = budget?.throttling.throttled
        if let budget {
            do {
                try budget.remove()
            } catch {
                progress("\(error)")
            }
        }
        sampling.stop()
        let sampled = max(await sampledPeak, resident)
        // Let the relay drop the attackers' connections and sessions before the next run.
        if plan != nil { try await Task.sleep(for: .seconds(1)) }
        return RelayAdversarialReport.Run(
            name: name, plan: plan, expected: broadcasts * (participants - 1), delivered: recorder.count(phase), latency: latency,
            relayResidentBefore: before, relayResident: resident, relayPeakDuring: sampled, relayPeakSoFar: memory.peak,
            relayAlive: alive, attack: counts, admissionsTried: 2 * admissionAttempts, admissionsRefused: refused,
            relayCPUSeconds: relayCPU, attackersCPUSeconds: attackersCPU, attackersCapped: capped, attackersThrottledPeriods: throttled,
            relayKernel: kernel)
    }

    /// A reading of the relay in its measuring mode (`RelayServeStamps`), asked for on its
    /// standard input; nil when none comes within 5 s.
    private static func stampReading(_ relay: WatchProcess) -> RelayServeStamps.Reading? {
        let answered = { relay.lines.filter { $0.hasPrefix(RelayServeStamps.prefix) } }
        let before = answered().count
        guard relay.send(RelayServeStamps.command) != nil else { return nil }
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            let answers = answered()
            if answers.count > before { return RelayServeStamps.reading(answers[before]) }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return nil
    }

    /// What `executable serve --help` prints (empty when it cannot run): which flags it takes.
    static func serveHelp(_ executable: String) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["serve", "--help"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        guard (try? process.run()) != nil else { return "" }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// How many honest sessions each run creates and joins while the attack still runs.
    private var admissionAttempts: Int { 10 }

    /// Creates and joins `admissionAttempts` sessions, as honest people do; how many of those
    /// creates and joins the relay refused.
    private func admissions(port: UInt16) async -> Int {
        let connector = NetworkRelayConnector(host: "127.0.0.1", port: port)
        let helper = RelayBenchmark()
        var refused = 0
        for index in 0..<admissionAttempts {
            let session = UUID()
            guard let host = try? await connector.join(helper.request(session, "admission host \(index)", create: true)) else {
                refused += 2
                continue
            }
            if let guest = try? await connector.join(helper.request(session, "admission guest \(index)", create: false)) {
                await guest.leave()
            } else {
                refused += 1
            }
            await host.leave()
        }
        return refused
    }

    private func broadcast(from sender: any RelayLink, phase: UInt8, recorder: RelayDeliveryRecorder) async throws -> Percentiles? {
        for _ in 0..<broadcasts {
            try sender.send(recorder.body(phase: phase), to: .everyone, reliable: true)
            try await Task.sleep(for: broadcastInterval)
        }
        _ = await recorder.wait(for: phase, expected: broadcasts * (participants - 1), timeout: .seconds(60))
        return Percentiles(recorder.latencies(phase))
    }
}

/// A relay process's memory, from `/proc/PID/status`.
/// Tells a sampling child task to stop and hand back what it read.
final class SamplingStop: Sendable {
    private let stopped = Atomic<Bool>(false)

    /// Whether `stop()` was called.
    var isStopped: Bool { stopped.load(ordering: .acquiring) }

    /// Stops the sampling.
    func stop() { stopped.store(true, ordering: .releasing) }
}

extension RelayAdversarialBenchmark {
    /// The highest resident size of the process `memory` reads, every 50 ms, until `stop` says
    /// so or the task is cancelled.
    static func peakResident(of memory: RelayProcessMemory, until stop: SamplingStop) async -> Int {
        var highest = 0
        while !Task.isCancelled, !stop.isStopped {
            highest = max(highest, memory.resident)
            try? await Task.sleep(for: .milliseconds(50))
        }
        return highest
    }
}

struct RelayProcessMemory: Sendable {
    let pid: Int32

    /// Resident bytes now (VmRSS), 0 once the process is gone.
    var resident: Int { field("VmRSS:") }
    /// The most resident bytes so far (VmHWM).
    var peak: Int { field("VmHWM:") }
    /// Whether the process still runs (and is not a zombie).
    var isAlive: Bool {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        // The state follows the command name in parentheses.
        guard let close = text.lastIndex(of: ")") else { return false }
        let state = text[text.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state != "Z" && state != "X"
    }

    private func field(_ name: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name) }) else { return 0 }
        // "VmRSS:\t   12345 kB"
        let number = line.dropFirst(name.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) } ?? 0
        return number * 1024
    }
}

/// A relay benchmark that could not run, with the reason.
struct RelayBenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
