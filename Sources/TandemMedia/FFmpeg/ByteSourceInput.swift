#if canImport(Glibc)
import Glibc
#endif
import CFFmpeg
import TandemPlayback
import TandemMediaTypes

/// A custom libavformat input (`AVIOContext`) that reads a `SeekableByteSource`: FFmpeg calls
/// back for bytes at the current offset and for seeks (`AVSEEK_SIZE` asks the total size), as
/// `avio_alloc_context` documents (libavformat/avio.h).
///
/// A source that throws fails the read with `EIO` and keeps its error, so that the open or the
/// decoding run it ended can say why. Used by one thread at a time, as its `MediaFile` is.
final class ByteSourceInput: @unchecked Sendable {
    /// The bytes read through this input.
    let source: any SeekableByteSource
    /// The libavformat input reading them; freed in `deinit`, after its format context. Set
    /// once in `init` (nil only until then: the callbacks need `self` to exist first).
    private var allocated: UnsafeMutablePointer<AVIOContext>?
    /// The libavformat input reading them.
    var context: UnsafeMutablePointer<AVIOContext> { allocated! }
    /// The first error the source threw (or the misbehaviour it showed), for error messages.
    private(set) var failure: String?
    private var position: Int64 = 0

    /// The size of the buffer libavformat reads through.
    static let bufferSize: Int32 = 64 * 1024

    init(_ source: any SeekableByteSource) throws(MediaError) {
        self.source = source
        guard let buffer = av_malloc(Int(ByteSourceInput.bufferSize)) else {
            throw MediaError.ffmpeg("av_malloc", code: tandem_averror(ENOMEM))
        }
        // The callbacks find this instance through `opaque`, unretained: the `MediaFile` that
        // owns it outlives every read.
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        guard let io = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), ByteSourceInput.bufferSize, 0,
                                                 opaque, ByteSourceInput.readPacket, nil, ByteSourceInput.seekBytes) else {
            av_free(buffer)
            throw MediaError.ffmpeg("avio_alloc_context", code: tandem_averror(ENOMEM))
        }
        allocated = io
        // Seeking is by byte offset through the callback; a source with no size still seeks.
        io.pointee.seekable = source.size == nil ? 0 : AVIO_SEEKABLE_NORMAL
    }

    deinit {
        guard let allocated else { return }
        // libavformat may have replaced the buffer: free the one the context holds now.
        av_freep(&allocated.pointee.buffer)
        var owned: UnsafeMutablePointer<AVIOContext>? = allocated
        avio_context_free(&owned)
    }

    private func read(into buffer: UnsafeMutablePointer<UInt8>?, count: Int32) -> Int32 {
        guard let buffer, count > 0 else { return 0 }
        do {
            let read = try source.read(at: position, into: UnsafeMutableRawBufferPointer(start: buffer, count: Int(count)))
            guard read >= 0 && read <= Int(count) else {
                failure = failure ?? "the byte source returned \(read) bytes for a read of \(count)"
                return tandem_averror(EIO)
            }
            if read == 0 { return tandem_averror_eof() }
            position += Int64(read)
            return Int32(read)
        } catch {
            failure = failure ?? "the byte source failed at byte \(position): \(error)"
            return tandem_averror(EIO)
        }
    }

    private func seek(offset: Int64, whence: Int32) -> Int64 {
        let mode = whence & ~Int32(AVSEEK_FORCE)
        if mode & Int32(AVSEEK_SIZE) != 0 {
            return source.size ?? Int64(tandem_averror(ENOSYS))
        }
        let target: Int64?
        switch mode {
        case SEEK_SET: target = offset
        case SEEK_CUR: target = position.addingReportingOverflow(offset).overflow ? nil : position + offset
        case SEEK_END: target = source.size.flatMap { $0.addingReportingOverflow(offset).overflow ? nil : $0 + offset }
        default: target = nil
        }
        guard let target, target >= 0 else { return Int64(tandem_averror(EINVAL)) }
        position = target
        return target
    }

    private static let readPacket: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int32) -> Int32 = {
        opaque, buffer, count in
        guard let opaque else { return tandem_averror(EINVAL) }
        return Unmanaged<ByteSourceInput>.fromOpaque(opaque).takeUnretainedValue().read(into: buffer, count: count)
    }

    private static let seekBytes: @convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int64 = { opaque, offset, whence in
        guard let opaque else { return Int64(tandem_averror(EINVAL)) }
        return Unmanaged<ByteSourceInput>.fromOpaque(opaque).takeUnretainedValue().seek(offset: offset, whence: whence)
    }
}
