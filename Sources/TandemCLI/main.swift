#if canImport(Glibc)
import Glibc
#endif

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
    BenchClockCommand.self,
    BenchRelayCommand.self,
    BenchClusterCommand.self,
    BenchSyncCommand.self,
    BenchAudioCommand.self,
    BenchAllCommand.self,
]

@MainActor func printUsage() {
    var text = "usage: tandem COMMAND [OPTIONS]\n\ncommands:\n"
    for command in commands {
        text += "  tandem \(command.usage)\n      \(command.summary)\n"
    }
    print(text, terminator: "")
}

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
let words = Array(CommandLine.arguments.dropFirst())
if words.isEmpty || ["help", "--help", "-h"].contains(words[0]) {
    printUsage()
    exit(words.isEmpty ? 64 : 0)
}
guard let (command, rest) = selectCommand(words) else {
    printError("tandem: unknown command '\(words.joined(separator: " "))' (try tandem help)")
    exit(64)
}
if rest.contains("--help") || rest.contains("-h") {
    print("usage: tandem \(command.usage)\n    \(command.summary)")
    exit(0)
}
do {
    exit(try await command.run(rest))
} catch let error as CLIError {
    printError("tandem: \(error.message)")
    if error.exitCode == 64 { printError("usage: tandem \(command.usage)") }
    exit(error.exitCode)
} catch {
    printError("tandem: \(error)")
    exit(1)
}
