import Foundation
import Tandem
import TandemClock
import TandemNet
import TandemMedia
import TandemPlayback

/// `tandem host FILE`: runs a relay in this process, starts a watch-together session on it,
/// joins as its first participant and prints the invite on its own line.
enum HostCommand: Command {
    static let words = ["host"]
    static let usage = "host FILE [--port P] [--bind ADDR] [--advertise HOST] [--relay HOST:PORT] [--session-epoch random|NS] [--name NAME] [--video none|terminal] "
        + "[--presentation-log PATH] [--events json] [--clock-offset S] [--clock-drift-ppm PPM] "
        + "[--player builtin|mpv] [--mpv-ipc PATH] [--mpv-args \"ARGS\"] [--follow scheduled|on-receipt] " + RelayLimitOptions.usage
    static let summary = "host a watch-together session on a relay inside this process and print its invite"

    static func run(_ arguments: [String]) async throws -> Int32 {
        let arguments = try Arguments(arguments, options: WatchOptions.valueOptions.union(["port", "bind", "advertise", "relay", "session-epoch"])
            .union(RelayLimitOptions.names))
        try arguments.expectPositionals(atMost: 1)
        let file = try arguments.positional(0, "FILE")
        let options = try WatchOptions(arguments, defaultName: "host")
        let relayConfiguration = try RelayLimitOptions.configuration(arguments)
        guard let port = UInt16(exactly: try arguments.int("port", default: Int(ServeCommand.defaultPort))!) else {
            throw CLIError.usage("--port must be 0…65535")
        }
        let bind = arguments.value("bind") ?? "0.0.0.0"
        let advertise = arguments.value("advertise") ?? (["0.0.0.0", "::"].contains(bind) ? "127.0.0.1" : bind)
        let sessionClock = try ServeCommand.sessionClock(arguments)
        // Fail on the media before anything else starts.
        try checkedMedia(file)
        let center = ActivityCenter.shared
        center.displayName = options.name
        center.localClock = options.clock
        var server: RelayServer?
        if let relay = arguments.value("relay") {
            // A standalone relay (`tandem serve`) elsewhere: reach it, and probe its time service.
            let (host, relayPort) = try relayAddress(relay)
            center.configure(relay: NetworkRelayConnector(host: host, port: relayPort), host: host, port: relayPort)
        } else {
            RelayLimitOptions.keepResidentMemoryHonest()
            let embedded: RelayServer
            do {
                embedded = try RelayServer(address: SocketAddress(host: bind, port: port), configuration: relayConfiguration,
                                           clock: sessionClock)
            } catch {
                throw CLIError.failure("cannot run a relay on \(bind):\(port): \(error)")
            }
            embedded.start()
            server = embedded
            center.configure(relay: NetworkRelayConnector(host: advertise, port: embedded.port), host: advertise, port: embedded.port,
                             sessionClock: .derived(from: embedded.clock as? any MonotonicDerivedClock ?? SystemClock()))
        }
        defer { server?.stop() }
        var sessions = WatchTogether.sessions().makeAsyncIterator()
        try await WatchTogether(item: URL(fileURLWithPath: file).lastPathComponent).activate()
        guard let session = await sessions.next() else { throw CLIError.failure("the session did not start") }
        try await JoinCommand.join(session)
        // The activity's title, where SharePlay shows its metadata; the invite gains no field for it.
        if let title = await session.activity.metadata.title { printError("hosting \(TerminalText.sanitized(title))") }
        printOutput(session.invitation.url.absoluteString)
        return try await WatchRunner(session: session, file: file, options: options, isHost: true).run()
    }

    /// The relay named by `text`, `HOST:PORT`. An invite there is taken for its relay's address
    /// only (a new session starts on that relay); its secret is neither used nor echoed, and
    /// `$TANDEM_INVITE` is never read here.
    static func relayAddress(_ text: String) throws(CLIError) -> (String, UInt16) {
        if let invitation = try? Invitation(parsing: text) { return (invitation.host, invitation.port) }
        guard let address = try? SocketAddress(parsing: text), address.port != 0 else {
            throw .usage("--relay wants HOST:PORT, not '\(Invitation.redacted(text))'")
        }
        return (address.host, address.port)
    }

    /// Opens `file` once to fail early, with one clear line, on media that cannot be played;
    /// returns its content identity.
    @discardableResult
    static func checkedMedia(_ file: String) throws(CLIError) -> String {
        do {
            return try MediaIdentity.of(file: file)
        } catch let error as MediaError {
            throw .failure(error.description)
        } catch {
            throw .failure("cannot read \(file): \(error)")
        }
    }
}
