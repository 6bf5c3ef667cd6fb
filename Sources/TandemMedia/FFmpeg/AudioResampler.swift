import CFFmpeg
import TandemClock
import TandemMediaTypes

/// Converts decoded audio of any layout, format and rate to `AudioChunk`'s fixed format with
/// libswresample. It is rebuilt when the input's format changes mid-stream.
final class AudioResampler {
    private var context: OpaquePointer?
    private var inputSignature: (format: Int32, rate: Int32, channels: Int32) = (-1, -1, -1)

    init() {}

    deinit {
        var owned = context
        swr_free(&owned)
    }

    /// Forgets samples buffered inside the resampler, after a seek.
    func reset() {
        var owned = context
        swr_free(&owned)
        context = nil
        inputSignature = (-1, -1, -1)
    }

    /// Converts `frame`, stamped `presentationTime`. The chunk is stamped with its own first
    /// sample's instant: a resampler between rates holds samples back (its filter's delay), so
    /// what comes out first is that much older than the frame that went in.
    func convert(_ frame: UnsafeMutablePointer<AVFrame>, presentationTime: Int64) throws(MediaError) -> AudioChunk {
        let input = frame.pointee
        try configure(for: frame)
        let held = swr_get_delay(context, Int64(AudioChunk.sampleRate))
        let outputCapacity = Int(av_rescale_rnd(
            swr_get_delay(context, Int64(input.sample_rate)) + Int64(input.nb_samples),
            Int64(AudioChunk.sampleRate), Int64(input.sample_rate), AV_ROUND_UP
        ))
        var samples = [Int16](repeating: 0, count: max(outputCapacity, 0) * AudioChunk.channelCount)
        let converted: Int32 = samples.withUnsafeMutableBytes { bytes in
            var output: UnsafeMutablePointer<UInt8>? = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
            return input.extended_data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { planes in
                swr_convert(context, &output, Int32(outputCapacity), planes, input.nb_samples)
            }
        }
        try check(converted, "swr_convert")
        samples.removeLast(samples.count - Int(converted) * AudioChunk.channelCount)
        let heldTime = held * 1_000_000_000 / Int64(AudioChunk.sampleRate)
        return AudioChunk(presentationTime: presentationTime - Int64(heldTime), samples: samples)
    }

    private func configure(for frame: UnsafeMutablePointer<AVFrame>) throws(MediaError) {
        let signature = (frame.pointee.format, frame.pointee.sample_rate, frame.pointee.ch_layout.nb_channels)
        if context != nil && signature == inputSignature { return }
        reset()
        var outputLayout = AVChannelLayout()
        av_channel_layout_default(&outputLayout, Int32(AudioChunk.channelCount))
        defer { av_channel_layout_uninit(&outputLayout) }
        var inputLayout = AVChannelLayout()
        defer { av_channel_layout_uninit(&inputLayout) }
        if av_channel_layout_check(&frame.pointee.ch_layout) != 0 {
            try check(av_channel_layout_copy(&inputLayout, &frame.pointee.ch_layout), "av_channel_layout_copy")
        } else {
            av_channel_layout_default(&inputLayout, max(frame.pointee.ch_layout.nb_channels, 1))
        }
        var created: OpaquePointer?
        try check(swr_alloc_set_opts2(
            &created,
            &outputLayout, AV_SAMPLE_FMT_S16, Int32(AudioChunk.sampleRate),
            &inputLayout, AVSampleFormat(frame.pointee.format), frame.pointee.sample_rate,
            0, nil
        ), "swr_alloc_set_opts2")
        let initialised = swr_init(created)
        if initialised < 0 {
            swr_free(&created)
            throw MediaError.ffmpeg("swr_init", code: initialised)
        }
        context = created
        inputSignature = signature
    }
}
