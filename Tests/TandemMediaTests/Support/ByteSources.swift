import Foundation
import Synchronization
import TandemPlayback

/// Bytes in memory as a `SeekableByteSource`, counting its reads.
final class MemoryByteSource: SeekableByteSource {
    let bytes: [UInt8]
    private let readCount = Mutex(0)

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The bytes of the file at `path`.
    convenience init(file path: String) throws {
        self.init([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    var size: Int64? { Int64(bytes.count) }
    var reads: Int { readCount.withLock { $0 } }

    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        readCount.withLock { $0 += 1 }
        guard offset >= 0, offset < Int64(bytes.count) else { return 0 }
        let count = min(buffer.count, bytes.count - Int(offset))
        bytes.withUnsafeBytes { source in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[Int(offset)..<Int(offset) + count]))
        }
        return count
    }
}

/// A byte source whose reads throw within `failing` (a download cut off, a peer gone) and serve
/// `bytes` elsewhere.
final class FailingByteSource: SeekableByteSource {
    struct Gone: Error, CustomStringConvertible {
        var description: String { "the peer serving these bytes is gone" }
    }

    let bytes: [UInt8]
    let failing: Range<Int64>

    init(_ bytes: [UInt8], failing: Range<Int64>) {
        self.bytes = bytes
        self.failing = failing
    }

    var size: Int64? { Int64(bytes.count) }

    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard !failing.contains(offset) else { throw Gone() }
        guard offset < Int64(bytes.count) else { return 0 }
        // A read stops where the failing bytes begin; the next one throws.
        let stop = offset < failing.lowerBound ? min(failing.lowerBound, Int64(bytes.count)) : Int64(bytes.count)
        let count = min(buffer.count, Int(stop - offset))
        bytes.withUnsafeBytes { source in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[Int(offset)..<Int(offset) + count]))
        }
        return count
    }
}

/// A byte source slower than the media's bit rate: each read returns at most `chunk` bytes
/// after `delay` seconds (a slow download), past the first `fastPrefix` bytes and from
/// `fastFrom` on (the container's header and index, so that the open is quick).
final class SlowByteSource: SeekableByteSource {
    let bytes: [UInt8]
    let chunk: Int
    let delay: Double
    let slow: Range<Int64>

    init(_ bytes: [UInt8], chunk: Int, delay: Double, slow: Range<Int64>) {
        self.bytes = bytes
        self.chunk = chunk
        self.delay = delay
        self.slow = slow
    }

    var size: Int64? { Int64(bytes.count) }

    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset >= 0, offset < Int64(bytes.count) else { return 0 }
        var count = min(buffer.count, bytes.count - Int(offset))
        if slow.contains(offset) {
            Thread.sleep(forTimeInterval: delay)
            count = min(count, chunk)
        }
        bytes.withUnsafeBytes { source in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[Int(offset)..<Int(offset) + count]))
        }
        return count
    }
}
