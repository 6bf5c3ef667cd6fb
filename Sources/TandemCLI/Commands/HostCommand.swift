import Foundation
import Synchronization
import Tandem
import TandemClock
import TandemNet
import TandemMedia
import TandemPlayback
import TandemIdentity
import TandemMediaTypes
import TandemParty

/// `tandem host FILE`: starts a watch-together session on a relay, joins as its first participant
/// and prints the invite on its own line.
///
/// Without `--relay`, the relay is a process of its own (`DetachedRelay`): a `tandem serve` that
/// outlives this host (even a `SIGKILL`) and exits 10 s (`--relay-linger`) after its last
/// session ended, so that the host may leave (`q`, `leave`) while the others watch on; a later
/// `tandem host` on the same port uses that relay. The invite names `--advertise`, else the bind address, else (binding every
/// address) the address of the default route's interface, with a warning when it is private.
enum HostCommand: Command {
    static let words = ["host"]
    static let usage = "host MEDIA…|URL [--control everyone|operators] [--port P] [--bind HOST] [--advertise HOST] [--relay HOST:PORT[,HOST:PORT…]] [--relay-linger SECONDS] [--session-epoch random|NS] [--name NAME] [--video none|terminal] "
        + "[--presentation-log PATH] [--json | --verbose] [--log FILE] [--clock-offset SECONDS] [--clock-drift-ppm PPM] "
        + "[--latency-offset MS] [--max-hold SECONDS] [--invite-expires DURATION] " + AudioOptions.usage + " "
        + "[--player builtin|mpv] [--mpv-ipc PATH] [--mpv-args \"ARGS\"] [--follow scheduled|on-receipt] [--decode-throttle FACTOR (bench only)] [--wake-guard] " + RelayLimitOptions.usage
    static let summary = "host a watch-together session (on a relay of its own that outlives it, or --relay) and print its invite"

    static func run(_ arguments: [String]) async throws -> Int32 {
        let arguments = try Arguments(arguments, options: WatchOptions.valueOptions.union(["port", "bind", "advertise", "relay", "relay-linger",
                                                                                        "session-epoch", "control", "max-hold", "invite-expires"])
            .union(RelayLimitOptions.names), flags: WatchOptions.flags)
        let media = try mediaList(arguments.positionals)
        let file = media[0]
        var options = try WatchOptions(arguments, defaultName: "host")
        options.maximumHold = try WatchOptions.maximumHold(arguments)
        let control = try controlOption(arguments)
        let inviteLifetime = try inviteLifetimeOption(arguments)
        // Checked here, to fail before anything starts; the relay process reads them again.
        _ = try RelayLimitOptions.configuration(arguments)
        guard let port = UInt16(exactly: try arguments.int("port", default: Int(ServeCommand.defaultPort))!) else {
            throw CLIError.usage("--port must be 0…65535")
        }
        let bind = arguments.value("bind") ?? "0.0.0.0"
        let linger = try arguments.double("relay-linger") ?? DetachedRelay.defaultLinger
        guard (0...86_400).contains(linger) else { throw CLIError.usage("--relay-linger wants seconds from 0 to 86400") }
        if arguments.value("relay") != nil, arguments.value("relay-linger") != nil {
            throw CLIError.usage("--relay-linger is for the relay this command starts: a relay given by --relay keeps its own")
        }
        let sessionClock = try ServeCommand.sessionClock(arguments)
        // Fail on the media before anything else starts. A URL item, which every
        // participant opens itself, plays alone.
        if media.contains(where: { WatchParty.webURL($0) != nil }) {
            guard media.count == 1 else { throw CLIError.usage("an http(s) URL plays alone: give it without other media") }
            try checkedURL(media[0])
        } else {
            for item in media { try checkedMedia(item) }
        }
        let center = ActivityCenter.shared
        // The relay this command started is released if the command fails: it exits as soon as
        // it holds no session, so that nothing the failed command started lingers.
        let started = StartedRelay()
        do {
            return try await host(arguments, media: media, options: options, control: control, inviteLifetime: inviteLifetime,
                                  port: port, bind: bind, linger: linger, sessionClock: sessionClock, center: center, started: started)
        } catch {
            await started.release()
            throw error
        }
    }

