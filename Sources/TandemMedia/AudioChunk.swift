import TandemClock

/// Decoded sound in Tandem's fixed PCM format: interleaved signed 16-bit stereo at 48 kHz.
public struct AudioChunk: Sendable {
    /// Samples per second per channel of every chunk.
    public static let sampleRate = 48_000
    /// Channels of every chunk.
    public static let channelCount = 2

    /// The presentation time of the first sample, in nanoseconds of media time.
    public let presentationTime: Int64
    /// Interleaved samples: left, right, left, right, ...
    public let samples: [Int16]

    /// Samples per channel.
    public var frameCount: Int { samples.count / AudioChunk.channelCount }

    /// How long the chunk plays at rate 1, in nanoseconds.
    public var duration: Int64 {
        Int64(frameCount) * 1_000_000_000 / Int64(AudioChunk.sampleRate)
    }

    /// The media time just after the last sample.
    public var endTime: Int64 { presentationTime + duration }
}
