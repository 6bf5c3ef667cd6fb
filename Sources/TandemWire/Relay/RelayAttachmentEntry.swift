import Foundation

/// A journal attachment as frames carry it, without its data.
public struct RelayAttachmentEntry: Sendable, Hashable {
    /// The attachment's identity.
    public var id: UUID
    /// Who added it.
    public var owner: UUID
    /// Its data's size in bytes.
    public var size: Int
    /// Opaque (sealed) metadata.
    public var metadata: [UInt8]

    /// An entry.
    public init(id: UUID, owner: UUID, size: Int, metadata: [UInt8]) {
        self.id = id
        self.owner = owner
        self.size = size
        self.metadata = metadata
    }
}
