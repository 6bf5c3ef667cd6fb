/// What a media file holds: its container, duration and streams, as `tandem probe` prints it.
public struct MediaInfo: Sendable, Codable, Equatable {
    /// The URL or path that was opened.
    public var url: String
    /// The container's short name, for example `mov,mp4,m4a,3gp,3g2,mj2`.
    public var container: String
    /// The container's long name, for example `QuickTime / MOV`.
    public var containerLongName: String
    /// The duration in seconds, when the container states it.
    public var duration: Double?
    /// The first presentation time in seconds, when the container states it.
    public var startTime: Double?
    /// The overall bit rate in bits per second, when known.
    public var bitRate: Int?
    /// Every stream, in the container's order.
    public var streams: [StreamInfo]

    /// The first video stream, if any.
    public var video: StreamInfo? { streams.first { $0.kind == .video } }
    /// The first audio stream, if any.
    public var audio: StreamInfo? { streams.first { $0.kind == .audio } }
}

/// One stream of a media file.
public struct StreamInfo: Sendable, Codable, Equatable {
    /// What a stream carries.
    public enum Kind: String, Sendable, Codable {
        /// Pictures.
        case video
        /// Sound.
        case audio
        /// Subtitles.
        case subtitle
        /// Anything else (data, attachments).
        case other
    }

    /// The stream's index in the container.
    public var index: Int
    /// What it carries.
    public var kind: Kind
    /// The codec's short name, for example `h264`.
    public var codec: String
    /// The codec's long name.
    public var codecLongName: String
    /// The time base of its timestamps, as `numerator/denominator` seconds.
    public var timeBase: String
    /// The duration in seconds, when the stream states it.
    public var duration: Double?
    /// The number of frames, when the container states it.
    public var frameCount: Int?
    /// The bit rate in bits per second, when known.
    public var bitRate: Int?
    /// Picture width in pixels (video).
    public var width: Int?
    /// Picture height in pixels (video).
    public var height: Int?
    /// Pixel format name (video), for example `yuv420p`.
    public var pixelFormat: String?
    /// Average frame rate in frames per second (video).
    public var frameRate: Double?
    /// Samples per second (audio).
    public var sampleRate: Int?
    /// Channel count (audio).
    public var channels: Int?
    /// Sample format name (audio), for example `fltp`.
    public var sampleFormat: String?
}
