import CFFmpeg
import Foundation
import TandemClock
import TandemMediaTypes

/// Writes the picture on screen at a given media time to a PNG or PPM file.
public enum SnapshotWriter {
    /// Decodes `url` at `mediaTime` (accurately: the frame that covers it) and writes that
    /// picture to `path`, as PNG when the path ends in `.png` and as binary PPM otherwise.
    /// Returns the presentation time of the frame written.
    @discardableResult
    public static func write(url: String, at mediaTime: Int64, to path: String) throws(MediaError) -> Int64 {
        let file = try MediaFile(url: url)
        let decoder = try MediaDecoder(file: file, decodeVideo: true, decodeAudio: false)
        try decoder.seek(to: mediaTime)
        while let decoded = try decoder.next() {
            guard case .video(let frame) = decoded else { continue }
            try write(frame.rgbImage(), to: path)
            return frame.presentationTime
        }
        throw MediaError.invalidArgument("snapshot", "\(url) has no picture at \(MediaTime.seconds(mediaTime)) s")
    }

    /// Writes `image` to `path`, as PNG when the path ends in `.png` and as binary PPM otherwise.
    public static func write(_ image: RGBImage, to path: String) throws(MediaError) {
        let bytes = path.lowercased().hasSuffix(".png") ? try png(image) : ppm(image)
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        } catch {
            throw MediaError.io(path, "cannot write the snapshot: \(error.localizedDescription)")
        }
    }

    /// The image as a binary PPM (P6) file.
    static func ppm(_ image: RGBImage) -> [UInt8] {
        Array("P6\n\(image.width) \(image.height)\n255\n".utf8) + image.pixels
    }

    /// The image as a PNG file, encoded by libavcodec's PNG encoder.
    static func png(_ image: RGBImage) throws(MediaError) -> [UInt8] {
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_PNG) else {
            throw MediaError.unsupportedCodec("PNG snapshot", "this FFmpeg has no PNG encoder")
        }
        guard let context = avcodec_alloc_context3(codec), let frame = av_frame_alloc(), let packet = av_packet_alloc() else {
            throw MediaError.ffmpeg("allocating the PNG encoder", code: tandem_averror(ENOMEM))
        }
        var ownedContext: UnsafeMutablePointer<AVCodecContext>? = context
        var ownedFrame: UnsafeMutablePointer<AVFrame>? = frame
        var ownedPacket: UnsafeMutablePointer<AVPacket>? = packet
        defer {
            avcodec_free_context(&ownedContext)
            av_frame_free(&ownedFrame)
            av_packet_free(&ownedPacket)
        }
        context.pointee.width = Int32(image.width)
        context.pointee.height = Int32(image.height)
        context.pointee.pix_fmt = AV_PIX_FMT_RGB24
        context.pointee.time_base = AVRational(num: 1, den: 1)
        try check(avcodec_open2(context, codec, nil), "avcodec_open2 (png)")
        frame.pointee.width = Int32(image.width)
        frame.pointee.height = Int32(image.height)
        frame.pointee.format = AV_PIX_FMT_RGB24.rawValue
        try check(av_frame_get_buffer(frame, 0), "av_frame_get_buffer")
        let stride = Int(frame.pointee.linesize.0)
        let rowBytes = image.width * 3
        image.pixels.withUnsafeBufferPointer { source in
            for row in 0..<image.height {
                (frame.pointee.data.0! + row * stride).update(from: source.baseAddress! + row * rowBytes, count: rowBytes)
            }
        }
        try check(avcodec_send_frame(context, frame), "avcodec_send_frame (png)")
        try check(avcodec_send_frame(context, nil), "avcodec_send_frame (png)")
        var output: [UInt8] = []
        while avcodec_receive_packet(context, packet) >= 0 {
            output.append(contentsOf: UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
            av_packet_unref(packet)
        }
        guard !output.isEmpty else { throw MediaError.ffmpeg("encoding PNG", code: tandem_averror(EINVAL)) }
        return output
    }
}
