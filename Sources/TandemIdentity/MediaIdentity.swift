/// A media item's content identity: `ContentIdentity` (size and hashes, no FFmpeg needed), by
/// the name it had when it lived in TandemMedia. A player announces the duration with it
/// (`ContentIdentity.announcing(duration:_:)`).
public typealias MediaIdentity = ContentIdentity
