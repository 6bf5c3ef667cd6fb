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
    static let usage = "host FILE [--port P] [--bind ADDR] [--advertise HOST] [--name NAME] [--video none|terminal] "
        + "[--presentation-log PATH] [--events json] [--clock-offset S] [--clock-drift-ppm PPM] "
        + "[--player builtin|mpv] [--mpv-ipc PATH] [--mpv-args \"ARGS\"]"
    static let summary = "host a watch-together session on a relay inside this process and print its invite"

    static func run(_ arguments: [String]) async throws -> Int32 {
        let arguments = try Arguments(arguments, options: WatchOptions.valueOptions.union(["port", "bind", "advertise"]))
        try arguments.expectPositionals(atMost: 1)
        let file = try arguments.positional(0, "FILE")
        let options = try WatchOptions(arguments, defaultName: "host")
        guard let port = UInt16(exactly: try arguments.int("port", default: Int(ServeCommand.defaultPort))!) else {
            throw CLIError.usage("--port must be 0…65535")
        }
        let bind = arguments.value("bind") ?? "0.0.0.0"
        let advertise = arguments.value("advertise") ?? (["0.0.0.0", "::"].contains(bind) ? "127.0.0.1" : bind)
        // Fail on the media before anything else starts.
        let identity = try checkedMedia(file)
        let server: RelayServer
        do {
            server = try RelayServer(address: SocketAddress(host: bind, port: port))
        } catch {
            throw CLIError.failure("cannot run a relay on \(bind):\(port): \(error)")
        }
        server.start()
        defer { server.stop() }

        let center = ActivityCenter.shared
        center.displayName = options.name
        center.localClock = options.clock
        center.configure(relay: NetworkRelayConnector(host: advertise, port: server.port), host: advertise, port: server.port,
                         sessionClock: .derived(from: server.clock as? any MonotonicDerivedClock ?? SystemClock()))
        var sessions = WatchTogether.sessions().makeAsyncIterator()
        try await WatchTogether(item: URL(fileURLWithPath: file).lastPathComponent).activate()
        guard let session = await sessions.next() else { throw CLIError.failure("the session did not start") }
        try await JoinCommand.join(session)
        printOutput(session.invitation.url.absoluteString)
        _ = identity
        return try await WatchRunner(session: session, file: file, options: options, isHost: true).run()
    }

    /// Opens `file` once to fail early, with one clear line, on media that cannot be played.
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
