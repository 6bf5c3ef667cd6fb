import Foundation
import Synchronization
import Tandem
import TandemClock
import TandemIdentity
import TandemMedia
import TandemMpv
import TandemPlayback
import TandemStreaming

/// No file needed to join, and URL items.
///
/// - Every participant serves the files it holds (`SessionStreaming.hold`) to those who ask, and
///   says so to everyone; a joiner whose media does not hold the group's item (or who gave none)
///   streams it from the holders, the host first, sealed through the session
///   (`streaming` event: `item`, `identity`, `holders`). `--no-stream` refuses: the joiner plays
///   its own file.
/// - When no holder is left, the streaming joiner suspends itself with
///   `.coordinatedPlaybackNotPossible`, a suspension that does not hold the group (`stream-suspended`),
///   until a holder is back (`stream-resumed`). A holder whose copy is not the item is dropped
///   (`stream-rejected-holder`).
/// - mpv reads a streamed item (the current one, and queue entries as the group reaches them)
///   from the player's loopback HTTP server under an unguessable path (`MpvByteServer`), given to
///   mpv over its IPC socket, never on its command line; mpv is started with `--ytdl=no`.
/// - `tandem host URL` plays an `http(s)` item that every participant opens itself (its identifier
///   is the URL); a joiner opens it only with `--allow-urls` or after saying yes at the terminal,
///   FFmpeg limited to `http,https,tls,tcp`, mpv started with `--ytdl=no`.
extension WatchParty {
    /// The item this participant opens for the group's item, and the streamed bytes behind it
    /// when it streams it.
    struct OpenedItem {
        var item: PlaybackItem
        /// Its content identity, without a duration (nil for a URL).
        var identity: String?
        var streamed: StreamedItem?
        /// When the stream began opening, on the raw CLOCK_MONOTONIC (ns): the `joined` event's
        /// `monotonic_ns`.
        var streamedAt: HostInstant?
    }

    /// How long a joiner without the file waits for a holder to say what the group's item is.
    static let announcementTimeout = Duration.seconds(10)
    /// How long a joiner with files of its own waits before it plays its first file.
    static let ownMediaAnnouncementTimeout = Duration.seconds(3)

    /// The group's item as an `http(s)` URL, when it is one.
    public static func webURL(_ item: String) -> URL? {
        guard MediaFile.isURL(item), let url = URL(string: item), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else { return nil }
        return url
    }

    /// Starts streaming in the session: this participant's files served (as the group's items
    /// they are: the first is the group's item when hosting).
    func startStreaming() -> SessionStreaming {
        let streaming = SessionStreaming(session: session)
        for (index, path) in watchedMedia.enumerated() where !path.isEmpty && Self.webURL(path) == nil {
            guard let identity = try? ContentIdentity.of(file: path) else { continue }
            let name = configuration.isHost && index == 0 ? session.activity.item : Self.identifier(of: path)
            try? streaming.hold(file: path, identity: identity, name: name)
        }
        return streaming
    }

    /// What to open for the group's item: a URL item (a joiner asks first), this participant's
    /// file holding it, or the item streamed from its holders.
    /// `announcesJoined`: the built-in player's `joined` comes as the stream begins opening;
    /// mpv's, once mpv has loaded the item, carries the same instant (one `joined` either way).
    func openedItem(streaming: SessionStreaming, announcesJoined: Bool = true) async throws -> OpenedItem {
        let name = session.activity.item
        if let url = Self.webURL(name) {
            if !configuration.isHost { try confirmURL(url) }
            return OpenedItem(item: try PlaybackItem(url: url, identifier: name), identity: nil, streamed: nil)
        }
        let own = watchedMedia.filter { !$0.isEmpty }
        if configuration.isHost || configuration.refusesStreaming {
            guard let first = own.first else { throw WatchPartyError.usage("--no-stream needs your own copy of the media: give FILE") }
            return OpenedItem(item: PlaybackItem(file: first, identifier: name), identity: try? ContentIdentity.of(file: first), streamed: nil)
        }
        let timeout = own.isEmpty ? Self.announcementTimeout : Self.ownMediaAnnouncementTimeout
        guard let identity = await streaming.announcedIdentity(of: name, timeout: timeout) else {
            guard let first = own.first else {
                throw WatchPartyError.failure("nobody in the session says it holds \(TerminalText.sanitized(name)) to stream: give your own copy")
            }
            return OpenedItem(item: PlaybackItem(file: first, identifier: name), identity: try? ContentIdentity.of(file: first), streamed: nil)
        }
        if let match = own.first(where: { ContentIdentity.sameContent((try? ContentIdentity.of(file: $0)), identity) }) {
            return OpenedItem(item: PlaybackItem(file: match, identifier: name), identity: ContentIdentity.content(of: identity), streamed: nil)
        }
        // The `joined` event before the stream opens, so that what follows it is the stream's time.
        let streamedAt = HostInstant.now()
        if announcesJoined { emitJoined(streamedAt: streamedAt) }
        let streamed: StreamedItem
        do {
            streamed = try streaming.item(identity: identity)
        } catch {
            throw WatchPartyError.failure(error.description)
        }
        emit(.streaming(.init(item: name, identity: ContentIdentity.content(of: identity),
                                     holders: streamed.holders.map { session.participant(identifiedBy: $0)?.displayName ?? $0.uuidString })))
        return OpenedItem(item: PlaybackItem(bytes: streamed, identifier: name, identity: identity),
                          identity: ContentIdentity.content(of: identity), streamed: streamed, streamedAt: streamedAt)
    }

