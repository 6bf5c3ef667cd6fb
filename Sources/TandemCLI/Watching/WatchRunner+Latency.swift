import TandemMedia
import TandemParty

/// The watch's latency offset: `--latency-offset MS` to start with, keys `-`
/// and `=` (10 ms down or up) and the line command `offset MS` to change it live, shown on the
/// status line while it is not 0 and reported as `{"event":"latency-offset","ms":MS}`. Positive
/// presents earlier, for an output that lags. It is local: nothing of it goes on the wire.
extension WatchRunner {
    /// How far a key moves it (ms).
    static let latencyStep = 10

    /// `offset MS`: the new offset, a whole number of ms within `WatchOptions.latencyOffsets`.
    func offsetArgument(_ words: [String]) throws(CLIError) -> Int {
        guard words.count == 2, let value = Int(words[1]), WatchOptions.latencyOffsets.contains(value) else {
            throw .usage("'\(words.joined(separator: " "))' wants a whole number of ms from -1000 to 1000 (positive presents earlier)")
        }
        return value
    }

    /// The status line's note, nil at 0.
    static func latencyText(_ milliseconds: Int) -> String? {
        milliseconds == 0 ? nil : "offset \(milliseconds > 0 ? "+" : "")\(milliseconds) ms"
    }
}

extension WatchRunner {
    /// `volume N`: the new volume, a whole number of percent from 0 to 150.
    func volumeArgument(_ words: [String]) throws(CLIError) -> Int {
        guard words.count == 2, let value = Int(words[1]), (0...HeadlessPlayer.maximumVolume).contains(value) else {
            throw .usage("'\(words.joined(separator: " "))' wants a whole number of percent from 0 to \(HeadlessPlayer.maximumVolume)")
        }
        return value
    }
}
