#if canImport(Glibc)
import Glibc
#endif
import CFFmpeg
import Foundation
import TandemPlayback
import TandemClock
import TandemMediaTypes

/// An open media container (libavformat's `AVFormatContext`), read by one thread at a time.
///
/// It is `@unchecked Sendable` so that it can be handed to the thread that reads it; it must
/// never be used from two threads at once.
public final class MediaFile: @unchecked Sendable {
    /// The URL or path that was opened.
    public let url: String
    /// What the file holds.
    public let info: MediaInfo
    let context: UnsafeMutablePointer<AVFormatContext>
    /// The byte source read through a custom input, for an item of `.bytes`.
    private let byteInput: ByteSourceInput?

    /// The protocols a local file may lead FFmpeg to open: only `file` itself.
    public static let localProtocols = "file"
    /// The protocols an `http(s)` item may lead FFmpeg to open: HTTP and what carries it, and
    /// nothing else (no `file`, `udp`, `rtmp`, `concat:`), whatever a server or playlist names.
    public static let webProtocols = "http,https,tcp,tls"
    /// A whitelist that matches no protocol: a byte source's bytes may open nothing else.
    static let noProtocols = "none"

    /// The demuxers every input opens with (FFmpeg's `format_whitelist`, which nested inputs of a
    /// playlist inherit): containers of audio and video, raw audio, and the HLS and `ffconcat`
    /// lists of them. Not FFmpeg's text-as-video demuxers (`tty`, `ansi`, `bintext`, `idf`,
    /// `xbin`, `adf`), which would present any text file (a `.txt`, an `.nfo`) as a video and so
    /// let it be queued and streamed to others; nor images, subtitles or raw video streams.
    public static let containerFormats = [
        "mov", "mp4", "m4a", "3gp", "3g2", "mj2", "matroska", "webm", "avi", "mpegts", "mpeg", "flv", "asf", "mxf", "nut", "rm",
        "ivf", "ogg", "wav", "w64", "aiff", "caf", "mp3", "flac", "aac", "ac3", "eac3", "dts", "truehd", "wv", "ape", "tta", "amr",
        "hls", "concat",
    ].joined(separator: ",")

    /// The demuxers a still picture opens with (`init(picture:)`): PNG, JPEG and the PPM family,
    /// what `SnapshotWriter` writes. Never a media item's.
    public static let pictureFormats = ["png_pipe", "jpeg_pipe", "ppm_pipe", "pgm_pipe", "image2"].joined(separator: ",")

    /// The error a byte source's read failure left, if any: why decoding ended early.
    var byteSourceFailure: String? { byteInput?.failure }

    /// Whether `url` is a URL the user gave (`scheme://…`), as opposed to a path.
    /// (`MediaLocation.isURL(_:)`, which needs no FFmpeg.)
    public static func isURL(_ url: String) -> Bool { MediaLocation.isURL(url) }

