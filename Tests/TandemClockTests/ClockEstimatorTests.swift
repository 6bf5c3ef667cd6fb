import Testing
import TandemClock

@Suite struct ClockEstimatorTests {
    /// A sample whose legs took `up` and `down` nanoseconds, sent at `time`, with session time
    /// `offset` ahead of local time.
    static func sample(at time: Int64, offset: Int64, up: Int64, down: Int64, turnaround: Int64 = 10_000) -> ClockSample {
        ClockSample(clientSendTime: time, serverReceiveTime: time + up + offset,
                    serverSendTime: time + up + offset + turnaround, clientReceiveTime: time + up + turnaround + down)
    }

    @Test func firstSampleGivesItsOwnOffsetBoundedByHalfTheRoundTrip() throws {
        var estimator = ClockEstimator()
        #expect(estimator.estimate == nil)
        #expect(estimator.add(Self.sample(at: 0, offset: 3_000_000, up: 1_000_000, down: 3_000_000)) == .kept)
        let estimate = try #require(estimator.estimate)
        #expect(estimate.offset == 2_000_000)
        #expect(estimate.errorBound == 2_000_000)
    }

    @Test func delayFarAboveTheRecentMedianIsRejected() throws {
        var estimator = ClockEstimator()
        for index in 0..<20 {
            let jitter = Int64(index % 5) * 20_000
            estimator.add(Self.sample(at: Int64(index) * 100_000_000, offset: 1_000_000, up: 500_000 + jitter, down: 500_000))
        }
        let before = try #require(estimator.estimate)
        // 40 ms up: a queue filled somewhere; its offset would be 20 ms wrong.
        let verdict = estimator.add(Self.sample(at: 2_000_000_000, offset: 1_000_000, up: 40_000_000, down: 500_000))
        #expect(verdict == .rejectedOutlier)
        #expect(estimator.rejectedCount == 1)
        #expect(estimator.keptCount == 20)
        #expect(estimator.estimate == before)
        #expect(abs(before.offset(atLocal: 2_000_000_000) - 1_000_000) < 50_000)
    }

    @Test func lastingChangeOfPathIsEventuallyAccepted() {
        var estimator = ClockEstimator()
        for index in 0..<20 {
            estimator.add(Self.sample(at: Int64(index) * 100_000_000, offset: 0, up: 500_000, down: 500_000))
        }
        var verdicts: [ClockEstimator.Verdict] = []
        for index in 20..<60 {
            verdicts.append(estimator.add(Self.sample(at: Int64(index) * 100_000_000, offset: 0, up: 5_000_000, down: 5_000_000)))
        }
        #expect(verdicts.first == .rejectedOutlier)
        #expect(verdicts.last == .kept)
    }

    @Test func inconsistentSampleIsRejected() {
        var estimator = ClockEstimator()
        let verdict = estimator.add(ClockSample(clientSendTime: 100, serverReceiveTime: 5, serverSendTime: 4, clientReceiveTime: 200))
        #expect(verdict == .rejectedInconsistent)
        #expect(estimator.estimate == nil)
    }

    @Test func fastestForwardAndBackwardTripsCombineAcrossExchanges() throws {
        // No single exchange is fast both ways, but the envelopes find both floors.
        var estimator = ClockEstimator()
        let offset: Int64 = -2_000_000_000
        for index in 0..<40 {
            let slowUp = index % 2 == 0
            estimator.add(Self.sample(at: Int64(index) * 50_000_000, offset: offset,
                                      up: slowUp ? 9_000_000 : 1_000_000, down: slowUp ? 1_000_000 : 9_000_000))
        }
        let estimate = try #require(estimator.estimate)
        #expect(abs(estimate.offset(atLocal: 2_000_000_000) - Double(offset)) < 1_000)
    }

    @Test func driftIsFittedFromACleanPath() throws {
        var estimator = ClockEstimator()
        // Local clock 150 ppm fast: the offset (session − local) falls by 150 ns per ms.
        for index in 0..<200 {
            let time = Int64(index) * 500_000_000
            let offset = 1_000_000_000 - Int64(Double(time) * 150e-6)
            estimator.add(Self.sample(at: time, offset: offset, up: 2_000_000 + Int64(index % 7) * 100_000, down: 2_000_000))
        }
        let estimate = try #require(estimator.estimate)
        #expect(abs(estimate.driftPPM + 150) < 1)
    }

    @Test func weightedLeastSquaresFitAlsoTracksOffsetAndDrift() throws {
        var configuration = ClockEstimator.Configuration()
        configuration.fitMethod = .weightedLeastSquares
        var estimator = ClockEstimator(configuration: configuration)
        for index in 0..<200 {
            let time = Int64(index) * 500_000_000
            let offset = 1_000_000_000 + Int64(Double(time) * 40e-6)
            estimator.add(Self.sample(at: time, offset: offset, up: 2_000_000, down: 2_000_000 + Int64(index % 3) * 50_000))
        }
        let estimate = try #require(estimator.estimate)
        #expect(abs(estimate.driftPPM - 40) < 1)
        #expect(abs(estimate.offset(atLocal: 100_000_000_000) - 1_004_000_000) < 100_000)
    }
}
