import Foundation
import Testing
import TandemMedia
import TandemTestKit
import TandemClock
import TandemMediaTypes

/// The built-in player's latency offset: with an offset, every frame is
/// presented that much earlier than its timeline gives it (later for a negative one), as its
/// presentation log records, and a change while playing moves the frames after it. The timeline
/// itself, and the position the player reports against it, stay the group's.
@Suite(.serialized) struct LatencyOffsetIOTests {
    /// Plays `SampleClip.h264` from its start at one instant on three players: without an
    /// offset, +150 ms (back to 0 halfway) and −100 ms, and compares their presentation logs.
    @Test func framesArePresentedEarlierByTheOffsetAndMoveWhenItChanges() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let anchor = HostInstant.now().nanoseconds + 400_000_000
        let timeline = PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: anchor))
        var players: [HeadlessPlayer] = []
        var logs: [PresentationLog] = []
        for (index, offset) in [Int64(0), 150_000_000, -100_000_000].enumerated() {
            let log = try PresentationLog(path: fixtures.path("log-\(index).jsonl"))
            var options = HeadlessPlayer.Options()
            options.decodeAudio = false
            options.latencyOffset = offset
            players.append(try HeadlessPlayer(url: SampleClip.h264.path, options: options, videoSinks: [log], timeline: timeline))
            logs.append(log)
        }
        defer { for player in players { player.close() } }
        #expect(players.map(\.latencyOffset) == [0, 150_000_000, -100_000_000])
        // The position against the timeline is the group's, whatever the offset.
        let probe = anchor + 1_000_000_000
        #expect(Set(players.map { $0.mediaTime(atLocalTime: probe) }).count == 1)
        // Halfway through the 4 s clip, the second player's offset goes back to 0.
        Thread.sleep(forTimeInterval: Double(anchor - HostInstant.now().nanoseconds) / 1e9 + 2)
        let changedAt = HostInstant.now().nanoseconds
        players[1].latencyOffset = 0
        #expect(players.allSatisfy { $0.waitUntilEnded(timeout: 10) })
        for log in logs { log.close() }

        func schedule(_ index: Int) throws -> [Double: PresentationRecord] {
            let records = try PresentationRecord.read(path: fixtures.path("log-\(index).jsonl")).filter { $0.still != true }
            return Dictionary(records.map { ($0.pts, $0) }, uniquingKeysWith: { first, _ in first })
        }
        let plain = try schedule(0), earlier = try schedule(1), later = try schedule(2)
        #expect(plain.count > 80, "frames presented: \(plain.count)")
        // Each frame's instant, as the schedule gives it, moves by the offset exactly.
        var before = 0, after = 0
        for (pts, record) in plain {
            if let other = later[pts] {
                #expect(other.scheduledNanoseconds - record.scheduledNanoseconds == 100_000_000, "pts \(pts)")
            }
            guard let other = earlier[pts] else { continue }
            let shift = record.scheduledNanoseconds - other.scheduledNanoseconds
            if other.scheduledNanoseconds < changedAt - 50_000_000 {
                #expect(shift == 150_000_000, "pts \(pts) before the change")
                before += 1
            } else if record.scheduledNanoseconds > changedAt + 250_000_000 {
                // (Up to 150 ms of the timeline past the change was presented before it.)
                #expect(shift == 0, "pts \(pts) after the change")
                after += 1
            }
        }
        #expect(before > 30 && after > 30, "before \(before), after \(after)")
        // And the frames really were presented then (the median, loosely: the machine is shared).
        let lateness = earlier.values.filter { $0.scheduledNanoseconds < changedAt - 50_000_000 }
            .compactMap { record in plain[record.pts].map { Double($0.presentedNanoseconds - record.presentedNanoseconds) / 1e6 } }
            .sorted()
        #expect(!lateness.isEmpty && abs(lateness[lateness.count / 2] - 150) < 30, "presented earlier by (ms): median of \(lateness.count)")
    }
}
