#if canImport(Glibc)
import Glibc
#endif
import TandemMedia

/// Every subcommand, in the order `tandem help` lists them.
let commands: [any Command.Type] = [
    HostCommand.self,
    JoinCommand.self,
    ProbeCommand.self,
    PlayCommand.self,
    ClockServeCommand.self,
    ClockSyncCommand.self,
    ServeCommand.self,
    NetsimCommand.self,
    BenchDecodeCommand.self,
    BenchPresentCommand.self,
    BenchMediumCommand.self,
    BenchClockCommand.self,
    BenchRelayCommand.self,
    BenchClusterCommand.self,
    BenchSyncCommand.self,
    BenchAudioCommand.self,
    BenchAllCommand.self,
]

@MainActor func selectCommand(_ words: [String]) -> (any Command.Type, [String])? {
    let match = commands
        .filter { words.starts(with: $0.words) }
        .max { $0.words.count < $1.words.count }
    guard let match else { return nil }
    return (match, Array(words.dropFirst(match.words.count)))
}

// The invite's secret and NATS's credentials leave the environment before anything could pass them on to a child.
_ = InviteEnvironment.inherited
_ = NATSCredentialsSource.inherited
// FFmpeg's own lines would come before ours, or over the status line: its reasons reach people
// inside ours (`MediaError`).
FFmpegMessages.silence()
let words = Array(CommandLine.arguments.dropFirst())
if words.isEmpty || ["--help", "-h"].contains(words[0]) {
    print(HelpText.overview(commands), terminator: "")
    exit(words.isEmpty ? 64 : 0)
}
if ["--version", "-V", "version"].contains(words[0]) {
    print(Version.line)
    exit(0)
}
/// The words a family's commands start with (`tandem bench sync`, `tandem clock serve`).
let families = Set(commands.filter { $0.words.count > 1 }.map { $0.words[0] })
if words[0] == "help" {
    let asked = Array(words.dropFirst())
    if asked.isEmpty {
        print(HelpText.overview(commands), terminator: "")
    } else if let command = commands.first(where: { $0.words == asked }) {
        print(HelpText.command(command), terminator: "")
    } else if asked.count == 1, families.contains(asked[0]) {
        print(HelpText.family(asked[0], commands), terminator: "")
    } else {
        printError("tandem: unknown command '\(asked.joined(separator: " "))': tandem --help lists them")
        exit(64)
    }
    exit(0)
}
guard let (command, rest) = selectCommand(words) else {
    if families.contains(words[0]) {
        // `tandem bench` or `tandem bench --help`: what the family holds.
        guard words.count == 1 || ["--help", "-h"].contains(words[1]) else {
            printError("tandem: unknown command '\(words[0]) \(words[1])': tandem \(words[0]) --help lists them")
            exit(64)
        }
        print(HelpText.family(words[0], commands), terminator: "")
        exit(0)
    }
    printError("tandem: unknown command '\(words[0])': tandem --help lists them")
    exit(64)
}
if rest.contains("--help") || rest.contains("-h") {
    print(HelpText.command(command), terminator: "")
    exit(0)
}
do {
    exit(try await command.run(rest))
} catch let error as CLIError {
    printError("tandem: \(error.message)" + (error.exitCode == 64 ? HelpText.hint(command) : ""))
    exit(error.exitCode)
} catch {
    printError("tandem: \(error)")
    exit(1)
}
