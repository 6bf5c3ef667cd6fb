import Testing
@testable import TandemBench

/// The audio bench's reading of the machine: the host's steal time from `/proc/stat`'s text, and
/// underruns gathered into moments, each with the steal time before it.
@Suite struct HostActivityTests {
    private let ms: Int64 = 1_000_000

    @Test func stealIsTheEighthFieldOfTheFirstLine() {
        let stat = "cpu  4705 356 584 3699176 23 23 0 187 0 0\ncpu0 1393 280 234 1849 12 12 0 90 0 0\nintr 1 2 3\n"
        #expect(HostActivityRecorder.stealTicks(stat: stat) == 187)
        #expect(HostActivityRecorder.stealTicks(stat: "cpu0 1 2 3 4 5 6 7 8\n") == nil)
        #expect(HostActivityRecorder.stealTicks(stat: "cpu  1 2 3\n") == nil)
    }

    /// Two outputs a fraction of a millisecond apart are one moment of every output; a third
    /// output alone later is its own; the steal time before each is read between the readings
    /// around the look-back.
    @Test func underrunsTogetherAreOneMomentWithTheStealBeforeIt() {
        let activity = HostActivity(samples: [
            .init(at: 0, stealMilliseconds: 100, load: 2),
            .init(at: 100 * ms, stealMilliseconds: 100, load: 2),
            .init(at: 200 * ms, stealMilliseconds: 160, load: 3),
            .init(at: 300 * ms, stealMilliseconds: 160, load: 3),
            .init(at: 1_000 * ms, stealMilliseconds: 160, load: 4),
            .init(at: 1_100 * ms, stealMilliseconds: 160, load: 4),
        ])
        let moments = activity.underrunMoments(["a": [250 * ms + 300_000, 1_050 * ms], "b": [250 * ms], "c": [250 * ms + 400_000]])
        #expect(moments.count == 2)
        #expect(moments[0].at == 250 * ms)
        #expect(moments[0].outputs == ["a", "b", "c"])
        #expect(moments[0].spread == 400_000)
        #expect(moments[0].everyOutput)
        #expect(moments[0].stealMilliseconds == 60)
        #expect(moments[0].load == 3)
        #expect(moments[1].outputs == ["a"])
        #expect(!moments[1].everyOutput)
        #expect(moments[1].stealMilliseconds == 0)
        #expect(moments[1].load == 4)
    }

    /// An output that never ran dry counts among the outputs: two of three at once is not every output.
    @Test func everyOutputCountsTheOutputsThatNeverRanDry() {
        let activity = HostActivity(samples: [])
        let moments = activity.underrunMoments(["a": [10 * ms], "b": [10 * ms + 100_000], "c": []])
        #expect(moments.count == 1)
        #expect(moments[0].outputs == ["a", "b"])
        #expect(!moments[0].everyOutput)
        #expect(moments[0].stealMilliseconds == nil)
        #expect(activity.loadRange == nil)
    }

    @Test func theRunsStealAndLoad() {
        let activity = HostActivity(samples: [
            .init(at: 0, stealMilliseconds: 10, load: 5), .init(at: 100 * ms, stealMilliseconds: 30, load: 2),
            .init(at: 200 * ms, stealMilliseconds: 35, load: 9),
        ])
        #expect(activity.stealMilliseconds == 25)
        #expect(activity.largestStealMilliseconds == 20)
        #expect(activity.loadRange == 2...9)
        #expect(activity.within(50 * ms, 250 * ms).samples.count == 2)
    }
}
