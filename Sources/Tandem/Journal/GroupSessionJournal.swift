import Foundation
import TandemNet

/// Files and data shared with a session, kept by the relay for the life of the session so that
/// late joiners get them too, as SharePlay's `GroupSessionJournal`. Each attachment is sealed end
/// to end like every message: the relay stores bytes it cannot read.
public final class GroupSessionJournal: Sendable {
    /// An attachment of the journal.
    public struct Attachment: Sendable, Hashable, Identifiable {
        /// The attachment's identity.
        public let id: UUID
        /// Its name (a file's name, or what the adder gave).
        public let name: String
        /// Its size in bytes.
        public let size: Int
        /// Who added it.
        public let owner: UUID
    }

    /// The largest attachment.
    public static let maximumAttachmentSize = 100 * 1024 * 1024

    private let session: any JournalSession

    /// The journal of `session`.
    public init<Activity: GroupActivity>(session: GroupSession<Activity>) {
        self.session = session
    }

    /// The current set of attachments, then the set after each change, for as long as the
    /// caller iterates (late joiners start with everything added so far).
    public var attachments: AsyncStream<[Attachment]> { session.attachmentsStorage.subscribe() }

    /// Adds `data` as an attachment named `name`; returns once the relay holds it. Refuses more
    /// than 100 MiB before sending anything.
    @discardableResult
    public func add(_ data: Data, name: String = "data") async throws -> Attachment {
        guard data.count <= GroupSessionJournal.maximumAttachmentSize else {
            throw GroupSessionError(.tooLarge, "an attachment of \(data.count) bytes is over the limit of \(GroupSessionJournal.maximumAttachmentSize) bytes")
        }
        guard let link = session.joinedLink else {
            throw GroupSessionError(.notJoined, "the session is not joined: call join() and wait for .joined")
        }
        let id = UUID()
        let metadata = AttachmentMetadata(name: name, size: data.count)
        let sealedMetadata = session.bodies.seal(Array(try JSONEncoder().encode(metadata)), kind: .attachmentMetadata,
                                                 path: .journal, attachment: id)
        do {
            try await link.addAttachment(id: id, metadata: sealedMetadata,
                                         data: session.bodies.seal(Array(data), kind: .attachmentData, path: .journal, attachment: id))
        } catch {
            throw GroupSessionError.from(error)
        }
        return Attachment(id: id, name: name, size: data.count, owner: session.localParticipant.id)
    }

    /// Adds the file at `url` as an attachment named after it. Refuses files over 100 MiB before
    /// reading them.
    @discardableResult
    public func add(contentsOf url: URL) async throws -> Attachment {
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? nil
        guard let size else {
            throw GroupSessionError(.encoding, "cannot read \(url.path)")
        }
        guard size <= GroupSessionJournal.maximumAttachmentSize else {
            throw GroupSessionError(.tooLarge, "\(url.lastPathComponent) is \(size) bytes, over the limit of \(GroupSessionJournal.maximumAttachmentSize) bytes")
        }
        return try await add(Data(contentsOf: url), name: url.lastPathComponent)
    }

    /// Removes an attachment for everyone.
    public func remove(_ attachment: Attachment) async throws {
        guard let link = session.joinedLink else {
            throw GroupSessionError(.notJoined, "the session is not joined")
        }
        do {
            try await link.removeAttachment(id: attachment.id)
        } catch {
            throw GroupSessionError.from(error)
        }
    }

    /// Loads an attachment's data from the relay.
    public func load(_ attachment: Attachment) async throws -> Data {
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

/// What a sealed attachment's metadata holds.
struct AttachmentMetadata: Codable {
    var name: String
    var size: Int
}

/// What a journal needs of its session, whatever the activity type.
protocol JournalSession: Sendable {
    var joinedLink: (any RelayLink)? { get }
    var bodies: BodySealer { get }
    func reject(_ rejection: Rejection)
    var localParticipant: Participant { get }
    var attachmentsStorage: PublishedStorage<[GroupSessionJournal.Attachment]> { get }
}

extension GroupSession: JournalSession {
    /// Records an attachment the relay reports (its metadata opened with the session's key).
    func attachmentAdded(_ record: AttachmentRecord) {
        let expectation = BodySealer.Expectation(path: .journal, kinds: [.attachmentMetadata], sender: record.owner,
                                                 attachment: record.id, checksReplay: false)
        let body: SignedBody
        switch bodies.open(record.metadata, expecting: expectation) {
        case .success(let opened): body = opened
        case .failure(let reason):
            reject(Rejection(reason: reason, sender: record.owner, path: "attachment"))
            return
        }
        guard let metadata = try? JSONDecoder().decode(AttachmentMetadata.self, from: Data(body.payload)) else {
            reject(Rejection(reason: .malformed, sender: record.owner, path: "attachment"))
            return
        }
        let attachment = GroupSessionJournal.Attachment(id: record.id, name: metadata.name, size: metadata.size, owner: record.owner)
        let current = core.withLock { core -> [GroupSessionJournal.Attachment] in
            if core.attachments.updateValue(attachment, forKey: record.id) == nil { core.attachmentOrder.append(record.id) }
            return core.attachmentOrder.compactMap { core.attachments[$0] }
        }
        attachmentsStorage.value = current
    }

    /// Forgets an attachment the relay reports removed.
    func attachmentRemoved(_ id: UUID) {
        let current = core.withLock { core -> [GroupSessionJournal.Attachment] in
            core.attachments.removeValue(forKey: id)
            core.attachmentOrder.removeAll { $0 == id }
            return core.attachmentOrder.compactMap { core.attachments[$0] }
        }
        attachmentsStorage.value = current
    }
}
