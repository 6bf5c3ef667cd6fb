import Foundation
import Testing
import TandemPlayerSupport

/// Code written against `TandemPlayerSupport`, with that one import, compiles and runs: the module
/// re-exports `TandemMediaTypes` and `TandemClock`, which hold its types.
@Suite struct PlayerSupportCompatibilityIOTests {
    @Test("the presentation log, media time, the monotonic clock and media locations through TandemPlayerSupport's import alone")
    func presentationLogRoundTrip() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("player-support-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let log = try PresentationLog(path: path)
        let presented: Int64 = HostInstant.now().nanoseconds
        let record = PresentationRecord(item: "movie", pts: 1.5, scheduledNanoseconds: presented - MediaTime.nanoseconds(seconds: 0.5),
                                        presentedNanoseconds: presented)
        log.write(record)
        log.close()
        #expect(try PresentationRecord.read(path: path) == [record])
        #expect(MediaTime.seconds(record.presentedNanoseconds - record.scheduledNanoseconds) == 0.5)
        #expect(MediaLocation.isURL("https://example.org/movie.mp4"))
        #expect(!MediaLocation.isURL("/tmp/movie.mp4"))
    }

    @Test("a presentation log that cannot be created throws MediaError with its path")
    func unwritableLog() {
        let path = "/nonexistent-directory/\(UUID().uuidString)/log.jsonl"
        let error = #expect(throws: MediaError.self) { try PresentationLog(path: path) }
        #expect(error?.description.contains(path) == true)
    }
}
