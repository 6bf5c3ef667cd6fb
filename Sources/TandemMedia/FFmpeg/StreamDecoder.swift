import CFFmpeg
import TandemClock
import TandemMediaTypes

/// A libavcodec decoder for one stream of a `MediaFile`.
final class StreamDecoder {
    let context: UnsafeMutablePointer<AVCodecContext>
    let streamIndex: Int
    let timeBase: AVRational
    private let frame: UnsafeMutablePointer<AVFrame>

    /// Opens a decoder for `streamIndex`, with `threads` decoding threads (0: FFmpeg chooses).
    init(file: MediaFile, streamIndex: Int, threads: Int) throws(MediaError) {
        let stream = file.stream(streamIndex)
        let parameters = stream.pointee.codecpar!
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
            let name = avcodec_get_name(parameters.pointee.codec_id).map { String(cString: $0) } ?? "unknown"
            throw MediaError.unsupportedCodec(file.url, "no decoder for codec \(name) (stream \(streamIndex))")
        }
        guard let context = avcodec_alloc_context3(codec), let frame = av_frame_alloc() else {
            throw MediaError.ffmpeg("avcodec_alloc_context3", code: tandem_averror(ENOMEM))
        }
        self.context = context
        self.frame = frame
        self.streamIndex = streamIndex
        self.timeBase = stream.pointee.time_base
        try check(avcodec_parameters_to_context(context, parameters), "avcodec_parameters_to_context")
        context.pointee.pkt_timebase = stream.pointee.time_base
        context.pointee.thread_count = Int32(threads)
        context.pointee.thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE
        try check(avcodec_open2(context, codec, nil), "avcodec_open2 (\(String(cString: codec.pointee.name)))")
    }

    deinit {
        var owned: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&owned)
        var ownedFrame: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&ownedFrame)
    }

    /// What sending a packet did.
    enum SendResult {
        /// The decoder took the packet.
        case accepted
        /// The packet was corrupt and was skipped; decoding goes on with the next one.
        case corrupt
    }

    /// Sends a packet (nil: the end of the stream, to drain the decoder).
    func send(_ packet: UnsafeMutablePointer<AVPacket>?) throws(MediaError) -> SendResult {
        let result = avcodec_send_packet(context, packet)
        if result >= 0 || result == tandem_averror_eof() { return .accepted }
        if result == tandem_averror_invaliddata() || packet != nil { return .corrupt }
        throw MediaError.ffmpeg("avcodec_send_packet", code: result)
    }

    /// Receives the next decoded frame, handing its reference to `body`; false when the decoder
    /// wants more input or is drained.
    func receive(_ body: (UnsafeMutablePointer<AVFrame>) throws(MediaError) -> Void) throws(MediaError) -> Bool {
        let result = avcodec_receive_frame(context, frame)
        if result == tandem_averror_eagain() || result == tandem_averror_eof() { return false }
        if result == tandem_averror_invaliddata() { return true }
        try check(result, "avcodec_receive_frame")
        defer { av_frame_unref(frame) }
        try body(frame)
        return true
    }

    /// Forgets buffered input and output, after a seek.
    func flush() {
        avcodec_flush_buffers(context)
    }

    /// The presentation time of a decoded frame in nanoseconds, if it has one.
    func presentationTime(of frame: UnsafeMutablePointer<AVFrame>) -> Int64? {
        MediaTime.nanoseconds(frame.pointee.best_effort_timestamp, in: timeBase)
            ?? MediaTime.nanoseconds(frame.pointee.pts, in: timeBase)
    }
}
