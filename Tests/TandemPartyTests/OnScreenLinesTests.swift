import Testing
import TandemClock
import TandemParty

/// The lines mpv's screen shows at once (`OnScreenLines`), on virtual time.
@Suite struct OnScreenLinesTests {
    static func at(_ milliseconds: Int64) -> LocalInstant { LocalInstant(nanoseconds: milliseconds * 1_000_000) }

    @Test func aLineIsShownUnderThoseOfTheLastFewSecondsAtMostThree() {
        var lines = OnScreenLines(lifetime: .seconds(5), limit: 3)
        #expect(lines.add("Ben joined", at: Self.at(0)) == ["Ben joined"])
        #expect(lines.add("Ben paused at 0:03", at: Self.at(100)) == ["Ben joined", "Ben paused at 0:03"])
        #expect(lines.add("Ben: hi", at: Self.at(200)) == ["Ben joined", "Ben paused at 0:03", "Ben: hi"])
        #expect(lines.add("Ana: hello", at: Self.at(300)) == ["Ben paused at 0:03", "Ben: hi", "Ana: hello"])
        // 5 s after the first three: only the newest is left, then the new one under it.
        #expect(lines.add("Ana played from 0:03", at: Self.at(5_250)) == ["Ana: hello", "Ana played from 0:03"])
        #expect(lines.add("Ben left", at: Self.at(20_000)) == ["Ben left"])
    }
}
