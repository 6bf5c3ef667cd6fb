import Tandem

/// The activity `tandem host` and `tandem join` share: watching one media item together.
public struct WatchTogether: GroupActivity, Equatable {
    /// The item's identifier (by default the file's name).
    public var item: String

    /// Watching `item` together.
    public init(item: String) { self.item = item }

    /// Titled after the item, of the watch-together type.
    public var metadata: GroupActivityMetadata {
        var metadata = GroupActivityMetadata()
        metadata.title = item
        metadata.type = .watchTogether
        return metadata
    }
}
