import CFFmpeg
import TandemClock
import TandemMediaTypes

/// What a `MediaDecoder` produces: pictures and sound, each with its media time.
public enum DecodedMedia: Sendable {
    /// A decoded picture.
    case video(VideoFrame)
    /// Decoded sound, already in `AudioChunk`'s fixed format.
    case audio(AudioChunk)

    /// The media time at which it starts.
    public var presentationTime: Int64 {
        switch self {
        case .video(let frame): frame.presentationTime
        case .audio(let chunk): chunk.presentationTime
        }
    }
}

/// Reads a media file and decodes its first video and audio streams, in presentation order per
/// stream, synchronously on the caller's thread.
///
/// It skips corrupt packets (counting them) and ends cleanly at a truncated end. `seek(to:)` is
/// accurate: the first picture after it is the one that covers the target, and the first sound
/// the chunk that covers it.
///
/// Confinement (why unchecked): its decoding state (the pending output, the targets, the held
/// frame) is used by one thread at a time, the caller's, as its methods run synchronously; it
/// may be handed to another thread, never used by two at once.
public final class MediaDecoder: @unchecked Sendable {
    /// The file being decoded.
    public let file: MediaFile
    /// Packets that the decoders rejected as corrupt, and skipped.
    public private(set) var corruptPackets = 0
    /// The read error that ended the input early (a truncated or unreadable file), if any.
    public private(set) var readError: MediaError?

    private let video: StreamDecoder?
    private let audio: StreamDecoder?
    private let resampler = AudioResampler()
    private let packet: UnsafeMutablePointer<AVPacket>
    private let nominalFrameDuration: Int64
    private var pending: [DecodedMedia] = []
    private var pendingIndex = 0
    /// The last picture, held back until the next one gives its duration.
    private var heldFrame: VideoFrame?
    private var videoTarget: Int64?
    private var audioTarget: Int64?
    private var drained = false
    /// Where to read from again before going on, once the sound after a seek turned out to
    /// start after its target (see `receiveAudio`).
    private var backOff: Int64?
    /// Whether the current seek has read from further back already.
    private var backedOff = false
    /// The end of the last picture handed out since the current seek.
    private var handedOutVideoEnd: Int64?
    /// How far after a seek's target its first sound may start and still count as covering
    /// it: the rounding of containers that stamp to the millisecond.
    private static let soundGapTolerance: Int64 = 1_000_000

    /// Opens decoders for `file`'s best video and audio streams.
    ///
    /// - Parameters:
    ///   - decodeVideo: whether to decode pictures.
    ///   - decodeAudio: whether to decode sound.
    ///   - threads: decoding threads per decoder; 0 lets FFmpeg choose.
    public init(file: MediaFile, decodeVideo: Bool = true, decodeAudio: Bool = true, threads: Int = 0) throws(MediaError) {
        self.file = file
        let videoIndex = decodeVideo ? file.bestStream(AVMEDIA_TYPE_VIDEO) : nil
        let audioIndex = decodeAudio ? file.bestStream(AVMEDIA_TYPE_AUDIO) : nil
        video = try videoIndex.map { index throws(MediaError) in try StreamDecoder(file: file, streamIndex: index, threads: threads) }
        audio = try audioIndex.map { index throws(MediaError) in try StreamDecoder(file: file, streamIndex: index, threads: 1) }
        guard video != nil || audio != nil else {
            throw decodeVideo && !decodeAudio ? MediaError.noVideo(file.url) : MediaError.noStreams(file.url)
        }
        guard let packet = av_packet_alloc() else {
            throw MediaError.ffmpeg("av_packet_alloc", code: tandem_averror(ENOMEM))
        }
        self.packet = packet
        for index in 0..<Int(file.context.pointee.nb_streams) where index != videoIndex && index != audioIndex {
            file.stream(index).pointee.discard = AVDISCARD_ALL
        }
        if let videoIndex {
            let rate = file.stream(videoIndex).pointee.avg_frame_rate
            nominalFrameDuration = rate.num > 0 && rate.den > 0
                ? av_rescale_q(1, AVRational(num: rate.den, den: rate.num), MediaTime.nanosecondBase)
                : 40_000_000
        } else {
            nominalFrameDuration = 40_000_000
        }
    }

