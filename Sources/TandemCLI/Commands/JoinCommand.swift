import Foundation
import Tandem
import TandemNet
import TandemPlayback

/// `tandem join [INVITE] MEDIA…`: joins a watch-together session with the local copy of the media
/// (files, folders, `.m3u` lists, as `tandem host` takes them), each matched to the group's items
/// by content identity, whatever its name.
///
/// The invite carries the session's secret, and a command line is no place for a secret (`ps`
/// shows every process's arguments to every local user). So the invite is the first word only
/// when it starts with `tandem://` (kept for convenience, and for scripts that already work so);
/// otherwise the first non-blank line of `--invite-file PATH`, or else `$TANDEM_INVITE`, which
/// `tandem` removes from its environment as it starts so that no child (mpv) inherits it.
enum JoinCommand: Command {
    static let words = ["join"]
    static let usage = "join [INVITE] [MEDIA…] [--no-stream] [--allow-urls] [--invite-file PATH] [--name NAME] [--video none|terminal] [--presentation-log PATH] [--json | --verbose] [--log FILE] "
        + "[--clock-offset SECONDS] [--clock-drift-ppm PPM] [--player builtin|mpv] [--mpv-ipc PATH] [--mpv-args \"ARGS\"] [--follow scheduled|on-receipt] [--decode-throttle FACTOR (bench only)] [--wake-guard]"
        + " [--latency-offset MS] " + AudioOptions.usage
    static let summary = "join a watch-together session from its invite (a tandem:// word, --invite-file PATH or $TANDEM_INVITE), with your own copy of the media or streaming it from those who hold it"

    static func run(_ arguments: [String]) async throws -> Int32 {
        let arguments = try Arguments(arguments, options: WatchOptions.valueOptions.union(["invite-file"]), flags: WatchOptions.flags)
        let (inviteText, source, words) = try invite(arguments, environment: InviteEnvironment.inherited)
        // No media: the group's item is streamed from its holders.
        let media = words.isEmpty && !arguments.flags.contains("no-stream") ? [] : try HostCommand.mediaList(words)
        let options = try WatchOptions(arguments, defaultName: ProcessInfo.processInfo.environment["USER"] ?? "guest")
        let invitation: Invitation
        do {
            invitation = try Invitation(parsing: inviteText)
        } catch {
            throw CLIError.usage("bad invite\(source): \(error)")
        }
        for item in media { try HostCommand.checkedMedia(item) }
        let center = ActivityCenter.shared
        center.displayName = options.name
        center.localClock = options.clock
        center.configure(relay: NetworkRelayConnector(relays: invitation.relays), relays: invitation.relays)
        var sessions = WatchTogether.sessions().makeAsyncIterator()
        do {
            try await center.accept(invitation)
        } catch {
            throw CLIError.joining(invitation, error)
        }
        guard let session = await sessions.next() else { throw CLIError.failure("the session did not arrive") }
        try await join(session)
        return try await WatchRunner(session: session, options: options, isHost: false, media: media).run()
    }

    /// Joins and waits until joined, or fails with the reason in one line.
    static func join(_ session: GroupSession<WatchTogether>) async throws {
        session.join()
        for await state in session.$state.values {
            switch state {
            case .joined: return
            case .invalidated(let reason): throw CLIError.failure(TerminalText.sanitized(reason.detail))
            case .waiting: continue
            }
        }
    }

    /// The invite's text and the media words: the first word when it starts with `tandem://`,
    /// else the first non-blank line of `--invite-file`, else `environment` (`$TANDEM_INVITE`
    /// as `tandem` started). A word and `--invite-file` together are a usage error. With none of
    /// them, a first word of two is taken for a mistyped invite, so that it is reported as one.
    /// `source` says where it came from, for messages (empty for a word).
    static func invite(_ arguments: Arguments, environment: String?) throws(CLIError) -> (invite: String, source: String, media: [String]) {
        let words = arguments.positionals
        let path = arguments.value("invite-file")
        if let first = words.first, first.hasPrefix("tandem://") {
            if path != nil { throw .usage("give the invite as a word or with --invite-file, not both") }
            return (first, "", Array(words.dropFirst()))
        }
        if let path { return (try inviteLine(path), " in \(path)", words) }
        if let environment, !environment.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            return (environment, " in TANDEM_INVITE", words)
        }
        if words.count >= 2 { return (words[0], "", Array(words.dropFirst())) }
        throw .usage("no invite: give it with --invite-file PATH or in TANDEM_INVITE (or as a first word, tandem://…)")
    }

    /// The first non-blank line of the file at `path`; warns when other users may read it.
    private static func inviteLine(_ path: String) throws(CLIError) -> String {
        // The first 64 KiB at most: an invite is one short line, and the path could be a device.
        let data: Data
        do {
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            data = try handle.read(upToCount: 64 * 1024) ?? Data()
        } catch {
            throw .failure("cannot read the invite file \(path): \((error as NSError).localizedDescription)")
        }
        let line = String(decoding: data, as: UTF8.self)
            .split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .first { !$0.isEmpty }
        guard let line else { throw .failure("the invite file \(path) holds no invite") }
        if let attributes = try? FileManager.default.attributesOfItem(atPath: path),
           let permissions = attributes[.posixPermissions] as? Int, permissions & 0o044 != 0 {
            printError("tandem: warning: the invite file \(path) is readable by other users (chmod 600 \(path))")
        }
        return line
    }
}
