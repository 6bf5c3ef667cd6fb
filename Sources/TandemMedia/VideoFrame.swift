import Synchronization
import CFFmpeg
import TandemClock
import TandemMediaTypes

/// One decoded picture, with the media time at which it starts and how long it lasts.
///
/// It holds a reference to the decoder's pixel buffers; converting to RGB is done only by sinks
/// that need pixels, on their own time.
///
/// `duration` and `queuedAt` are set on the decoding side (the decoder sets the one before
/// handing the frame out, the playback engine the other as it queues it) and read on the
/// presentation side: each is an atomic. The `AVFrame` is not written once decoded; it sits
/// behind a lock all the same, taken only by a sink that converts the picture (`rgbImage`).
public final class VideoFrame: Sendable {
    /// The presentation time, in nanoseconds of media time.
    public let presentationTime: Int64
    /// How long the frame is shown at rate 1, in nanoseconds.
    public internal(set) var duration: Int64 {
        get { storedDuration.load(ordering: .acquiring) }
        set { storedDuration.store(newValue, ordering: .releasing) }
    }
    /// When the player's decoder queued it for presentation (raw CLOCK_MONOTONIC ns); nil
    /// before it is queued.
    public internal(set) var queuedAt: Int64? {
        get {
            let queued = storedQueuedAt.load(ordering: .acquiring)
            return queued == VideoFrame.notQueued ? nil : queued
        }
        set { storedQueuedAt.store(newValue ?? VideoFrame.notQueued, ordering: .releasing) }
    }
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    private let storedDuration: Atomic<Int64>
    private let storedQueuedAt = Atomic<Int64>(VideoFrame.notQueued)
    /// `queuedAt`'s nil.
    private static let notQueued = Int64.min
    private let picture: Mutex<UnsafeMutablePointer<AVFrame>>

    /// Takes a new reference to `source`'s buffers.
    init(referencing source: UnsafeMutablePointer<AVFrame>, presentationTime: Int64, duration: Int64) throws(MediaError) {
        guard let frame = av_frame_clone(source) else {
            throw MediaError.ffmpeg("av_frame_clone", code: tandem_averror(ENOMEM))
        }
        // A frame of its own, which `av_frame_clone` has just allocated: nothing else refers to it.
        nonisolated(unsafe) let owned = frame
        picture = Mutex(owned)
        self.presentationTime = presentationTime
        storedDuration = Atomic(duration)
        self.width = Int(source.pointee.width)
        self.height = Int(source.pointee.height)
    }

    deinit {
        picture.withLock { frame in
            var owned: UnsafeMutablePointer<AVFrame>? = frame
            av_frame_free(&owned)
        }
    }

    /// Calls `body` with the decoded `AVFrame`, which it reads and does not keep.
    func withPicture<Result: Sendable, Failure: Error>(_ body: (UnsafeMutablePointer<AVFrame>) throws(Failure) -> Result) throws(Failure) -> Result {
        try picture.withLock { frame throws(Failure) in try body(frame) }
    }

    /// The media time at which the next frame starts.
    public var endTime: Int64 { presentationTime + duration }

    /// Whether the frame is the one on screen at media time `time`.
    public func covers(_ time: Int64) -> Bool {
        presentationTime <= time && time < endTime
    }

    /// The picture as packed 8-bit RGB, scaled to `width` x `height` (by default its own size).
    public func rgbImage(width: Int? = nil, height: Int? = nil) throws(MediaError) -> RGBImage {
        let converter = PixelConverter()
        return try converter.convert(self, width: width ?? self.width, height: height ?? self.height)
    }
}

/// A picture as packed 8-bit RGB, row after row, with no padding.
public struct RGBImage: Sendable, Equatable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// `width * height * 3` bytes: red, green, blue for each pixel.
    public let pixels: [UInt8]

    /// Wraps pixels that are already packed RGB.
    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(pixels.count == width * height * 3, "RGB image needs width * height * 3 bytes")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The colour at (x, y).
    public func pixel(x: Int, y: Int) -> (red: UInt8, green: UInt8, blue: UInt8) {
        let offset = (y * width + x) * 3
        return (pixels[offset], pixels[offset + 1], pixels[offset + 2])
    }

    /// The mean brightness (0 to 255) of a rectangle, for reading patterns such as the frame
    /// number strip of Tandem's sample media.
    public func meanLuma(x: Int, y: Int, width boxWidth: Int, height boxHeight: Int) -> Double {
        var total = 0
        var count = 0
        for row in max(0, y)..<min(height, y + boxHeight) {
            for column in max(0, x)..<min(width, x + boxWidth) {
                let (r, g, b) = pixel(x: column, y: row)
                total += (299 * Int(r) + 587 * Int(g) + 114 * Int(b)) / 1000
                count += 1
            }
        }
        return count == 0 ? 0 : Double(total) / Double(count)
    }
}
