import CFFmpeg
import TandemMediaTypes

/// Converts decoded pictures to packed RGB with libswscale, keeping its context between calls
/// of the same geometry.
final class PixelConverter {
    private var context: OpaquePointer?

    init() {}

    deinit {
        sws_freeContext(context)
    }

    func convert(_ frame: VideoFrame, width: Int, height: Int) throws(MediaError) -> RGBImage {
        guard width > 0, height > 0, width <= 16384, height <= 16384 else {
            throw MediaError.invalidArgument("image size", "\(width)x\(height) is out of range")
        }
        return try frame.withPicture { source throws(MediaError) in try convert(source, width: width, height: height) }
    }

    private func convert(_ source: UnsafeMutablePointer<AVFrame>, width: Int, height: Int) throws(MediaError) -> RGBImage {
        context = sws_getCachedContext(
            context,
            source.pointee.width, source.pointee.height, AVPixelFormat(source.pointee.format),
            Int32(width), Int32(height), AV_PIX_FMT_RGB24,
            SWS_BILINEAR, nil, nil, nil
        )
        guard let context else {
            throw MediaError.unsupportedCodec("sws_getCachedContext", "cannot convert this pixel format to RGB")
        }
        let stride = width * 3
        var pixels = [UInt8](repeating: 0, count: stride * height)
        let converted: Int32 = pixels.withUnsafeMutableBufferPointer { buffer in
            var planes: [UnsafeMutablePointer<UInt8>?] = [buffer.baseAddress, nil, nil, nil]
            var strides: [Int32] = [Int32(stride), 0, 0, 0]
            return withUnsafePointer(to: &source.pointee.data) { data in
                withUnsafePointer(to: &source.pointee.linesize) { lines in
                    data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { sourcePlanes in
                        lines.withMemoryRebound(to: Int32.self, capacity: 8) { sourceStrides in
                            sws_scale(context, sourcePlanes, sourceStrides, 0, source.pointee.height, &planes, &strides)
                        }
                    }
                }
            }
        }
        guard converted == Int32(height) else {
            throw MediaError.ffmpeg("sws_scale", code: converted < 0 ? converted : tandem_averror(EINVAL))
        }
        return RGBImage(width: width, height: height, pixels: pixels)
    }
}