    deinit {
        var owned: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&owned)
    }

    /// Whether pictures are being decoded.
    public var hasVideo: Bool { video != nil }
    /// Whether sound is being decoded.
    public var hasAudio: Bool { audio != nil }
    /// A picture's duration when the stream does not say otherwise (from its average frame rate).
    public var nominalVideoFrameDuration: Int64 { nominalFrameDuration }

    /// The next picture or sound, or nil at the end of the input.
    public func next() throws(MediaError) -> DecodedMedia? {
        while true {
            if let position = backOff {
                // The pictures resume after the last one handed out (from the target when none
                // was), the sound at the target.
                let resume = handedOutVideoEnd ?? audioTarget
                backOff = nil
                try reposition(at: position)
                if video != nil { videoTarget = resume }
            }
            if pendingIndex < pending.count {
                let item = pending[pendingIndex]
                if case .video(let frame) = item { handedOutVideoEnd = frame.endTime }
                pendingIndex += 1
                if pendingIndex == pending.count {
                    pending.removeAll(keepingCapacity: true)
                    pendingIndex = 0
                }
                return item
            }
            if drained { return nil }
            try readAndDecode()
        }
    }

    /// Moves to `target` (nanoseconds of media time): the next picture is the one that covers it,
    /// and sound resumes with the chunk that contains it.
    public func seek(to target: Int64) throws(MediaError) {
        try reposition(at: target)
        videoTarget = video == nil ? nil : target
        audioTarget = audio == nil ? nil : target
        backOff = nil
        backedOff = false
        handedOutVideoEnd = nil
    }

    /// Reads from the keyframe at or before `target` on, the decoders flushed.
    private func reposition(at target: Int64) throws(MediaError) {
        guard let stream = video ?? audio else { return }
        let timestamp = MediaTime.value(max(target, 0), in: stream.timeBase)
        let result = av_seek_frame(file.context, Int32(stream.streamIndex), timestamp, AVSEEK_FLAG_BACKWARD)
        if result < 0 {
            // Some demuxers cannot seek by stream; fall back to the container's own time base.
            let fallback = av_rescale_q(max(target, 0), MediaTime.nanosecondBase, tandem_av_time_base_q())
            try check(avformat_seek_file(file.context, -1, Int64.min, fallback, fallback, 0), "seeking \(file.url)")
        }
        video?.flush()
        audio?.flush()
        resampler.reset()
        pending.removeAll(keepingCapacity: true)
        pendingIndex = 0
        heldFrame = nil
        drained = false
        readError = nil
    }

    private func readAndDecode() throws(MediaError) {
        let result = av_read_frame(file.context, packet)
        if result < 0 {
            if result != tandem_averror_eof() {
                readError = file.byteSourceFailure.map { MediaError.io(file.url, "reading stopped: \($0)") }
                    ?? MediaError.ffmpeg("reading \(file.url)", code: result)
            }
            try drain()
            return
        }
        defer { av_packet_unref(packet) }
        let index = Int(packet.pointee.stream_index)
        if let video, index == video.streamIndex {
            video.context.pointee.skip_frame = isWellBeforeTarget(packet, of: video) ? AVDISCARD_NONREF : AVDISCARD_DEFAULT
            try decode(packet, with: video)
        } else if let audio, index == audio.streamIndex {
            try decode(packet, with: audio)
        }
    }

    /// Whether `packet` is a picture that starts more than two frames before the seek's target:
    /// if no other picture refers to it, the decoder may skip it, as it is never shown. Between
    /// keyframes two seconds apart, with three B-frames between references, that takes a third
    /// of the work of reaching a target away; the pictures near the target are all decoded, so
    /// the one that covers it starts where it does.
    private func isWellBeforeTarget(_ packet: UnsafeMutablePointer<AVPacket>, of decoder: StreamDecoder) -> Bool {
        guard let target = videoTarget, let start = MediaTime.nanoseconds(packet.pointee.pts, in: decoder.timeBase) else { return false }
        return start + 2 * nominalFrameDuration < target
    }

    private func drain() throws(MediaError) {
        if let video { try decode(nil, with: video) }
        if let audio { try decode(nil, with: audio) }
        if let held = heldFrame {
            heldFrame = nil
            emitVideo(held, nextStart: nil)
        }
        drained = true
    }

    private func decode(_ packet: UnsafeMutablePointer<AVPacket>?, with decoder: StreamDecoder) throws(MediaError) {
        if try decoder.send(packet) == .corrupt {
            corruptPackets += 1
            return
        }
        let isVideo = decoder === video
        while try decoder.receive({ frame throws(MediaError) in
            if isVideo {
                try receiveVideo(frame, decoder: decoder)
            } else {
                try receiveAudio(frame, decoder: decoder)
            }
        }) {}
    }

    private func receiveVideo(_ frame: UnsafeMutablePointer<AVFrame>, decoder: StreamDecoder) throws(MediaError) {
        let start = decoder.presentationTime(of: frame) ?? heldFrame.map { $0.presentationTime + $0.duration } ?? 0
        if let held = heldFrame, start <= held.presentationTime {
            // A timestamp that does not advance (broken stream): keep the later picture only.
            heldFrame = nil
        }
        let stated = MediaTime.nanoseconds(frame.pointee.pkt_duration, in: decoder.timeBase) ?? 0
        let current = try VideoFrame(referencing: frame, presentationTime: start,
                                     duration: stated > 0 ? stated : nominalFrameDuration)
        if let held = heldFrame {
            emitVideo(held, nextStart: start)
        }
        heldFrame = current
    }

    private func emitVideo(_ frame: VideoFrame, nextStart: Int64?) {
        if let nextStart { frame.duration = nextStart - frame.presentationTime }
        if let target = videoTarget {
            guard frame.endTime > target else { return }
            videoTarget = nil
        }
        pending.append(.video(frame))
    }

    private func receiveAudio(_ frame: UnsafeMutablePointer<AVFrame>, decoder: StreamDecoder) throws(MediaError) {
        let start = decoder.presentationTime(of: frame) ?? 0
        let chunk = try resampler.convert(frame, presentationTime: start)
        guard chunk.frameCount > 0 else { return }
        if let target = audioTarget {
            guard chunk.endTime > target else { return }
            if video != nil, !backedOff, chunk.presentationTime > target + Self.soundGapTolerance {
                // The sound before this chunk lies before the keyframe the seek landed on: a
                // container that interleaves by keyframe (Matroska's clusters, AVI) stores the
                // sound just before a keyframe ahead of it. Read again from a keyframe before
                // that sound; the seek keeps its target.
                backedOff = true
                backOff = target - (chunk.presentationTime - target) - (chunk.endTime - chunk.presentationTime) - Self.soundGapTolerance
                return
            }
            audioTarget = nil
        }
        pending.append(.audio(chunk))
    }
}
