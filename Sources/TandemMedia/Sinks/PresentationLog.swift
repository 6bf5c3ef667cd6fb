#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// A video sink that writes one JSON line per presented frame:
/// `{"item": ..., "pts": seconds, "scheduled_ns": ..., "presented_ns": ...}`, both instants on
/// the raw CLOCK_MONOTONIC, and `"still": true` for the still picture of a paused timeline.
///
/// Lines are buffered in memory and written in blocks, so that logging costs the presentation
/// thread microseconds; `close()` (or deinit) writes the rest.
public final class PresentationLog: VideoSink {
    /// The file being written.
    public let path: String
    private let state: Mutex<(descriptor: Int32, buffer: [UInt8])>
    private static let flushThreshold = 64 * 1024

    /// Creates (or truncates) the log file at `path`.
    public init(path: String) throws(MediaError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw MediaError.io(path, "cannot create the presentation log: \(String(cString: strerror(errno)))")
        }
        self.path = path
        state = Mutex((descriptor, []))
    }

    deinit {
        close()
    }

    /// Buffers the frame's line; a full buffer is written at once.
    public func present(_ frame: VideoFrame, _ presentation: Presentation) {
        let line = PresentationLog.line(frame.presentationTime, presentation)
        state.withLock { state in
            state.buffer.append(contentsOf: line.utf8)
            if state.buffer.count >= PresentationLog.flushThreshold {
                PresentationLog.write(&state)
            }
        }
    }

    /// Writes what is buffered.
    public func flush() {
        state.withLock { PresentationLog.write(&$0) }
    }

    /// Writes what is buffered and closes the file; later frames are not logged.
    public func close() {
        state.withLock { state in
            PresentationLog.write(&state)
            if state.descriptor >= 0 {
                Glibc.close(state.descriptor)
                state.descriptor = -1
            }
        }
    }

    static func line(_ pts: Nanoseconds, _ presentation: Presentation) -> String {
        var item = ""
        for scalar in presentation.item.unicodeScalars {
            switch scalar {
            case "\"": item += "\\\""
            case "\\": item += "\\\\"
            case _ where scalar.value < 0x20: item += String(format: "\\u%04x", scalar.value)
            default: item.unicodeScalars.append(scalar)
            }
        }
        let seconds = String(format: "%.9f", MediaTime.seconds(pts))
        let still = presentation.isStill ? ",\"still\":true" : ""
        return "{\"item\":\"\(item)\",\"pts\":\(seconds),\"scheduled_ns\":\(presentation.scheduled),\"presented_ns\":\(presentation.presented)\(still)}\n"
    }

    private static func write(_ state: inout (descriptor: Int32, buffer: [UInt8])) {
        guard state.descriptor >= 0, !state.buffer.isEmpty else { return }
        let descriptor = state.descriptor
        _ = state.buffer.withUnsafeBytes { writeFully(descriptor, $0) }
        state.buffer.removeAll(keepingCapacity: true)
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

    enum CodingKeys: String, CodingKey {
        case item, pts, still
        case scheduledNanoseconds = "scheduled_ns"
        case presentedNanoseconds = "presented_ns"
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
