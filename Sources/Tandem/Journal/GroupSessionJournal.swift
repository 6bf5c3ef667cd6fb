import Foundation
import TandemNet

/// Files and data shared with a session, kept by the relay for the life of the session so that
/// late joiners get them too, as SharePlay's `GroupSessionJournal`: `add(_:)` or
/// `add(_:metadata:)` any `Transferable` item, watch `attachments`, `load(_:)` one as the type
/// you want, `remove(attachment:)`. Each attachment is sealed end to end like every message:
/// the relay stores bytes it cannot read.
public final class GroupSessionJournal: Sendable {
    /// An attachment of the journal: load its item with `load(_:)` and its metadata with
    /// `loadMetadata(of:)`, as SharePlay's.
    public struct Attachment: Sendable, Hashable, Identifiable {
        /// The attachment's identity.
        public let id: UUID
        /// Its name (a file's name, or what the adder gave).
        public let name: String
        /// Its size in bytes.
        public let size: Int
        /// Who added it.
        public let owner: UUID
        /// The content type it was sent as.
        public let contentType: UTType
        let metadata: Data?
        let source: AttachmentSource

        /// Downloads the attachment and makes a `type` of it, through the first of `type`'s
        /// representations that imports the attachment's content type.
        public func load<AttachmentType: Transferable>(_ type: AttachmentType.Type) async throws -> AttachmentType {
            let ways = AttachmentType.transferWays
            guard let way = ways.first(where: { $0.import != nil && contentType.conforms(to: $0.contentType) }),
                  let importer = way.import else {
                throw GroupSessionError(.unsupportedType, "attachment \(name) is \(contentType), which \(AttachmentType.self) cannot import")
            }
            let data = try await source.load(self)
            do {
                return try await importer(.data(data))
            } catch let error as GroupSessionError {
                throw error
            } catch {
                throw GroupSessionError(.encoding, "attachment \(name) does not make a \(AttachmentType.self): \(error)")
            }
        }

        /// The metadata added with the attachment, decoded as `type` (the type it was added with).
        public func loadMetadata<MetadataType: Codable>(of type: MetadataType.Type) async throws -> MetadataType {
            guard let metadata else {
                throw GroupSessionError(.encoding, "attachment \(name) was added without metadata")
            }
            do {
                return try JSONDecoder().decode(type, from: metadata)
            } catch {
                throw GroupSessionError(.encoding, "the metadata of attachment \(name) is not a \(MetadataType.self): \(error)")
            }
        }

        /// The same attachment: identity alone decides.
        public static func == (lhs: Attachment, rhs: Attachment) -> Bool { lhs.id == rhs.id }
        /// Hashes the identity.
        public func hash(into hasher: inout Hasher) { hasher.combine(id) }
    }

    /// The sequence of attachment sets `attachments` returns (SharePlay's is a type of its own,
    /// iterated the same way).
    public typealias Attachments = AsyncStream<[Attachment]>

    /// The largest attachment: 100 MiB (104,857,600 bytes), as SharePlay's.
    public static let maximumAttachmentSize = 100 * 1024 * 1024

    private let session: any JournalSession

    /// The journal of `session`.
    public init<Activity: GroupActivity>(session: GroupSession<Activity>) {
        self.session = session
    }

    /// The current set of attachments, then the set after each change, for as long as the
    /// caller iterates (late joiners start with everything added so far). Finishes when the
    /// session is invalidated.
    public var attachments: Attachments { session.attachmentsStorage.subscribe() }

    /// Adds `item` for everyone, through the first of its representations that exports; returns
    /// once the relay holds it. Refuses more than 100 MiB before sending anything.
    @discardableResult
    public func add<ItemType: Transferable>(_ item: ItemType) async throws -> Attachment {
        try await add(item, encodedMetadata: nil)
    }

    /// Adds `item` with `metadata` (any `Codable`: what the item's own format does not carry),
    /// which `Attachment.loadMetadata(of:)` reads back.
    @discardableResult
    public func add<ItemType: Transferable, MetadataType: Codable>(_ item: ItemType, metadata: MetadataType) async throws -> Attachment {
        let encoded: Data
        do {
            encoded = try JSONEncoder().encode(metadata)
        } catch {
            throw GroupSessionError(.encoding, "cannot encode the metadata \(MetadataType.self): \(error)")
        }
        return try await add(item, encodedMetadata: encoded)
    }

    /// Adds `data` as an attachment named `name` (a convenience of Tandem's own).
    @discardableResult
    public func add(_ data: Data, name: String) async throws -> Attachment {
        try await add(.data(data), contentType: .data, name: name, metadata: nil)
    }

    /// Adds the file at `url` as an attachment named after it (a convenience of Tandem's own).
    @discardableResult
    public func add(contentsOf url: URL) async throws -> Attachment {
        try await add(url)
    }

    /// Removes an attachment for everyone, as SharePlay's.
    public func remove(attachment: Attachment) async throws {
        guard let link = session.joinedLink else {
            throw GroupSessionError(.notJoined, "the session is not joined")
        }
        do {
            try await link.removeAttachment(id: attachment.id)
        } catch {
            throw GroupSessionError.from(error)
        }
    }

