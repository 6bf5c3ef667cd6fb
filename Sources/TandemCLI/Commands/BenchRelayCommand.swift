import Foundation
import TandemBench
import TandemNet

/// `tandem bench relay`: the relay benchmark; with `--adversarial`, the relay as its own process
/// under attack, beside the quiet run of the same honest load.
struct BenchRelayCommand: Command {
    static let words = ["bench", "relay"]
    static let usage = "bench relay [--adversarial [--each]] [--in-process | --relay-executable PATH] [--full-stack-only | --delivery-only] [--relay-cost [--relay-cpu N]] [--priority normal|high|realtime] [--busy-poll] [--writer-threads 1|2] [--participants N] [--json] [--out FILE]"
    static let summary = "200 participants in one session and 1,000 sessions of two on a `tandem serve` relay (--in-process: "
        + "the relay beside the links), the relay's own delivery then the full client stack; --relay-cost: the relay "
        + "in this process, its latency by the kernel's socket timestamps and its CPU per delivery beside a bare forwarder's, "
        + "both pinned to one processor (--relay-cpu); --adversarial: quiet and then under attack (with --relay-cost, "
        + "the relay's own latency by the kernel's clocks in each run) "
        + "(\(RelayAttackPlan().connections) attacking connections in a CPU cgroup capped at half a processor; build with -c release)"

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try Arguments(arguments, options: ["out", "participants", "attack", "attack-kind", "attack-seconds", "relay-executable", "priority", "writer-threads", "relay-cpu"],
                                    flags: ["json", "adversarial", "each", "in-process", "full-stack-only", "delivery-only", "busy-poll", "relay-cost"])
        try options.expectPositionals(atMost: 0)
        if let port = options.value("attack") {
            // The attackers' own process, which `--adversarial` starts beside the relay's.
            guard let port = UInt16(port), port != 0 else { throw CLIError.usage("--attack wants the relay's port on 127.0.0.1") }
            let kindName = options.value("attack-kind") ?? "all"
            var plan = RelayAttackPlan()
            if kindName != "all" {
                guard let kind = RelayAttackPlan.Kind(rawValue: kindName) else {
                    throw CLIError.usage("--attack-kind wants all or one of \(RelayAttackPlan.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                plan = plan.only(kind)
            }
            guard let seconds = try options.int("attack-seconds", default: 60), seconds > 0, seconds <= 600 else {
                throw CLIError.usage("--attack-seconds must be 1…600")
            }
            try RelayAttackerProcess.run(plan: plan, port: port, limit: .seconds(seconds))
            return 0
        }
        guard let participants = try options.int("participants", default: 200), participants >= 2, participants <= 1_000 else {
            throw CLIError.usage("--participants must be 2…1000")
        }
        let priorityName = options.value("priority") ?? "normal"
        guard let priority = ThreadPriority(rawValue: priorityName) else {
            throw CLIError.usage("--priority wants normal, high or realtime, not '\(priorityName)'")
        }
        let relayExecutable = options.value("relay-executable")
        if let path = relayExecutable, !FileManager.default.isExecutableFile(atPath: path) {
            throw CLIError.usage("--relay-executable wants an executable `tandem`, not '\(path)'")
        }
        if options.flags.contains("adversarial") {
            var benchmark = RelayAdversarialBenchmark(executable: try BenchSyncCommand.executablePath())
            // Another build's relay under this build's attackers and honest load.
            benchmark.relayExecutable = relayExecutable
            benchmark.participants = participants
            benchmark.priority = priority
            benchmark.eachAttack = options.flags.contains("each")
            // The relay's latency by the kernel's clocks, from its own process's measuring mode.
            benchmark.measuresKernelTimestamps = options.flags.contains("relay-cost")
            if options.value("relay-cpu") != nil { throw CLIError.usage("--relay-cpu goes with --relay-cost without --adversarial") }
            let report = try await benchmark.run { printError("bench relay: \($0)…") }
            try printReport(report, table: RelayBenchmarkTable.render(report), options: options)
            return 0
        }
        var benchmark = RelayBenchmark()
        benchmark.participants = participants
        // The relay's own cost (kernel timestamps, its loop's CPU, a bare forwarder beside it):
        // the relay in this process, its delivery phases only.
        let relayCost = options.flags.contains("relay-cost")
        benchmark.measuresKernelTimestamps = relayCost
        if relayCost {
            guard relayExecutable == nil else { throw CLIError.usage("--relay-cost runs the relay in this process: not with --relay-executable") }
            guard !options.flags.contains("full-stack-only") else { throw CLIError.usage("--relay-cost and --full-stack-only exclude each other") }
        }
        if let cpu = try options.int("relay-cpu") {
            guard relayCost else { throw CLIError.usage("--relay-cpu wants --relay-cost") }
            guard cpu >= 0, cpu < ProcessInfo.processInfo.activeProcessorCount else {
                throw CLIError.usage("--relay-cpu wants a processor from 0 to \(ProcessInfo.processInfo.activeProcessorCount - 1)")
            }
            benchmark.relayCPU = cpu
        }
        // Another build's `tandem` as the relay: the same load, side by side, against two relays.
        if let path = relayExecutable {
            guard !options.flags.contains("in-process") else { throw CLIError.usage("--relay-executable and --in-process exclude each other") }
            benchmark.relayExecutable = path
        } else if !options.flags.contains("in-process") && !relayCost {
            benchmark.relayExecutable = try BenchSyncCommand.executablePath()
        }
        benchmark.measuresRelayDelivery = !options.flags.contains("full-stack-only")
        benchmark.priority = priority
        benchmark.busyPolling = options.flags.contains("busy-poll")
        // Passed to the relay as `serve --writer-threads N` only when given: an older build's
        // relay has no such flag.
        if let threads = try options.int("writer-threads") {
            guard (1...2).contains(threads) else { throw CLIError.usage("--writer-threads wants 1 or 2") }
            benchmark.writerThreads = threads
        }
        if options.flags.contains("delivery-only") || relayCost {
            // The relay's own delivery and its floor alone: short enough to alternate builds.
            guard benchmark.measuresRelayDelivery else { throw CLIError.usage("--delivery-only and --full-stack-only exclude each other") }
            let delivery = try await benchmark.runDelivery { printError("bench relay: \($0)…") }
            try printReport(delivery, table: RelayBenchmarkTable.render(delivery, participants: participants, pairs: benchmark.pairs),
                            options: options)
            return 0
        }
        let report = try await benchmark.run { printError("bench relay: \($0)…") }
        try printReport(report, table: RelayBenchmarkTable.render(report), options: options)
        return 0
    }
}
