import Foundation
import Tandem
import TandemNet
import TandemPlayback

/// `tandem join INVITE FILE`: joins a watch-together session with the local copy of the media.
enum JoinCommand: Command {
    static let words = ["join"]
    static let usage = "join INVITE FILE [--name NAME] [--video none|terminal] [--presentation-log PATH] [--events json] "
        + "[--clock-offset S] [--clock-drift-ppm PPM] [--player builtin|mpv] [--mpv-ipc PATH] [--mpv-args \"ARGS\"] [--follow scheduled|on-receipt]"
    static let summary = "join a watch-together session from its invite, with your own copy of the media"

    static func run(_ arguments: [String]) async throws -> Int32 {
        let arguments = try Arguments(arguments, options: WatchOptions.valueOptions)
        try arguments.expectPositionals(atMost: 2)
        let inviteText = try arguments.positional(0, "INVITE")
        let file = try arguments.positional(1, "FILE")
        let options = try WatchOptions(arguments, defaultName: ProcessInfo.processInfo.environment["USER"] ?? "guest")
        let invitation: Invitation
        do {
            invitation = try Invitation(parsing: inviteText)
        } catch {
            throw CLIError.usage("bad invite: \(error)")
        }
        try HostCommand.checkedMedia(file)
        let center = ActivityCenter.shared
        center.displayName = options.name
        center.localClock = options.clock
        center.configure(relay: NetworkRelayConnector(host: invitation.host, port: invitation.port),
                         host: invitation.host, port: invitation.port)
        var sessions = WatchTogether.sessions().makeAsyncIterator()
        do {
            try await center.accept(invitation)
        } catch {
            throw CLIError.failure("\(error)")
        }
        guard let session = await sessions.next() else { throw CLIError.failure("the session did not arrive") }
        if session.activity.item != URL(fileURLWithPath: file).lastPathComponent {
            printError("tandem: warning: the group watches \(session.activity.item); you are playing \(URL(fileURLWithPath: file).lastPathComponent)")
        }
        try await join(session)
        return try await WatchRunner(session: session, file: file, options: options, isHost: false).run()
    }

    /// Joins and waits until joined, or fails with the reason in one line.
    static func join(_ session: GroupSession<WatchTogether>) async throws {
        session.join()
        for await state in session.$state.values {
            switch state {
            case .joined: return
            case .invalidated(let reason): throw CLIError.failure(reason.detail)
            case .waiting: continue
            }
        }
    }
}
