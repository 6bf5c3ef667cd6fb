#if canImport(Glibc)
import Glibc
#endif
import TandemNet
import TandemNetsim

/// `tandem netsim`: the user-space network impairment proxy, for TCP and UDP on one port, until
/// SIGINT or SIGTERM; then its statistics and its own added error.
struct NetsimCommand: Command {
    static let words = ["netsim"]
    static let usage = "netsim --listen HOST:PORT --to HOST:PORT [--delay MS] [--jitter MS] [--loss P] [--asymmetry MS] [--reorder P] [--seed N]"
    static let summary = "relay TCP and UDP adding delay ± jitter each way (+asymmetry downstream), UDP loss and reorder, until interrupted"

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try Arguments(arguments, options: ["listen", "to", "delay", "jitter", "loss", "asymmetry", "reorder", "seed"])
        try options.expectPositionals(atMost: 0)
        let listen = try address(options, "listen")
        let target = try address(options, "to")
        let impairment = Impairment(
            delay: try nanoseconds(options, "delay"), jitter: try nanoseconds(options, "jitter"),
            loss: try probability(options, "loss"), asymmetry: try nanoseconds(options, "asymmetry"),
            reorder: try probability(options, "reorder")
        )
        if let problem = impairment.problem { throw CLIError.usage(problem) }
        let seedText = options.value("seed")
        guard let seed = seedText.map({ UInt64($0) }) ?? UInt64.random(in: 0...UInt64(UInt32.max)) else {
            throw CLIError.usage("--seed wants a non-negative integer, not '\(seedText ?? "")'")
        }
        let proxy: NetsimProxy
        do {
            proxy = try NetsimProxy(address: listen, target: target, impairment: impairment, seed: seed)
        } catch {
            throw CLIError.failure("cannot listen on \(listen): \(error)")
        }
        proxy.start()
        print("netsim listening on \(proxy.address) (TCP and UDP), relaying to \(target); interrupt to stop")
        print("impairment: \(impairment); seed \(seed)")
        // Scripts read the port from the first line, often through a pipe.
        fflush(nil)
        let signal = await ServeCommand.waitForTermination()
        proxy.stop()
        print("netsim: stopped by \(signal)")
        print(proxy.statistics.report)
        return 0
    }

    private static func address(_ options: Arguments, _ name: String) throws(CLIError) -> SocketAddress {
        guard let text = options.value(name) else { throw .usage("--\(name) HOST:PORT is required") }
        do {
            return try SocketAddress(parsing: text)
        } catch {
            throw .usage("--\(name) \(error)")
        }
    }

    /// Milliseconds (fractions allowed) as nanoseconds; zero when not given.
    private static func nanoseconds(_ options: Arguments, _ name: String) throws(CLIError) -> Int64 {
        let milliseconds = try options.double(name, default: 0)!
        guard milliseconds >= 0, milliseconds <= 3_600_000 else { throw .usage("--\(name) wants milliseconds from 0 to 3600000") }
        return Int64((milliseconds * 1e6).rounded())
    }

    /// A probability from 0 to 1, or a percentage such as `2%`; zero when not given.
    private static func probability(_ options: Arguments, _ name: String) throws(CLIError) -> Double {
        guard let text = options.value(name) else { return 0 }
        let isPercent = text.hasSuffix("%")
        guard let number = Double(isPercent ? String(text.dropLast()) : text), number.isFinite else {
            throw .usage("--\(name) wants a probability (0.02) or a percentage (2%), not '\(text)'")
        }
        let value = isPercent ? number / 100 : number
        guard (0...1).contains(value) else { throw .usage("--\(name) must be from 0 to 1 (or 0% to 100%)") }
        return value
    }
}