    /// Whether the file at `path` starts as an HLS playlist or an `ffconcat` list does.
    static func isPlaylist(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 16)
        let count = read(descriptor, &bytes, bytes.count)
        let start = String(decoding: bytes.prefix(max(0, count)), as: UTF8.self)
        return start.hasPrefix("#EXTM3U") || start.hasPrefix("ffconcat")
    }

    /// Whether the demuxer named `format` (FFmpeg's comma-separated names of one demuxer, as
    /// `mov,mp4,m4a`) is on `containerFormats`.
    public static func isContainer(_ format: String) -> Bool {
        let allowed = Set(containerFormats.split(separator: ","))
        return format.split(separator: ",").contains { allowed.contains($0) }
    }

    /// The largest head of a file read to name its demuxer (FFmpeg's own default probe size).
    static let probeBytes = 1 << 20

    /// The name of the demuxer FFmpeg would choose for the local file at `path`, nil when it
    /// cannot be read or FFmpeg knows no demuxer for it. As `av_probe_input_buffer2` does, it
    /// probes the file's name and its first 2 KiB, then twice as much each time, taking the first
    /// answer whose score is above `AVPROBE_SCORE_RETRY` (any score at the last size).
    public static func probedFormat(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var ended = false
        var size = 2048
        while true {
            while !ended, data.count < size {
                let count = read(descriptor, &chunk, min(chunk.count, size - data.count))
                if count < 0, errno == EINTR { continue }
                guard count >= 0 else { return nil }
                if count == 0 { ended = true } else { data += chunk[..<count] }
            }
            let last = ended || size >= probeBytes
            // FFmpeg's probes read past the data by up to AVPROBE_PADDING_SIZE zeroed bytes.
            var padded = data + [UInt8](repeating: 0, count: Int(AVPROBE_PADDING_SIZE))
            var score: Int32 = 0
            let format = path.withCString { name in
                padded.withUnsafeMutableBufferPointer { buffer in
                    var probe = AVProbeData()
                    probe.filename = name
                    probe.buf = buffer.baseAddress
                    probe.buf_size = Int32(data.count)
                    return av_probe_input_format3(&probe, 1, &score)
                }
            }
            if let format, score > (last ? 0 : AVPROBE_SCORE_MAX / 4) { return String(cString: format.pointee.name) }
            if last { return nil }
            size *= 2
        }
    }

    /// Opens `url` (a path, or any URL that libavformat opens) and reads its stream information.
    ///
    /// A path opens with FFmpeg's protocol whitelist set to `file`: media received from someone
    /// else may be a playlist (`.m3u8`), an `ffconcat` list or a reference that names other
    /// protocols (http, tcp, udp, rtmp, `concat:`, `subfile:`), and none of them is opened; the
    /// open fails with a clear error at once, without any connection. A URL the user gave
    /// (`https://…`) opens with the whitelist `webProtocols` (`http,https,tcp,tls`), as an `http(s)`
    /// item does. Every input opens only through the demuxers of `containerFormats`: a text file
    /// is refused as `notContainer`.
    public convenience init(url: String) throws(MediaError) {
        // A URL opens as an `http(s)` item does: only `webProtocols` (nothing a
        // redirect or a playlist names beyond them, no other scheme at all).
        try self.init(name: url, whitelist: MediaFile.isURL(url) ? MediaFile.webProtocols : MediaFile.localProtocols, byteSource: nil)
    }

    /// Opens the still picture at `path` (a PNG, a JPEG or a PPM, as `SnapshotWriter` writes
    /// them), through FFmpeg's picture demuxers only and only as a local file: to read back a
    /// snapshot, never to play.
    public convenience init(picture path: String) throws(MediaError) {
        try self.init(name: path, whitelist: MediaFile.localProtocols, byteSource: nil, formats: MediaFile.pictureFormats)
    }

    /// Opens an item's source and reads its stream information.
    ///
    /// - A file opens as a path does with `init(url:)`: only local files (`localProtocols`).
    /// - An `http(s)` URL opens with the whitelist `webProtocols`: a redirect or a playlist that
    ///   names any other protocol (a local file included) fails with a clear error.
    /// - A byte source is read through a custom input (FFmpeg's AVIO callbacks), seeking by byte
    ///   offset; it may open nothing else. A source that throws fails the open, or ends decoding
    ///   early, with its error in the message.
    public convenience init(item: PlaybackItem) throws(MediaError) {
        switch item.source {
        case .file(let path):
            try self.init(name: path, whitelist: MediaFile.localProtocols, byteSource: nil)
        case .url(let url):
            try self.init(name: url.absoluteString, whitelist: MediaFile.webProtocols, byteSource: nil)
        case .bytes(let source):
            try self.init(name: "\(item.identifier) (a byte source)", whitelist: MediaFile.noProtocols, byteSource: source)
        }
    }

    /// Opens `name` (or `byteSource`, then named `name`) with `whitelist` (nil: no whitelist),
    /// through the demuxers of `formats`.
    private init(name url: String, whitelist: String?, byteSource: (any SeekableByteSource)?,
                 formats: String = MediaFile.containerFormats) throws(MediaError) {
        let input = try byteSource.map { source throws(MediaError) in try ByteSourceInput(source) }
        var context: UnsafeMutablePointer<AVFormatContext>?
        if let input {
            guard let allocated = avformat_alloc_context() else {
                throw MediaError.ffmpeg("avformat_alloc_context", code: tandem_averror(ENOMEM))
            }
            allocated.pointee.pb = input.context
            allocated.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
            context = allocated
        }
        // A local file that FFmpeg would read with a demuxer off `containerFormats` is refused
        // here, in one line (the whitelist below refuses it too, but with a line of FFmpeg's own).
        if input == nil, whitelist == MediaFile.localProtocols, formats == MediaFile.containerFormats,
           let format = MediaFile.probedFormat(url), !MediaFile.isContainer(format) {
            throw MediaError.notContainer(url, format: format)
        }
        var options: OpaquePointer?
        if let whitelist { av_dict_set(&options, "protocol_whitelist", whitelist, 0) }
        av_dict_set(&options, "format_whitelist", formats, 0)
        // On failure, avformat_open_input frees the context (never a custom input's AVIO).
        let opened = avformat_open_input(&context, input == nil ? url : "", nil, &options)
        av_dict_free(&options)
        let restricted = whitelist == MediaFile.localProtocols
        guard opened >= 0, let context else {
            if let failure = input?.failure {
                throw MediaError.io(url, "cannot open it: \(failure)")
            }
            if restricted, MediaFile.isPlaylist(url) {
                throw MediaError.io(url, "cannot open it: \(MediaError.errorText(opened)) (a playlist: what it lists must be local files, "
                    + "and nothing else is opened)")
            }
            if opened == tandem_averror_invaliddata() {
                throw MediaError.notMedia(url, code: opened)
            }
            // FFmpeg refuses a demuxer off the whitelist with EINVAL too: probing tells which.
            if opened == tandem_averror(EINVAL) {
                if input != nil { throw MediaError.notContainer(url, format: nil) }
                if restricted, let format = MediaFile.probedFormat(url), !MediaFile.isContainer(format) {
                    throw MediaError.notContainer(url, format: format)
                }
            }
            // FFmpeg refuses a protocol off the whitelist with EINVAL.
            if restricted && opened == tandem_averror(EINVAL) {
                throw MediaError.io(url, "cannot open it: \(MediaError.errorText(opened)) (a local file may lead only to local files; "
                    + "this one names another protocol or a network address, which is not opened)")
            }
            if whitelist == MediaFile.webProtocols && opened == tandem_averror(EINVAL) {
                throw MediaError.io(url, "cannot open it: \(MediaError.errorText(opened)) (an http(s) item may lead only to "
                    + "\(MediaFile.webProtocols) and only to media containers; it names another protocol or is not media, which is not opened)")
            }
            throw MediaError.cannotOpen(url, code: opened)
        }
        let found = avformat_find_stream_info(context, nil)
        if found < 0 {
            var owned: UnsafeMutablePointer<AVFormatContext>? = context
            avformat_close_input(&owned)
            if let failure = input?.failure { throw MediaError.io(url, "cannot read it: \(failure)") }
            throw MediaError.notMedia(url, code: found)
        }
        let info = MediaFile.describe(context, url: url)
        if info.video == nil && info.audio == nil {
            var owned: UnsafeMutablePointer<AVFormatContext>? = context
            avformat_close_input(&owned)
            throw MediaError.noStreams(url)
        }
        self.url = url
        self.context = context
        self.byteInput = input
        self.info = info
    }

    deinit {
        var owned: UnsafeMutablePointer<AVFormatContext>? = context
        avformat_close_input(&owned)
        // The custom input (if any) is freed after its context, when `byteInput` goes.
    }

    /// The stream at `index`.
    func stream(_ index: Int) -> UnsafeMutablePointer<AVStream> {
        context.pointee.streams[index]!
    }

    /// The index of the best stream of a kind, as FFmpeg chooses it, or nil.
    func bestStream(_ type: AVMediaType) -> Int? {
        let index = av_find_best_stream(context, type, -1, -1, nil, 0)
        return index >= 0 ? Int(index) : nil
    }

    private static func describe(_ context: UnsafeMutablePointer<AVFormatContext>, url: String) -> MediaInfo {
        let format = context.pointee.iformat.pointee
        let timeBase = tandem_av_time_base_q()
        let duration = context.pointee.duration
        let start = context.pointee.start_time
        var streams: [StreamInfo] = []
        for index in 0..<Int(context.pointee.nb_streams) {
            streams.append(describe(context.pointee.streams[index]!, index: index))
        }
        return MediaInfo(
            url: url,
            container: String(cString: format.name),
            containerLongName: format.long_name.map { String(cString: $0) } ?? "",
            duration: MediaTime.nanoseconds(duration, in: timeBase).map(MediaTime.seconds),
            startTime: MediaTime.nanoseconds(start, in: timeBase).map(MediaTime.seconds),
            bitRate: context.pointee.bit_rate > 0 ? Int(context.pointee.bit_rate) : nil,
            streams: streams
        )
    }

    private static func describe(_ stream: UnsafeMutablePointer<AVStream>, index: Int) -> StreamInfo {
        let parameters = stream.pointee.codecpar.pointee
        let kind: StreamInfo.Kind = switch parameters.codec_type {
        case AVMEDIA_TYPE_VIDEO: .video
        case AVMEDIA_TYPE_AUDIO: .audio
        case AVMEDIA_TYPE_SUBTITLE: .subtitle
        default: .other
        }
        let descriptor = avcodec_descriptor_get(parameters.codec_id)
        let timeBase = stream.pointee.time_base
        var info = StreamInfo(
            index: index,
            kind: kind,
            codec: descriptor.map { String(cString: $0.pointee.name) } ?? "unknown",
            codecLongName: descriptor.flatMap { $0.pointee.long_name.map { String(cString: $0) } } ?? "",
            timeBase: "\(timeBase.num)/\(timeBase.den)",
            duration: MediaTime.nanoseconds(stream.pointee.duration, in: timeBase).map(MediaTime.seconds),
            frameCount: stream.pointee.nb_frames > 0 ? Int(stream.pointee.nb_frames) : nil,
            bitRate: parameters.bit_rate > 0 ? Int(parameters.bit_rate) : nil
        )
        switch kind {
        case .video:
            info.width = Int(parameters.width)
            info.height = Int(parameters.height)
            info.pixelFormat = av_get_pix_fmt_name(AVPixelFormat(parameters.format)).map { String(cString: $0) }
            let rate = stream.pointee.avg_frame_rate
            if rate.num > 0 && rate.den > 0 { info.frameRate = av_q2d(rate) }
        case .audio:
            info.sampleRate = Int(parameters.sample_rate)
            info.channels = Int(parameters.ch_layout.nb_channels)
            info.sampleFormat = av_get_sample_fmt_name(AVSampleFormat(parameters.format)).map { String(cString: $0) }
        default:
            break
        }
        return info
    }
}
