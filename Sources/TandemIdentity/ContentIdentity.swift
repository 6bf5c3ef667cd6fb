import Foundation

/// A media item's content identity, so that participants can tell whether they hold the same
/// content whatever they named it: its size and a hash of its beginning and end
/// (`s=SIZE;h=HASH`). Reading it needs no decoder (no FFmpeg): 128 KiB read and a size.
///
/// The duration is the player's to announce: whichever player opened the item adds it
/// (`announcing(duration:_:)`, `d=SECONDS;s=SIZE;h=HASH`), because the group validates media
/// times against it (`CoordinationCore.mediaTimeRange(ofItem:)`). Two identities are of the same
/// content when they agree without their durations (`sameContent(_:_:)`).
public enum ContentIdentity {
    /// How much of each end is hashed (a streamed item's reader checks those bytes).
    public static let hashedBytes = 65_536

    /// `s=SIZE;h=HASH` for the file at `path` (FNV-1a over its first and last 64 KiB and its
    /// size: cheap, and different for different encodes of the same film). Throws when the file
    /// cannot be read.
    public static func of(file path: String) throws -> String {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let size = try handle.seekToEnd()
        return try of(size: Int64(size)) { offset, count in
            try handle.seek(toOffset: UInt64(offset))
            return [UInt8](try handle.read(upToCount: count) ?? Data())
        }
    }

    /// `s=SIZE;h=HASH` for content of `size` bytes that `read(offset, count)` reads (up to
    /// `count` bytes at `offset`; fewer only at the end), as `of(file:)` makes it for a file
    /// holding the same bytes.
    public static func of(size: Int64, read: (_ offset: Int64, _ count: Int) throws -> [UInt8]) rethrows -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ bytes: some Sequence<UInt8>) {
            for byte in bytes {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01B3
            }
        }
        func mix(from offset: Int64) throws {
            var collected: [UInt8] = []
            while collected.count < hashedBytes, offset + Int64(collected.count) < size {
                let chunk = try read(offset + Int64(collected.count), hashedBytes - collected.count)
                guard !chunk.isEmpty else { break }
                collected += chunk
            }
            mix(collected)
        }
        try mix(from: 0)
        try mix(from: size > Int64(hashedBytes) ? size - Int64(hashedBytes) : 0)
        mix(withUnsafeBytes(of: UInt64(size).littleEndian, Array.init))
        return String(format: "s=%lld;h=%016llx", size, hash)
    }

    /// `identity` with the duration a player read announced first (`d=SECONDS;…`, replacing
    /// any it had; `d=0.000` for an unknown duration, which announces none).
    public static func announcing(duration seconds: Double?, _ identity: String) -> String {
        let seconds = seconds.flatMap { $0.isFinite && $0 > 0 ? $0 : nil } ?? 0
        return String(format: "d=%.3f;", seconds) + content(of: identity)
    }

    /// `identity` without the duration a player announced in it: what two participants' files
    /// must share to be the same content.
    public static func content(of identity: String) -> String {
        identity.split(separator: ";").filter { !$0.hasPrefix("d=") }.joined(separator: ";")
    }

    /// Whether two identities are of the same content (the durations aside); false when
    /// either is unknown.
    public static func sameContent(_ one: String?, _ other: String?) -> Bool {
        guard let one, let other else { return false }
        let content = content(of: one)
        return !content.isEmpty && content == self.content(of: other)
    }
}
