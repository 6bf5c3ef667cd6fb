/// An error from the media layer: what failed, on which input, and FFmpeg's own words for it.
public struct MediaError: Error, CustomStringConvertible, Sendable {
    /// Which kind of failure it is (the FFmpeg errors are made in TandemMedia).
    package enum Code: Sendable {
        case cannotOpen, notMedia, notContainer, noStreams, noVideo, unsupportedCodec, ffmpeg, io, invalidArgument
        case notWhileCoordinated, proposalRefused
    }

    /// Which kind of failure it is.
    package let code: Code
    /// What was being done, for example the FFmpeg call or the file being written.
    public let context: String
    /// The detail: FFmpeg's error text, or an explanation.
    public let detail: String
    /// FFmpeg's (negative) error code, when the error came from FFmpeg.
    public let ffmpegCode: Int32?

    /// An error of `code`; the public factories below (and TandemMedia's FFmpeg ones) make them.
    package init(_ code: Code, context: String, detail: String, ffmpegCode: Int32? = nil) {
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
        case .notContainer: "\(context) is not a supported media container\(detail)"
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

    /// The input is not in a media container Tandem opens (FFmpeg would read it with the demuxer
    /// `format`, when known, such as `tty` for a text file), so it is neither played nor served.
    public static func notContainer(_ url: String, format: String?) -> MediaError {
        MediaError(.notContainer, context: url, detail: format.map { " (FFmpeg would read it as '\($0)')" } ?? "")
    }

    /// Whether the error is `notContainer`.
    public var isNotContainer: Bool { code == .notContainer }

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
}
