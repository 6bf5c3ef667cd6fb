#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import Tandem
import TandemNet

/// How a sample was asked to start, from its command line: `[--relay INVITE-OR-ADDR] [--name N]`
/// and any options of its own.
///
/// - no `--relay`, and `TANDEM_INVITE` set to an invite: the sample joins that session (the
///   safe way to pass an invite: `ps` shows every process's arguments to every local user);
/// - no `--relay` and no `TANDEM_INVITE`: a relay runs inside this process on 127.0.0.1 (any
///   free port) and the sample hosts a new session on it;
/// - `--relay tandem://…` (an invite): the sample joins that session;
/// - `--relay HOST:PORT`: the sample hosts a new session on that relay (`tandem serve`).
///
/// `TANDEM_INVITE` is read only when no `--relay` is given, and is removed from the process's
/// environment either way, so that nothing the sample starts inherits the secret. No error
/// echoes an invite's secret (`k=…`).
public final class SampleLaunch: Sendable {
    /// The name others see for this participant.
    public let name: String
    /// The invite to accept, when joining; nil when hosting.
    public let invitation: Invitation?
    /// Options other than `--relay` and `--name`, by name (without the dashes).
    public let options: [String: String]
    /// The relay running inside this process, when none was named.
    public let embeddedRelay: RelayServer?

    /// Whether this participant starts the session (and prints its invite).
    public var isHosting: Bool { invitation == nil }

    /// Reads the command line, configures `ActivityCenter.shared` for the relay it names (or an
    /// embedded one), and sets the participant's name. Standard output becomes line-buffered so
    /// that each printed line reaches a pipe at once.
    ///
    /// - Parameters:
    ///   - sampleName: the program's name, for usage lines.
    ///   - valueOptions: further options the sample takes, each followed by a value.
    ///   - environment: the invite from the environment (`TANDEM_INVITE`, which the default
    ///     reads and removes), used only without `--relay`.
    public init(sampleName: String, valueOptions: Set<String> = [], arguments: [String] = Array(CommandLine.arguments.dropFirst()),
                environment: String? = SampleLaunch.takeInviteFromEnvironment()) throws(SampleError) {
        setvbuf(stdout, nil, _IOLBF, 0)
        var values: [String: String] = [:]
        var remaining = arguments[...]
        let known = valueOptions.union(["relay", "name"])
        while let word = remaining.popFirst() {
            guard word.hasPrefix("--"), known.contains(String(word.dropFirst(2))) else {
                let others = valueOptions.sorted().map { " [--\($0) VALUE]" }.joined()
                throw SampleError("usage: \(sampleName) [--relay INVITE-OR-HOST:PORT] [--name NAME]\(others) "
                    + "(unexpected '\(Invitation.redacted(word))'); TANDEM_INVITE=INVITE joins without --relay")
            }
            guard let value = remaining.popFirst() else { throw SampleError("\(word) wants a value") }
            values[String(word.dropFirst(2))] = value
        }
        name = values.removeValue(forKey: "name") ?? ProcessInfo.processInfo.environment["USER"] ?? sampleName.lowercased()
        let center = ActivityCenter.shared
        center.displayName = name
        if let relay = values.removeValue(forKey: "relay") {
            embeddedRelay = nil
            if let invitation = try? Invitation(parsing: relay) {
                self.invitation = invitation
                center.configure(relay: NetworkRelayConnector(relays: invitation.relays), relays: invitation.relays)
            } else if let address = try? SocketAddress(parsing: relay), address.port != 0 {
                invitation = nil
                center.configure(relay: NetworkRelayConnector(host: address.host, port: address.port),
                                 host: address.host, port: address.port)
            } else {
                throw SampleError("--relay wants an invite (tandem://…) or HOST:PORT, not '\(Invitation.redacted(relay))'")
            }
        } else if let environment, !environment.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            let invitation: Invitation
            do {
                invitation = try Invitation(parsing: environment)
            } catch {
                throw SampleError("TANDEM_INVITE is not an invite: \(error)")
            }
            embeddedRelay = nil
            self.invitation = invitation
            center.configure(relay: NetworkRelayConnector(relays: invitation.relays), relays: invitation.relays)
        } else {
            let server: RelayServer
            do {
                server = try RelayServer(address: SocketAddress(host: "127.0.0.1", port: 0))
            } catch {
                throw SampleError("cannot run a relay on 127.0.0.1: \(error)")
            }
            server.start()
            embeddedRelay = server
            invitation = nil
            center.configure(relay: NetworkRelayConnector(host: "127.0.0.1", port: server.port), host: "127.0.0.1", port: server.port)
        }
        options = values
    }

    /// The value of `TANDEM_INVITE` (nil when unset), removed from the environment as it is read.
    public static func takeInviteFromEnvironment() -> String? {
        let value = getenv("TANDEM_INVITE").map { String(cString: $0) }
        unsetenv("TANDEM_INVITE")
        return value
    }

    /// Starts `activity` for the group when hosting, or accepts the invite when joining; either
    /// way the session arrives in `Activity.sessions()`.
    public func begin<Activity: GroupActivity>(_ activity: Activity) async throws {
        if let invitation {
            try await ActivityCenter.shared.accept(invitation)
        } else {
            try await activity.activate()
        }
    }

    /// Hosts or joins as `begin(_:)` does and takes the session from `Activity.sessions()`;
    /// prints the activity's title (its metadata, where SharePlay shows it in the system's UI)
    /// on standard error. The session is not joined yet: set up its messengers first, then
    /// `joinAndWait()`.
    public func session<Activity: GroupActivity>(of activity: Activity) async throws -> GroupSession<Activity> {
        var sessions = Activity.sessions().makeAsyncIterator()
        try await begin(activity)
        guard let session = await sessions.next() else { throw SampleError("the session did not arrive") }
        if let title = await session.activity.metadata.title {
            let verb = isHosting ? "hosting" : "joining"
            FileHandle.standardError.write(Data("\(verb) \(TerminalText.sanitized(title))\n".utf8))
        }
        return session
    }

    /// Reads the command line as `init` does and runs `body` with the launch; prints any error
    /// as one line on standard error and exits with status 1, or 0 when `body` returns. Stops
    /// the embedded relay on the way out: everyone else's session then ends too (after the
    /// link's reconnection limit, unless the session was ended first).
    public static func run(_ sampleName: String, valueOptions: Set<String> = [],
                           _ body: (SampleLaunch) async throws -> Void) async -> Never {
        var status: Int32 = 0
        var launch: SampleLaunch?
        do {
            launch = try SampleLaunch(sampleName: sampleName, valueOptions: valueOptions)
            try await body(launch!)
        } catch {
            // The error may carry what the relay or a peer said.
            FileHandle.standardError.write(Data("\(sampleName): \(TerminalText.sanitized("\(error)"))\n".utf8))
            status = 1
        }
        // `leave()` and `end()` tell the relay in the background, as on Apple platforms: give a
        // last one a moment to get there (and, with the relay in this process, to reach the others).
        try? await Task.sleep(for: .milliseconds(300))
        launch?.embeddedRelay?.stop()
        exit(status)
    }
}

/// A sample's failure, in one line.
public struct SampleError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public let description: String

    /// A failure described by `description`.
    public init(_ description: String) { self.description = description }
}