    /// mpv on the group's item: a file, a URL as it is, or a streamed item, which the player
    /// serves to mpv on 127.0.0.1 (`MpvByteServer`); `--ytdl=no` either way, so that mpv hands
    /// no address to youtube-dl.
    func runMpv(streaming: SessionStreaming, whileWatching: @escaping @Sendable () async -> Void) async throws -> Ending {
        let opened: OpenedItem
        do {
            opened = try await openedItem(streaming: streaming, announcesJoined: false)
        } catch {
            session.leave()
            await session.departureDelivered()
            throw error
        }
        defer { opened.streamed?.close() }
        return try await runWithMpv(item: opened.item, streaming: streaming, streamedAt: opened.streamedAt, whileWatching: whileWatching)
    }

    /// A joiner opens a URL item only with `--allow-urls`, or after saying yes at the terminal.
    private func confirmURL(_ url: URL) throws {
        if configuration.allowsURLs { return }
        guard let confirm = configuration.confirmURL else {
            throw WatchPartyError.failure("the group's item is the URL \(TerminalText.sanitized(url.absoluteString)): this participant would "
                + "open it itself; give --allow-urls to do so")
        }
        try confirm(url)
    }

    /// Suspends this participant (without holding the group) while no holder of the streamed
    /// item is left, and reports what streaming says.
    func followStreaming(_ streaming: SessionStreaming, coordinator: PlaybackCoordinator) {
        // One suspension per streamed item (the current one and queue entries report apart).
        let suspensions = Mutex<[String: PlaybackSuspension]>([:])
        streaming.onEvent { [session, weak self] event in
            guard let self else { return }
            switch event {
            case .suspended(let identity):
                emit(.streamSuspended(.init(identity: identity, message: "no holder of the item is left: playback is not possible here")))
                let began = WatchParty.beginNonHoldingSuspension(coordinator)
                let replaced = suspensions.withLock { $0.updateValue(began, forKey: identity) }
                replaced?.end()
            case .resumed(let identity):
                emit(.streamResumed(.init(identity: identity)))
                let ended = suspensions.withLock { $0.removeValue(forKey: identity) }
                ended?.end()
            case .rejectedHolder(let holder, let identity):
                emit(.streamRejectedHolder(.init(identity: identity,
                                                        holder: session.participant(identifiedBy: holder)?.displayName ?? holder.uuidString,
                                                        message: "its copy is not the item (its ends do not match the identity)")))
            }
        }
    }

    /// A `.coordinatedPlaybackNotPossible` suspension the group does not wait for.
    static func beginNonHoldingSuspension(_ coordinator: PlaybackCoordinator) -> PlaybackSuspension {
        coordinator.beginSuspension(for: .coordinatedPlaybackNotPossible, holdingGroup: false)
    }
}

/// The queue's entries that this participant streams, one reader each, made as the queue names them.
final class StreamedEntries: Sendable {
    private let streaming: SessionStreaming
    private let items = Mutex<[String: StreamedItem]>([:])

    init(streaming: SessionStreaming) { self.streaming = streaming }

    /// A playback item reading `entry` from its holders, nil when its identity names no size.
    func item(for entry: PlaybackQueue.Entry) -> PlaybackItem? {
        guard let identity = entry.identity else { return nil }
        let content = ContentIdentity.content(of: identity)
        let streamed = items.withLock { items -> StreamedItem? in
            if let known = items[content] { return known }
            let made = try? streaming.item(identity: identity)
            items[content] = made
            return made
        }
        return streamed.map { PlaybackItem(bytes: $0, identifier: entry.identifier, identity: identity) }
    }
}
