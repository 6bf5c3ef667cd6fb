import Foundation

/// Bytes a player can read at any offset: a media item that is neither a file nor a URL (a
/// download in progress, an archive member, bytes streamed from a peer). Reads may block until
/// the bytes are there.
public protocol SeekableByteSource: AnyObject, Sendable {
    /// The total size in bytes, once known.
    var size: Int64? { get }
    /// Reads up to `buffer.count` bytes from `offset` into `buffer`, and returns how many it
    /// read: 0 at the end. Throws when the bytes cannot be had.
    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

/// A media item for a player: where its bytes come from, the identifier the group knows it by,
/// and optionally its content identity (duration and hashes: `MediaIdentity`), so that
/// participants holding different content under one identifier are told apart.
///
/// In the manner of AVFoundation's `AVPlayerItem`, with a source that can be a local file, an
/// `http(s)` URL or a seekable byte source, so that streamed items need no other type.
public struct PlaybackItem: Sendable, CustomStringConvertible {
    /// Where an item's bytes come from.
    public enum Source: Sendable {
        /// A local file, by its path.
        case file(String)
        /// An `http` or `https` URL.
        case url(URL)
        /// A seekable byte source of the program's own.
        case bytes(any SeekableByteSource)
    }

    /// Where the bytes come from.
    public var source: Source
    /// The identifier the group knows the item by (a queue entry, a transition names it).
    public var identifier: String
    /// The content's identity, when known: `d=SECONDS;h=HASH`.
    public var identity: String?

    /// The file at `path`, known to the group as `identifier` (by default the file's name).
    public init(file path: String, identifier: String? = nil, identity: String? = nil) {
        source = .file(path)
        self.identifier = identifier ?? URL(fileURLWithPath: path).lastPathComponent
        self.identity = identity
    }

    /// The resource at `url`, an `http` or `https` URL (a `file` URL is taken as its path), known
    /// to the group as `identifier` (by default the URL's last path component). Other schemes are
    /// refused.
    public init(url: URL, identifier: String? = nil, identity: String? = nil) throws(PlaybackItemError) {
        switch url.scheme?.lowercased() {
        case "file":
            self.init(file: url.path, identifier: identifier, identity: identity)
        case "http", "https":
            let name = identifier ?? (url.lastPathComponent.isEmpty ? url.absoluteString : url.lastPathComponent)
            self.init(source: .url(url), identifier: name, identity: identity)
        default:
            throw PlaybackItemError("\(url.scheme ?? "a URL without a scheme") is not a source a player opens; "
                                    + "use a file, an http(s) URL or a byte source")
        }
    }

    private init(source: Source, identifier: String, identity: String?) {
        self.source = source
        self.identifier = identifier
        self.identity = identity
    }

    /// The bytes of `source`, known to the group as `identifier`.
    public init(bytes source: any SeekableByteSource, identifier: String, identity: String? = nil) {
        self.source = .bytes(source)
        self.identifier = identifier
        self.identity = identity
    }

    /// The identifier and where the bytes come from, for people to read.
    public var description: String {
        switch source {
        case .file(let path): "\(identifier) (\(path))"
        case .url(let url): "\(identifier) (\(url.absoluteString))"
        case .bytes: "\(identifier) (a byte source)"
        }
    }
}

/// An item that cannot be made: a URL of a scheme no player opens.
public struct PlaybackItemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong.
    public let description: String
    init(_ description: String) { self.description = description }
}