    /// Removes an attachment for everyone (the spelling of earlier Tandem versions).
    public func remove(_ attachment: Attachment) async throws {
        try await remove(attachment: attachment)
    }

    /// Loads an attachment's bytes (the spelling of earlier Tandem versions; SharePlay's is
    /// `attachment.load(Data.self)`).
    public func load(_ attachment: Attachment) async throws -> Data {
        try await attachment.load(Data.self)
    }

    private func add<ItemType: Transferable>(_ item: ItemType, encodedMetadata: Data?) async throws -> Attachment {
        let ways = ItemType.transferWays
        guard let way = ways.first(where: { $0.exports(item) }), let export = way.export else {
            throw GroupSessionError(.unsupportedType, "\(ItemType.self) has no representation that exports this value")
        }
        let payload: TransferPayload
        do {
            payload = try await export(item)
        } catch let error as GroupSessionError {
            throw error
        } catch {
            throw GroupSessionError(.encoding, "cannot export the \(ItemType.self): \(error)")
        }
        let suggested = way.suggestedFileName?(item).flatMap { $0.isEmpty ? nil : $0 }
        let name = switch payload {
        case .file(let url): suggested ?? url.lastPathComponent
        case .data: suggested ?? way.contentType.preferredFilenameExtension.map { "item.\($0)" } ?? "item"
        }
        return try await add(payload, contentType: way.contentType, name: name, metadata: encodedMetadata)
    }

    private func add(_ payload: TransferPayload, contentType: UTType, name: String, metadata: Data?) async throws -> Attachment {
        let limit = GroupSessionJournal.maximumAttachmentSize
        let data: Data
        switch payload {
        case .data(let bytes):
            data = bytes
        case .file(let url):
            // The size is checked before the file is read, so that a huge file is refused cheaply.
            guard let size = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? Int else {
                throw GroupSessionError(.encoding, "cannot read \(url.path)")
            }
            guard size <= limit else {
                throw GroupSessionError(.tooLarge, "\(url.lastPathComponent) is \(size) bytes, over the limit of \(limit) bytes")
            }
            do {
                data = try Data(contentsOf: url)
            } catch {
                throw GroupSessionError(.encoding, "cannot read \(url.path): \(error)")
            }
        }
        guard data.count <= limit else {
            throw GroupSessionError(.tooLarge, "an attachment of \(data.count) bytes is over the limit of \(limit) bytes")
        }
        guard let link = session.joinedLink else {
            throw GroupSessionError(.notJoined, "the session is not joined: call join() and wait for .joined")
        }
        let id = UUID()
        let described = AttachmentMetadata(name: name, size: data.count, contentType: contentType.identifier, metadata: metadata)
        let sealedMetadata = session.bodies.seal(Array(try JSONEncoder().encode(described)), kind: .attachmentMetadata,
                                                 path: .journal, attachment: id)
        do {
            try await link.addAttachment(id: id, metadata: sealedMetadata,
                                         data: session.bodies.seal(Array(data), kind: .attachmentData, path: .journal, attachment: id))
        } catch {
            throw GroupSessionError.from(error)
        }
        return Attachment(id: id, name: name, size: data.count, owner: session.localParticipant.id, contentType: contentType,
                          metadata: metadata, source: AttachmentSource(session: session))
    }
}

/// Where an attachment's bytes come from: its session's relay link, opened with the session's key.
final class AttachmentSource: Sendable {
    private let session: any JournalSession

    init(session: any JournalSession) {
        self.session = session
    }

    func load(_ attachment: GroupSessionJournal.Attachment) async throws -> Data {
        guard let link = session.joinedLink else {
            throw GroupSessionError(.notJoined, "the session is not joined")
        }
        let sealed: [UInt8]
        do {
            sealed = try await link.loadAttachment(id: attachment.id)
        } catch {
            throw GroupSessionError.from(error)
        }
        let expectation = BodySealer.Expectation(path: .journal, kinds: [.attachmentData], sender: attachment.owner,
                                                 attachment: attachment.id, checksReplay: false)
        switch session.bodies.open(sealed, expecting: expectation) {
        case .success(let body):
            return Data(body.payload)
        case .failure(let reason):
            session.reject(Rejection(reason: reason, sender: attachment.owner, path: "attachment"))
            throw GroupSessionError(.encoding, "attachment \(attachment.name) was not signed by its owner for this session (\(reason))")
        }
    }
}

/// What a sealed attachment's metadata holds: its name and size, the content type it was sent
/// as, and the adder's own metadata as JSON (both absent in attachments of earlier versions).
struct AttachmentMetadata: Codable {
    var name: String
    var size: Int
    var contentType: String?
    var metadata: Data?
}

/// What a journal needs of its session, whatever the activity type.
protocol JournalSession: Sendable {
    var joinedLink: (any RelayLink)? { get }
    var bodies: BodySealer { get }
    func reject(_ rejection: Rejection)
    var localParticipant: Participant { get }
    var attachmentsStorage: PublishedStorage<[GroupSessionJournal.Attachment]> { get }
}

extension GroupSession: JournalSession {}
