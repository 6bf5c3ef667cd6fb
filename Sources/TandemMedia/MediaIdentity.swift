import Foundation
import TandemPlayback

/// A media file's content identity: its duration and a hash of its beginning and end, so that
/// participants can tell whether they hold the same file under the same name.
///
/// The duration is what the group validates media times against: a participant reports the
/// identity with `PlaybackCoordinator.reportItem(_:identity:ready:)`, and every core bounds the
/// seeks, pauses and starts proposed for that item by the longest duration announced for it
/// (`CoordinationCore.mediaTimeRange(ofItem:)`; `d=0.000`, a file of unknown duration, announces
/// none, and 24 hours is the bound then).
public enum MediaIdentity {
    /// `d=SECONDS;h=HASH` for the file at `path` (FNV-1a over its first and last 64 KiB and its
    /// size: cheap, and different for different encodes of the same film).
    public static func of(file path: String) throws -> String {
        let info = try MediaFile(url: path).info
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: 0)
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ data: Data) {
            for byte in data {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01B3
            }
        }
        mix(try handle.read(upToCount: 65_536) ?? Data())
        try handle.seek(toOffset: size > 65_536 ? size - 65_536 : 0)
        mix(try handle.read(upToCount: 65_536) ?? Data())
        mix(withUnsafeBytes(of: size.littleEndian) { Data($0) })
        return String(format: "d=%.3f;h=%016llx", info.duration ?? 0, hash)
    }

    /// `d=SECONDS;h=HASH` for the bytes of `source`, as `of(file:)` makes it for a file holding the
    /// same bytes (so a participant with the file and one with a byte source of it agree).
    /// Throws what the source throws, or a `MediaError` when the bytes are not media or the
    /// source does not know its size yet.
    public static func of(bytes source: any SeekableByteSource) throws -> String {
        guard let size = source.size else {
            throw MediaError.invalidArgument("MediaIdentity.of(bytes:)", "the byte source does not know its size yet")
        }
        let info = try MediaFile(item: PlaybackItem(bytes: source, identifier: "identity")).info
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var buffer = [UInt8](repeating: 0, count: 65_536)
        func mix(from offset: Int64) throws {
            var filled = 0
            while filled < buffer.count && offset + Int64(filled) < size {
                let read = try buffer.withUnsafeMutableBytes { bytes in
                    try source.read(at: offset + Int64(filled), into: UnsafeMutableRawBufferPointer(rebasing: bytes[filled...]))
                }
                guard read > 0 else { break }
                filled += read
            }
            for byte in buffer.prefix(filled) {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01B3
            }
        }
        try mix(from: 0)
        try mix(from: size > 65_536 ? size - 65_536 : 0)
        for byte in withUnsafeBytes(of: UInt64(size).littleEndian, Array.init) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return String(format: "d=%.3f;h=%016llx", info.duration ?? 0, hash)
    }
}
