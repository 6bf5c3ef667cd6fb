import CFFmpeg
import TandemMediaTypes

/// The errors that carry FFmpeg's own words, and the check of an FFmpeg call's result.
extension MediaError {
    /// The input could not be opened (missing, unreadable, or an unknown protocol).
    public static func cannotOpen(_ url: String, code: Int32) -> MediaError {
        MediaError(.cannotOpen, context: url, detail: errorText(code), ffmpegCode: code)
    }

    /// The input opened but holds nothing that FFmpeg recognises as media.
    public static func notMedia(_ url: String, code: Int32) -> MediaError {
        MediaError(.notMedia, context: url, detail: errorText(code), ffmpegCode: code)
    }

    /// An FFmpeg call returned a negative code.
    public static func ffmpeg(_ call: String, code: Int32) -> MediaError {
        MediaError(.ffmpeg, context: call, detail: errorText(code), ffmpegCode: code)
    }

    /// FFmpeg's text for an error code, from `av_strerror`.
    static func errorText(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        if av_strerror(code, &buffer, buffer.count) < 0 {
            return "error \(code)"
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Returns `result` when it is not negative; otherwise throws the FFmpeg error for `call`.
@discardableResult
func check(_ result: Int32, _ call: @autoclosure () -> String) throws(MediaError) -> Int32 {
    if result < 0 { throw MediaError.ffmpeg(call(), code: result) }
    return result
}