    /// What `run` does once the arguments are checked: the relay, the session, the party.
    private static func host(_ arguments: Arguments, media: [String], options: WatchOptions, control: SessionPolicy.Control,
                             inviteLifetime: TimeSpan?, port: UInt16, bind: String, linger: Double, sessionClock: SessionEpochClock,
                             center: ActivityCenter, started: StartedRelay) async throws -> Int32 {
        let file = media[0]
        center.displayName = options.name
        center.localClock = options.clock
        center.inviteLifetime = inviteLifetime
        if let relay = arguments.value("relay") {
            // Standalone relays (`tandem serve`) elsewhere: the session starts on the first, the
            // invite names them all; sessions probe the time service of the relay they joined on.
            let relays = try relayAddresses(relay)
            center.configure(relay: NetworkRelayConnector(relays: relays), relays: relays)
        } else {
            let relay = try DetachedRelay.obtain(port: port, bind: bind, epoch: sessionClock.offset, linger: linger,
                                                 forwarded: forwardedLimits(arguments))
            if relay.started {
                started.relay = relay
            } else {
                printError("tandem: using the relay already on port \(relay.port) (pid \(relay.pid))")
            }
            let advertise = advertisedHost(arguments, bind: bind, port: relay.port)
            // This host reaches the relay on loopback when it listens there; the invite names
            // the address the others reach it at.
            let local = bind == "::" ? "::1" : bind == "0.0.0.0" ? "127.0.0.1" : bind
            // The relay creates sessions only for a host proving its creation key.
            var link = RelayLinkConfiguration()
            link.creationKey = relay.creationKey
            center.configure(relay: NetworkRelayConnector(host: local, port: relay.port, configuration: link), host: advertise, port: relay.port,
                             sessionClock: .derived(from: SessionEpochClock(offset: relay.epoch)))
        }
        var sessions = WatchTogether.sessions().makeAsyncIterator()
        // A URL item is known to the group by the URL itself: each participant opens it from that.
        try await WatchTogether(item: WatchParty.webURL(file) != nil ? file : URL(fileURLWithPath: file).lastPathComponent).activate()
        guard let session = await sessions.next() else { throw CLIError.failure("the session did not start") }
        started.session = session
        try await JoinCommand.join(session)
        // The party's policy is its first role record, set before anyone holds the invite: the
        // host's operators alone end it, and `--control` says who controls playback.
        try session.setPolicy(SessionPolicy(playback: control, ending: .operators))
        // The activity's title, where SharePlay shows its metadata; the invite gains no field for it.
        if let title = session.activity.metadata.title { printError("hosting \(TerminalText.sanitized(title))") }
        printOutput(session.invitation.url.absoluteString)
        return try await WatchRunner(session: session, options: options, isHost: true, media: media).run()
    }

    /// The relay limit flags given, to pass on to the relay process as they were given.
    /// `--invite-expires DURATION`: how long the invite admits joiners (`90s`, `30m`, `2h`, `1d`, or
    /// seconds alone; at most 30 days), nil when not given.
    static func inviteLifetimeOption(_ arguments: Arguments) throws(CLIError) -> TimeSpan? {
        guard let text = arguments.value("invite-expires") else { return nil }
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        let (number, unit) = text.last.flatMap { units[$0] }.map { (String(text.dropLast()), $0) } ?? (text, 1)
        guard let value = Double(number), value.isFinite, value > 0, value * unit <= 30 * 86_400 else {
            throw .usage("--invite-expires is a duration such as 90s, 30m, 2h or 1d (at most 30 days), not '\(text)'")
        }
        return .seconds(value * unit)
    }

    /// `--control everyone|operators`: who may control playback (default everyone).
    static func controlOption(_ arguments: Arguments) throws(CLIError) -> SessionPolicy.Control {
        guard let text = arguments.value("control") else { return .everyone }
        guard let control = SessionPolicy.Control(rawValue: text) else {
            throw CLIError.usage("--control is everyone or operators, not \(TerminalText.sanitized(text))")
        }
        return control
    }

    static func forwardedLimits(_ arguments: Arguments) -> [String] {
        RelayLimitOptions.names.sorted().flatMap { name in arguments.value(name).map { ["--\(name)", $0] } ?? [] }
    }

    /// The host the invite names: `--advertise`, else `bind` unless it is every address, else
    /// the default route's interface address (said on standard error when it is private:
    /// others on this network can join, others elsewhere need port `port` forwarded or a
    /// public `tandem serve`), else loopback.
    static func advertisedHost(_ arguments: Arguments, bind: String, port: UInt16) -> String {
        if let advertise = arguments.value("advertise") { return advertise }
        let (address, fromRoute) = AdvertisedAddress.current(bind: bind)
        if fromRoute, AdvertisedAddress.isPrivate(address) {
            printError("tandem: the invite names \(address), a private address: only this network can join; from elsewhere, "
                + "forward port \(port) (TCP and UDP) to this machine and give --advertise HOST (your public address), or host on a public "
                + "tandem serve with --relay (docs/WATCHING.md: joining from another machine)")
        }
        return address
    }

