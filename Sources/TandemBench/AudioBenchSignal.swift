#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TandemNet

/// The sound the audio bench plays: broadband noise (white, low-passed at 80 % of the Nyquist
/// frequency so that its correlation is smooth between samples), with a click every
/// `clickInterval` s of media, each after a short gap of silence, so that its onset can be found
/// at any rate. The same seed gives the same samples, so the bench knows what it gave every
/// player without decoding it back.
public struct AudioBenchSignal: Sendable {
    /// Samples a second.
    public static let sampleRate = 48_000
    /// Seconds of sound.
    public var seconds: Double
    /// The noise generator's seed (each item of the bench's queue has its own).
    public var seed: UInt64
    /// Seconds of media between clicks.
    public var clickInterval = 0.5
    /// The noise's peak amplitude (full scale 1), below the click detector's threshold.
    public var noiseAmplitude: Float = 0.25
    /// The click's peak amplitude.
    public var clickAmplitude: Float = 0.9
    /// Samples of silence before each click.
    public var gapSamples = 192
    /// Samples the click lasts (a half sine), then as many of silence.
    public var clickSamples = 24

    /// `seconds` of the signal made from `seed`.
    public init(seconds: Double, seed: UInt64) {
        self.seconds = seconds
        self.seed = seed
    }

    /// Where each click begins, in samples; the first half a click interval in.
    public var clickStarts: [Int] {
        let count = Int(Double(sampleCount) / (clickInterval * Double(Self.sampleRate)))
        return (0..<count).map { Int((Double($0) + 0.5) * clickInterval * Double(Self.sampleRate)) }
            .filter { $0 + gapSamples + 2 * clickSamples < sampleCount }
    }

    /// Where each click's onset lies (its half-sine passes the detector's threshold), in samples.
    public func clickOnsets(threshold: Float = AudioClicks.Detector().threshold) -> [Double] {
        let phase = asin(Double(threshold / clickAmplitude)) / Double.pi * Double(clickSamples)
        return clickStarts.map { Double($0 + gapSamples) + phase }
    }

    /// The number of samples.
    public var sampleCount: Int { Int(seconds * Double(Self.sampleRate)) }

    /// The samples, full scale 1.
    public func samples() -> [Float] {
        var generator = SeededRandom(seed: seed)
        let taps = Self.lowPass
        let white = (0..<(sampleCount + taps.count)).map { _ in Float(generator.unit() * 2 - 1) }
        var samples = [Float](repeating: 0, count: sampleCount)
        var peak: Float = 0
        for index in 0..<sampleCount {
            var sum: Float = 0
            for (tap, weight) in taps.enumerated() { sum += weight * white[index + tap] }
            samples[index] = sum
            peak = max(peak, abs(sum))
        }
        let scale = peak > 0 ? noiseAmplitude / peak : 0
        for index in 0..<sampleCount { samples[index] *= scale }
        for start in clickStarts {
            for index in start..<(start + gapSamples) { samples[index] = 0 }
            for index in 0..<clickSamples {
                samples[start + gapSamples + index] = clickAmplitude * Float(sin(Double.pi * Double(index) / Double(clickSamples)))
            }
            for index in 0..<clickSamples { samples[start + gapSamples + clickSamples + index] = 0 }
        }
        return samples
    }

    /// A windowed-sinc low-pass at 80 % of the Nyquist frequency, 31 taps.
    static let lowPass: [Float] = {
        let count = 31
        let cutoff = 0.8
        let middle = Double(count - 1) / 2
        let taps = (0..<count).map { index -> Double in
            let x = Double(index) - middle
            let sinc = x == 0 ? cutoff : sin(Double.pi * cutoff * x) / (Double.pi * x)
            return sinc * (0.54 - 0.46 * cos(2 * Double.pi * Double(index) / Double(count - 1)))
        }
        let sum = taps.reduce(0, +)
        return taps.map { Float($0 / sum) }
    }()

    /// Writes the samples as a Matroska file at `path`, the sound as 16-bit PCM (so that every
    /// player decodes exactly these samples) beside a small test-pattern picture (the built-in
    /// player paces itself by pictures too), with `ffmpeg` from the PATH.
    public func writeMedia(to path: String, samples: [Float], timeout: Double = 60) throws {
        let raw = path + ".s16le"
        var bytes = [UInt8]()
        bytes.reserveCapacity(samples.count * 2)
        for sample in samples {
            let value = Int16(clamping: Int((sample * 32767).rounded()))
            bytes.append(UInt8(truncatingIfNeeded: value))
            bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        }
        try Data(bytes).write(to: URL(fileURLWithPath: raw))
        defer { try? FileManager.default.removeItem(atPath: raw) }
        guard let ffmpeg = AudioChildProcess.find("ffmpeg") else { throw BenchmarkError("ffmpeg is not installed") }
        let result = try AudioChildProcess.run(ffmpeg, [
            "-nostdin", "-v", "error", "-y",
            "-f", "s16le", "-ar", "\(Self.sampleRate)", "-ac", "1", "-i", raw,
            "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30:duration=\(seconds)",
            "-map", "1:v", "-map", "0:a", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-g", "30",
            "-c:a", "pcm_s16le", "-shortest", path,
        ], environment: [:], timeout: timeout)
        guard result.status == 0 else {
            throw BenchmarkError("ffmpeg could not make the audio bench's media: \(result.errors.split(separator: "\n").last ?? "")")
        }
    }
}
