import Foundation
@_exported import TandemIdentity
import TandemPlayback
import TandemMediaTypes

extension ContentIdentity {
    /// `s=SIZE;h=HASH` for the bytes of `source`, as `of(file:)` makes it for a file holding the
    /// same bytes (so a participant with the file and one with a byte source of it agree).
    /// Throws what the source throws, or a `MediaError` when the source does not know its size yet.
    public static func of(bytes source: any SeekableByteSource) throws -> String {
        guard let size = source.size else {
            throw MediaError.invalidArgument("MediaIdentity.of(bytes:)", "the byte source does not know its size yet")
        }
        return try of(size: size) { offset, count in
            var buffer = [UInt8](repeating: 0, count: count)
            let read = try buffer.withUnsafeMutableBytes { try source.read(at: offset, into: $0) }
            return Array(buffer.prefix(max(0, read)))
        }
    }
}
