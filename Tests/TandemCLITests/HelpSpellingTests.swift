import Foundation
import Testing
import TandemHarness
import TandemTestKit

/// One spelling per concept across the commands' synopses and help: `--json` for JSON output
/// (`--events json` is still taken, unlisted, so that scripts keep working), `SECONDS` for a
/// number of seconds, `HOST` and `HOST:PORT` for an address.
@Suite struct HelpSpellingProcessTests {
    /// The commands whose help is checked: every one.
    static let commands = HelpProcessTests.commands

    @Test("one metavariable for seconds and one for an address", arguments: commands)
    func oneSpellingPerConcept(command: String) throws {
        let text = try TandemProcess.run(["help"] + command.split(separator: " ").map(String.init)).standardOutput
        let words = text.split(whereSeparator: { " \n[],|()".contains($0) }).map(String.init)
        for other in ["S", "T", "ADDR", "ADDRESS", "ADDR:PORT", "T:PATH"] {
            #expect(!words.contains(other), "tandem help \(command) spells \(other):\n\(text)")
        }
        #expect(!text.contains("--events"), "tandem help \(command) lists --events:\n\(text)")
    }

    @Test func theSpellingsChosen() throws {
        let host = try TandemProcess.run(["help", "host"]).standardOutput
        for form in ["--json", "--verbose", "--bind HOST", "--advertise HOST", "--relay HOST:PORT", "--clock-offset SECONDS"] {
            #expect(host.contains(form), "\(form):\n\(host)")
        }
        let play = try TandemProcess.run(["help", "play"]).standardOutput
        for form in ["--start SECONDS", "--duration SECONDS", "--snapshot SECONDS:PATH"] { #expect(play.contains(form), "\(form):\n\(play)") }
        #expect(try TandemProcess.run(["help", "netsim"]).standardOutput.contains("--listen HOST:PORT"))
        #expect(try TandemProcess.run(["help", "probe"]).standardOutput.contains("--json"))
    }

    /// `--json` and `--verbose` are two ways of printing events; the older `--events json` is
    /// `--json`, so it too meets `--verbose` as a usage error, before anything starts.
    @Test(arguments: [["--json", "--verbose"], ["--events", "json", "--verbose"]])
    func jsonAndVerboseTogetherAreAUsageError(flags: [String]) throws {
        let run = try TandemProcess.run(["host", SampleClip.h264.path, "--bind", "127.0.0.1", "--port", "0"] + flags)
        #expect(run.status == 64, "\(run.standardError)")
        #expect(run.standardError.hasPrefix("tandem: --json and --verbose are two ways of printing events"), "\(run.standardError)")
    }
}
