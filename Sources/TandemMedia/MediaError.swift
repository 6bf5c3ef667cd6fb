import CFFmpeg

/// An error from the media layer: what failed, on which input, and FFmpeg's own words for it.
public struct MediaError: Error, CustomStringConvertible, Sendable {
    private enum Code: Sendable {
        case cannotOpen, notMedia, noStreams, noVideo, unsupportedCodec, ffmpeg, io, invalidArgument
        case notWhileCoordinated, proposalRefused
    }

    private let code: Code
    /// What was being done, for example the FFmpeg call or the file being written.
    public let context: String
    /// The detail: FFmpeg's error text, or an explanation.
    public let detail: String
    /// FFmpeg's (negative) error code, when the error came from FFmpeg.
    public let ffmpegCode: Int32?

    private init(_ code: Code, context: String, detail: String, ffmpegCode: Int32? = nil) {
        self.code = code
        self.context = context
        self.detail = detail
        self.ffmpegCode = ffmpegCode
    }

    /// A line for people to read.
    public var description: String {
        switch code {
        case .cannotOpen: "cannot open \(context): \(detail)"
        case .notMedia: "\(context) is not a media file that FFmpeg can read: \(detail)"
        case .noStreams: "\(context) has no audio or video streams"
        case .noVideo: "\(context) has no video stream"
        case .unsupportedCodec: "\(context): \(detail)"
        case .ffmpeg: "\(context) failed: \(detail)"
        case .io: "\(context): \(detail)"
        case .invalidArgument: "\(context): \(detail)"
        case .notWhileCoordinated: "\(context) names a local instant, which a coordinated player cannot: \(detail)"
        case .proposalRefused: "the group could not be asked to \(context): \(detail)"
        }
    }

    /// The input could not be opened (missing, unreadable, or an unknown protocol).
    public static func cannotOpen(_ url: String, code: Int32) -> MediaError {
        MediaError(.cannotOpen, context: url, detail: errorText(code), ffmpegCode: code)
    }

    /// The input opened but holds nothing that FFmpeg recognises as media.
    public static func notMedia(_ url: String, code: Int32) -> MediaError {
        MediaError(.notMedia, context: url, detail: errorText(code), ffmpegCode: code)
    }

    /// The input holds no stream that Tandem can play.
    public static func noStreams(_ url: String) -> MediaError {
        MediaError(.noStreams, context: url, detail: "")
    }

    /// A video frame was asked of an input without video.
    public static func noVideo(_ url: String) -> MediaError {
        MediaError(.noVideo, context: url, detail: "")
    }

    /// No decoder or encoder is available for a codec.
    public static func unsupportedCodec(_ context: String, _ detail: String) -> MediaError {
        MediaError(.unsupportedCodec, context: context, detail: detail)
    }

    /// An FFmpeg call returned a negative code.
    public static func ffmpeg(_ call: String, code: Int32) -> MediaError {
        MediaError(.ffmpeg, context: call, detail: errorText(code), ffmpegCode: code)
    }

    /// Reading or writing a file failed.
    public static func io(_ path: String, _ detail: String) -> MediaError {
        MediaError(.io, context: path, detail: detail)
    }

    /// A caller passed a value outside what the operation accepts.
    public static func invalidArgument(_ what: String, _ detail: String) -> MediaError {
        MediaError(.invalidArgument, context: what, detail: detail)
    }

    /// A call that names a local instant (`at:`) was made while the player is coordinated
    /// with a group, which decides when every change takes effect.
    public static func notWhileCoordinated(_ call: String) -> MediaError {
        MediaError(.notWhileCoordinated, context: call,
                   detail: "the group chooses the instant; call it without `at:` to propose the change to the group")
    }

    /// A coordinated player's change could not be proposed to the group: the coordinator
    /// refused it (a value every participant would skip) or is not connected.
    public static func proposalRefused(_ change: String, _ detail: String) -> MediaError {
        MediaError(.proposalRefused, context: change, detail: detail)
    }

    /// Whether the error is `notWhileCoordinated`.
    public var isNotWhileCoordinated: Bool { code == .notWhileCoordinated }

    /// Whether the error is `proposalRefused`.
    public var isProposalRefused: Bool { code == .proposalRefused }

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
