import Foundation
import TandemNet

/// Prints `value` as pretty, key-sorted JSON on standard output: the `--json` form of a command.
func printJSON<Value: Encodable>(_ value: Value) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}

/// Prints a benchmark's report, as JSON with `--json` or as its table otherwise, and writes the
/// JSON to `--out PATH` when asked.
func printReport<Report: Encodable>(_ report: Report, table: String, options: Arguments) throws {
    if options.flags.contains("json") {
        try printJSON(report)
    } else {
        print(table, terminator: "")
    }
    guard let path = options.value("out") else { return }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    do {
        try encoder.encode(report).write(to: URL(fileURLWithPath: path))
    } catch {
        throw CLIError.failure("cannot write \(path): \(error.localizedDescription)")
    }
}

/// The address to listen on from `--port` (default `defaultPort`) and `--bind` (default all IPv4
/// addresses).
func listenAddress(_ options: Arguments, defaultPort: UInt16) throws(CLIError) -> SocketAddress {
    let port = try options.int("port", default: Int(defaultPort))!
    guard let port = UInt16(exactly: port) else { throw CLIError.usage("--port must be 0…65535") }
    do {
        return try SocketAddress(host: options.value("bind") ?? "0.0.0.0", port: port)
    } catch {
        throw CLIError.usage("--bind \(error)")
    }
}
