import Foundation
import TandemTestKit
import TandemHarness

/// A sample program run as a separate process, as a user runs it: commands go to its standard
/// input a line at a time, and what it prints is read back with bounded waits. Killed at the end
/// of the test (or when dropped).
final class SampleProcess {
    let process: WatchProcess
    let name: String

    /// Starts sample `sample` (a built executable beside the test bundle) as participant `name`,
    /// hosting on an embedded relay, or joining with `relay` (an invite, on the command line) or
    /// `invite` (in `TANDEM_INVITE`, out of `ps`'s sight). The runner's own `TANDEM_INVITE`, if
    /// any, never reaches the sample.
    init(_ sample: String, name: String, relay: String? = nil, invite: String? = nil, extra: [String] = []) throws {
        var arguments = ["--name", name]
        if let relay { arguments += ["--relay", relay] }
        self.name = name
        process = try WatchProcess(executable: SampleProcess.path(of: sample), arguments: arguments + extra,
                                   name: name, acceptsCommands: true, environment: ["TANDEM_INVITE": invite])
    }

    deinit { process.kill() }

    /// The built executable: beside the test bundle, in the same build directory.
    static func path(of sample: String) throws -> String {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [bundle, bundle.deletingLastPathComponent()].map { $0.appendingPathComponent(sample).path }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw SampleTestError("the \(sample) sample is not built at \(candidates[0]); run `swift build --build-tests` first")
        }
        return found
    }

    /// Sends one command line.
    func send(_ line: String) { process.send(line) }

    /// Every line printed so far.
    var lines: [String] { process.lines }

    /// Waits at most `timeout` seconds for a printed line containing `text`; returns it.
    @discardableResult
    func waitFor(_ text: String, timeout: Double = 20) -> String? {
        waitFor(timeout: timeout) { $0.contains(text) }
    }

    /// Waits at most `timeout` seconds for a printed line that satisfies `matches`; returns it.
    @discardableResult
    func waitFor(timeout: Double = 20, _ matches: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let line = process.lines.first(where: matches) { return line }
            if Date() >= deadline { return nil }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    /// The invite a hosting sample prints on a line of its own.
    func invite(timeout: Double = 20) throws -> String {
        guard let line = process.waitForLine(startingWith: "tandem://", timeout: timeout) else {
            throw SampleTestError("\(name) printed no invite: \(lines), stderr: \(process.standardError)")
        }
        return line
    }

    /// Waits at most `timeout` seconds for it to exit; returns its status, or nil.
    func waitForExit(timeout: Double = 10) -> Int32? { process.waitForExit(timeout: timeout) }

    /// Everything it printed, for failure messages.
    var transcript: String { "\(name):\n  " + lines.joined(separator: "\n  ") + "\n  stderr: \(process.standardError)" }
}

/// A sample test's own failure (a missing executable, a missing invite).
struct SampleTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