    /// The relays named by `text`, `HOST:PORT[,HOST:PORT…]` (numeric addresses, at most
    /// `RelayEndpoint.maximumCount`, a repeated one counted once), the first where the session
    /// starts. An invite there is taken for its relays only (a new session starts on them); its
    /// secret is neither used nor echoed, and `$TANDEM_INVITE` is never read here.
    static func relayAddresses(_ text: String) throws(CLIError) -> [RelayEndpoint] {
        if let invitation = try? Invitation(parsing: text) { return invitation.relays }
        let relays: [RelayEndpoint]
        do {
            relays = try RelayEndpoint.list(parsing: text)
        } catch {
            throw .usage("--relay wants HOST:PORT[,HOST:PORT…], not '\(Invitation.redacted(text))': \(error)")
        }
        var numeric: [RelayEndpoint] = []
        for (index, relay) in relays.enumerated() {
            guard let address = try? SocketAddress(host: relay.host, port: relay.port) else {
                throw .usage("--relay: relay \(index + 1) is not a numeric address (IPv4, or IPv6 in brackets)")
            }
            numeric.append(RelayEndpoint(host: address.host, port: relay.port))
        }
        return numeric
    }

    /// The most files one command line queues.
    static let maximumMedia = 100

    /// The media of `host MEDIA…` / `join [INVITE] MEDIA…`: files, folders (their media files,
    /// not recursively, in natural order) and `.m3u`/`.m3u8` lists (`MediaList`), the first
    /// played first, the others queued after it. What cannot be listed is said in one line each
    /// on standard error, and the rest plays; nothing at all is a usage error. A word that looks
    /// like an invite is refused without echoing it (an invite carries the session's secret).
    static func mediaList(_ words: [String]) throws(CLIError) -> [String] {
        guard !words.isEmpty else { throw .usage("missing FILE") }
        if let invite = words.first(where: { $0.hasPrefix("tandem://") }) {
            throw .usage("unexpected argument '\(Invitation.redacted(invite))'")
        }
        let expansion = MediaList.expand(words)
        for problem in expansion.problems { printError("tandem: \(problem)") }
        guard !expansion.media.isEmpty else { throw .usage("no media to play in \(words.joined(separator: " "))") }
        guard expansion.media.count <= maximumMedia else { throw .usage("at most \(maximumMedia) files, not \(expansion.media.count)") }
        return expansion.media
    }

    /// Opens the `http(s)` item at `url` once (FFmpeg limited to `MediaFile.webProtocols`) to fail
    /// early, with one clear line, on one that cannot be played.
    static func checkedURL(_ url: String) throws(CLIError) {
        do {
            try WatchParty.checkedURL(url)
        } catch {
            throw error.isUsage ? .usage(error.message) : .failure(error.message)
        }
    }

    /// Opens `file` once to fail early, with one clear line, on media that cannot be played;
    /// returns its content identity with the duration the built-in player's demuxer read
    /// announced in it, and that duration (s).
    @discardableResult
    static func checkedMedia(_ file: String) throws(CLIError) -> (identity: String, duration: Double?) {
        do {
            return try WatchParty.checkedMedia(file)
        } catch {
            throw .failure(error.message)
        }
    }
}

/// The relay `tandem host` started and the session it hosts there, for the command to release
/// the relay if it fails (`DetachedRelay.release(_:)`).
private final class StartedRelay: Sendable {
    private struct State {
        var relay: DetachedRelay.Relay?
        var session: GroupSession<WatchTogether>?
    }

    private let state = Mutex(State())

    /// The relay this command started (nil: none, or one it reused).
    var relay: DetachedRelay.Relay? {
        get { state.withLock { $0.relay } }
        set { state.withLock { $0.relay = newValue } }
    }

    /// The session the command hosts on it.
    var session: GroupSession<WatchTogether>? {
        get { state.withLock { $0.session } }
        set { state.withLock { $0.session = newValue } }
    }

    /// Leaves the session (and waits, briefly, until the relay has the departure), then
    /// releases the relay this command started: it exits once it holds no session (at once,
    /// unless others joined and still watch).
    func release() async {
        if let session {
            session.leave()
            await session.departureDelivered()
        }
        guard let relay else { return }
        DetachedRelay.release(relay)
    }
}
