import Foundation

/// A video sink that writes one JSON line per presented frame:
/// `{"item": ..., "pts": seconds, "scheduled_ns": ..., "presented_ns": ...}`, both instants on
/// the raw CLOCK_MONOTONIC, and `"still": true` for the still picture of a paused timeline. A
/// frame presented more than `lateThreshold` (1 ms) after its instant also says when the decoder
/// queued it, `"queued_ns"`: after its instant, the frame came late; before, the player woke late.
///
/// A player that does not present frames itself (mpv) writes its readings of its own position
/// instead, with `write(_:)`: `"reading": true`.
///
/// Lines are buffered in memory and written in blocks, so that logging costs the presentation
/// thread microseconds; `close()` (or deinit) writes the rest.
public final class PresentationLog: Sendable {
    /// The file being written.
    public var path: String { file.path }
    private let file: BufferedLineFile
    /// How late a frame is presented before its line says when it was queued (1 ms).
    public static let lateThreshold: Int64 = 1_000_000

    /// Creates (or truncates) the log file at `path`.
    public init(path: String) throws(MediaError) {
        file = try BufferedLineFile(path: path, what: "presentation log", threshold: 64 * 1024)
    }

    /// Buffers `line`; a full buffer is written at once.
    package func append(_ line: String) {
        file.append(line)
    }

    /// Buffers `record`'s line (a player's reading of its position, say); a full buffer is
    /// written at once.
    public func write(_ record: PresentationRecord) {
        let line = PresentationLog.line(item: record.item, pts: record.pts, scheduled: record.scheduledNanoseconds,
                                        presented: record.presentedNanoseconds, still: record.still == true,
                                        reading: record.reading == true, queued: record.queuedNanoseconds)
        append(line)
    }

    /// Writes what is buffered.
    public func flush() {
        file.flush()
    }

    /// Writes what is buffered and closes the file; later frames are not logged.
    public func close() {
        file.close()
    }

    /// One JSON line of the log.
    package static func line(item name: String, pts: Double, scheduled: Int64, presented: Int64, still: Bool, reading: Bool,
                             queued: Int64? = nil) -> String {
        let item = BufferedLineFile.jsonString(name)
        let seconds = String(format: "%.9f", pts)
        let flags = (still ? ",\"still\":true" : "") + (reading ? ",\"reading\":true" : "") + (queued.map { ",\"queued_ns\":\($0)" } ?? "")
        return "{\"item\":\(item),\"pts\":\(seconds),\"scheduled_ns\":\(scheduled),\"presented_ns\":\(presented)\(flags)}\n"
    }
}

/// One line of a presentation log, read back.
public struct PresentationRecord: Sendable, Codable, Equatable {
    /// The item's identifier.
    public var item: String
    /// The frame's media time in seconds.
    public var pts: Double
    /// The instant the timeline gave it (CLOCK_MONOTONIC nanoseconds).
    public var scheduledNanoseconds: Int64
    /// The instant it was presented (CLOCK_MONOTONIC nanoseconds).
    public var presentedNanoseconds: Int64
    /// Whether it was the still picture of a paused timeline.
    public var still: Bool?
    /// Whether this is a player's report of its position (mpv's, read over its IPC), not a
    /// presented frame: `pts` is the position it reported, `presented_ns` the instant the report
    /// refers to, `scheduled_ns` the instant the shared timeline gives that position.
    public var reading: Bool?
    /// When the player's decoder queued the frame (CLOCK_MONOTONIC nanoseconds), given for a
    /// frame presented more than `PresentationLog.lateThreshold` after its instant.
    public var queuedNanoseconds: Int64?

    enum CodingKeys: String, CodingKey {
        case item, pts, still, reading
        case scheduledNanoseconds = "scheduled_ns"
        case presentedNanoseconds = "presented_ns"
        case queuedNanoseconds = "queued_ns"
    }

    /// A record; `still` and `reading` are left out of its line unless true, `queuedNanoseconds`
    /// unless given.
    public init(item: String, pts: Double, scheduledNanoseconds: Int64, presentedNanoseconds: Int64, still: Bool? = nil,
                reading: Bool? = nil, queuedNanoseconds: Int64? = nil) {
        self.item = item
        self.pts = pts
        self.scheduledNanoseconds = scheduledNanoseconds
        self.presentedNanoseconds = presentedNanoseconds
        self.still = still
        self.reading = reading
        self.queuedNanoseconds = queuedNanoseconds
    }

    /// Reads every record of the log at `path`.
    public static func read(path: String) throws -> [PresentationRecord] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let decoder = JSONDecoder()
        return try text.split(separator: "\n").map { line in
            try decoder.decode(PresentationRecord.self, from: Data(line.utf8))
        }
    }
}
